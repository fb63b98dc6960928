package podconfig

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// FileConfig configures the manifest file source.
type FileConfig struct {
	// Path is a directory of manifests (not recursed into) or one manifest file.
	Path     string
	NodeName string
	// Period is the re-read interval (fileCheckFrequency, 20 s upstream); fsnotify events make
	// changes visible sooner.
	Period   time.Duration
	Clock    clock.WithTicker
	Sink     Sink
	Reporter Reporter
}

// fileEntry caches what one file yielded, keyed by a fingerprint of its metadata, so a file is
// parsed, and a bad one reported, once per change rather than on every re-read.
type fileEntry struct {
	fp   string
	pods []*v1.Pod
}

type fileSource struct {
	cfg     FileConfig
	entries map[string]fileEntry
	dups    map[string]string // path → duplicate-name reason last reported
	owners  map[string]string // full name → the path that defined it at the last listing
	skipped map[string]bool   // names skipManifest skipped at the last listing (logged once)
}

// RunFileSource watches cfg.Path until ctx ends. A missing path is an empty source (and
// reported); it is picked up when it appears.
func RunFileSource(ctx context.Context, cfg FileConfig) error {
	if cfg.Path == "" || cfg.Sink == nil || cfg.Reporter == nil || cfg.Clock == nil || cfg.Period <= 0 {
		return errors.New("file source: Path, Sink, Reporter, Clock and a positive Period are required")
	}
	cfg.Path = strings.TrimRight(cfg.Path, string(os.PathSeparator))
	s := &fileSource{cfg: cfg, entries: map[string]fileEntry{}, dups: map[string]string{}}
	watcher, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("file source %s: create watcher: %w", cfg.Path, err)
	}
	defer watcher.Close()
	watching := false
	ticker := cfg.Clock.NewTicker(cfg.Period)
	defer ticker.Stop()
	for {
		if !watching {
			// Watch the directory itself; for a single file watch its directory so that atomic
			// saves (write elsewhere, rename over) are seen.
			dir := cfg.Path
			if st, err := os.Stat(cfg.Path); err == nil && !st.IsDir() {
				dir = filepath.Dir(cfg.Path)
			}
			if err := watcher.Add(dir); err == nil {
				watching = true
			} else {
				klog.V(2).InfoS("Cannot watch manifest path yet; re-reading periodically", "path", dir, "err", err)
			}
		}
		if err := cfg.Sink.Send(ctx, FileSource, s.list()); err != nil {
			return nil //nolint:nilerr // ctx ended
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
		case ev, ok := <-watcher.Events:
			if !ok {
				return nil
			}
			klog.V(4).InfoS("Manifest path changed", "path", ev.Name, "op", ev.Op.String())
			if ev.Name == cfg.Path && ev.Has(fsnotify.Remove|fsnotify.Rename) {
				_ = watcher.Remove(ev.Name)
				watching = false
			}
			drain(watcher.Events)
		case err, ok := <-watcher.Errors:
			if !ok {
				return nil
			}
			klog.ErrorS(err, "Manifest watch failed; re-reading every period", "path", cfg.Path)
		}
	}
}

// drain takes the events already queued: one re-read covers them all.
func drain(ch <-chan fsnotify.Event) {
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		default:
			return
		}
	}
}

// list reads the path and returns the pods of every valid manifest, in file-name order. When
// two files define the same pod name, the file that defined it before keeps it (so a new file
// never displaces a running pod); among new names the first file in name order wins.
func (s *fileSource) list() []*v1.Pod {
	paths, err := s.paths()
	if err != nil {
		if fp := "err:" + err.Error(); s.entries[s.cfg.Path].fp != fp {
			s.note(s.cfg.Path, fp, nil, []error{err})
		}
		return []*v1.Pod{}
	}
	s.forgetExcept(paths)
	perPath := make(map[string][]*v1.Pod, len(paths))
	for _, p := range paths {
		perPath[p] = s.read(p)
	}
	owner := map[string]string{} // full name → path
	for name, p := range s.owners {
		for _, pod := range perPath[p] {
			if FullName(pod) == name {
				owner[name] = p
			}
		}
	}
	for _, p := range paths {
		for _, pod := range perPath[p] {
			if _, taken := owner[FullName(pod)]; !taken {
				owner[FullName(pod)] = p
			}
		}
	}
	pods := []*v1.Pod{}
	for _, p := range paths {
		dup := false
		for _, pod := range perPath[p] {
			name := FullName(pod)
			if first := owner[name]; first != p {
				s.reportDup(p, fmt.Errorf("metadata.name: Duplicate value: pod %q is already defined in %s; this file is ignored", name, first))
				dup = true
				continue
			}
			pods = append(pods, pod)
		}
		if !dup {
			delete(s.dups, p)
		}
	}
	s.owners = owner
	klog.V(4).InfoS("Manifest path read", "path", s.cfg.Path, "files", len(paths), "pods", len(pods))
	return pods
}

