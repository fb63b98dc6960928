package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// epoch is the fixed timestamp of every file and image, so that the same
// inputs give the same digests.
func epoch() time.Time { return time.Unix(0, 0).UTC() }

// tarLayer builds an image layer in memory. Parent directories are added
// automatically (mode 0755). Paths are relative to the image root.
type tarLayer struct {
	buf  bytes.Buffer
	tw   *tar.Writer
	seen map[string]bool
	err  error
}

func newTarLayer() *tarLayer {
	l := &tarLayer{seen: map[string]bool{}}
	l.tw = tar.NewWriter(&l.buf)
	return l
}

func (l *tarLayer) write(hdr *tar.Header, data []byte) {
	if l.err != nil {
		return
	}
	hdr.Name = strings.TrimPrefix(path.Clean("/"+hdr.Name), "/")
	if hdr.Name == "" || l.seen[hdr.Name] {
		return
	}
	if parent := path.Dir(hdr.Name); parent != "." {
		l.dir(parent, 0o755)
	}
	l.seen[hdr.Name] = true
	if hdr.Typeflag == tar.TypeDir {
		hdr.Name += "/"
	}
	hdr.ModTime = epoch()
	hdr.Format = tar.FormatPAX
	if err := l.tw.WriteHeader(hdr); err != nil {
		l.err = fmt.Errorf("writing tar header for %s: %w", hdr.Name, err)
		return
	}
	if _, err := l.tw.Write(data); err != nil {
		l.err = fmt.Errorf("writing tar data for %s: %w", hdr.Name, err)
	}
}

// dir adds a directory with the given permission bits (e.g. 0o1777 for /tmp).
func (l *tarLayer) dir(name string, mode int64) {
	l.write(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode}, nil)
}

// file adds a regular file.
func (l *tarLayer) file(name string, mode int64, data []byte) {
	l.write(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data))}, data)
}

// symlink adds a symbolic link name -> target.
func (l *tarLayer) symlink(name, target string) {
	l.write(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777}, nil)
}

// layer finishes the tar stream and returns it as a gzip-compressed OCI layer.
func (l *tarLayer) layer() (v1.Layer, error) {
	if l.err != nil {
		return nil, l.err
	}
	if err := l.tw.Close(); err != nil {
		return nil, fmt.Errorf("closing tar stream: %w", err)
	}
	data := l.buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return nil, fmt.Errorf("creating layer: %w", err)
	}
	return layer, nil
}

// assemble makes a single-platform OCI image for os/arch from config and
// layers, with fixed timestamps.
func assemble(os, arch string, config v1.Config, layers ...v1.Layer) (v1.Image, error) {
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		OS:           os,
		Architecture: arch,
		Config:       config,
		RootFS:       v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return nil, fmt.Errorf("setting image config: %w", err)
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	adds := make([]mutate.Addendum, 0, len(layers))
	for _, l := range layers {
		adds = append(adds, mutate.Addendum{
			Layer:   l,
			History: v1.History{Created: v1.Time{Time: epoch()}, CreatedBy: "nodelet hack/testimages"},
		})
	}
	if img, err = mutate.Append(img, adds...); err != nil {
		return nil, fmt.Errorf("appending layers: %w", err)
	}
	if img, err = mutate.CreatedAt(img, v1.Time{Time: epoch()}); err != nil {
		return nil, fmt.Errorf("setting creation time: %w", err)
	}
	return img, nil
}
