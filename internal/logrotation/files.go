package logrotation

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// rotatedFiles lists the paths named <log>.* next to log: its rotated, compressed and temporary
// files. It reads the directory rather than globbing, so that a log path holding glob
// metacharacters is still matched literally.
func rotatedFiles(log string) ([]string, error) {
	dir, base := filepath.Split(log)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list rotated logs of %s: %w", log, err)
	}
	var files []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), base+".") && !e.IsDir() {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	return files, nil
}

// removeFiles deletes files in order; one already gone is not an error.
func removeFiles(files []string) error {
	for _, f := range files {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", f, err)
		}
	}
	return nil
}

// compressFile gzips f into f.gz and removes f. It writes f.tmp, syncs it and renames it to f.gz,
// so a crash leaves either f alone, f with a stale f.tmp, or f with a complete f.gz; the next
// rotation removes the leftovers (splitUnused).
func compressFile(f string) (err error) {
	in, err := os.Open(f)
	if err != nil {
		return fmt.Errorf("open %s: %w", f, err)
	}
	defer func() { _ = in.Close() }()
	info, err := in.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", f, err)
	}
	tmp := f + tmpSuffix
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, info.Mode().Perm())
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	defer func() {
		if err != nil {
			_ = out.Close()
			_ = os.Remove(tmp) // best effort; the next rotation removes it otherwise
		}
	}()
	zw := gzip.NewWriter(out)
	if _, err := io.Copy(zw, in); err != nil {
		return fmt.Errorf("compress %s into %s: %w", f, tmp, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("compress %s into %s: %w", f, tmp, err)
	}
	if err := out.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, f+compressSuffix); err != nil {
		return fmt.Errorf("rename %s to %s: %w", tmp, f+compressSuffix, err)
	}
	if err := os.Remove(f); err != nil {
		return fmt.Errorf("remove %s after compressing it: %w", f, err)
	}
	return nil
}