// paths lists the manifest files: the path itself, or the entries of the directory that
// skipManifest does not skip.
func (s *fileSource) paths() ([]string, error) {
	st, err := os.Stat(s.cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("read manifest path: %w", err)
	}
	if !st.IsDir() {
		return []string{s.cfg.Path}, nil
	}
	ents, err := os.ReadDir(s.cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("read manifest directory: %w", err)
	}
	var out []string
	skipped := map[string]bool{}
	for _, e := range ents {
		if reason, skip := skipManifest(e.Name()); skip {
			if !s.skipped[e.Name()] {
				klog.V(2).InfoS("Not reading a file of the manifest directory", "path", filepath.Join(s.cfg.Path, e.Name()), "reason", reason)
			}
			skipped[e.Name()] = true
			continue
		}
		out = append(out, filepath.Join(s.cfg.Path, e.Name()))
	}
	s.skipped = skipped
	sort.Strings(out)
	return out, nil
}

// read returns the pods of one file, reading and parsing it only when its fingerprint changed
// (a directory of N manifests is listed on every change of one of them: reading them all each
// time made a burst of N new files cost N² reads).
func (s *fileSource) read(path string) []*v1.Pod {
	fp, data, err := readManifest(path, func(fp string) bool {
		e, ok := s.entries[path]
		return ok && e.fp == fp
	})
	if e, ok := s.entries[path]; ok && e.fp == fp {
		return e.pods
	}
	if err != nil {
		s.note(path, fp, nil, []error{err})
		return nil
	}
	parsed := ParseManifest(data, path, true, s.cfg.NodeName)
	s.note(path, fp, parsed.Pods, parsed.Errs)
	return parsed.Pods
}

func (s *fileSource) note(path, fp string, pods []*v1.Pod, errs []error) {
	_, known := s.entries[path]
	s.entries[path] = fileEntry{fp: fp, pods: pods}
	for _, err := range errs {
		s.cfg.Reporter.Report(FileSource, path, err)
	}
	if len(errs) == 0 && known {
		klog.V(2).InfoS("Manifest read", "path", path, "pods", len(pods))
	}
}

func (s *fileSource) reportDup(path string, err error) {
	if s.dups[path] == err.Error() {
		return
	}
	s.dups[path] = err.Error()
	s.cfg.Reporter.Report(FileSource, path, err)
}

func (s *fileSource) forgetExcept(paths []string) {
	keep := map[string]bool{s.cfg.Path: true}
	for _, p := range paths {
		keep[p] = true
	}
	for p := range s.entries {
		if !keep[p] {
			delete(s.entries, p)
			delete(s.dups, p)
		}
	}
}

// readManifest stats and reads a manifest. The fingerprint changes whenever the file does
// (inode, size, modification and change times), or names the error that prevented reading it.
// A file whose fingerprint is known (known returns true) is not read, and neither are files
// over MaxManifestBytes.
func readManifest(path string, known func(fp string) bool) (fp string, data []byte, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return "err:" + err.Error(), nil, fmt.Errorf("stat manifest: %w", err)
	}
	fp = fingerprint(st)
	if known(fp) {
		return fp, nil, nil
	}
	switch {
	case st.IsDir():
		return fp, nil, errors.New("is a directory; manifest directories are not recursed into")
	case !st.Mode().IsRegular():
		return fp, nil, fmt.Errorf("not a regular file (mode %s)", st.Mode())
	case st.Size() > MaxManifestBytes:
		return fp, nil, fmt.Errorf("file is %d bytes, larger than the %d bytes a manifest may have", st.Size(), MaxManifestBytes)
	}
	f, err := os.Open(path)
	if err != nil {
		return fp, nil, fmt.Errorf("open manifest: %w", err)
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, MaxManifestBytes+1))
	if err != nil {
		return fp, nil, fmt.Errorf("read manifest: %w", err)
	}
	return fp, data, nil
}

func fingerprint(st os.FileInfo) string {
	fp := fmt.Sprintf("%d:%d:%s", st.Size(), st.ModTime().UnixNano(), st.Mode())
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		fp += fmt.Sprintf(":%d:%d:%d.%d", sys.Dev, sys.Ino, sys.Ctim.Sec, sys.Ctim.Nsec)
	}
	return fp
}
