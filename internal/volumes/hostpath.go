package volumes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// setUpHostPath validates a hostPath volume as upstream's hostPathMounter.SetUp: the path must
// not contain "..", and when a type is set the path must be of that type (DirectoryOrCreate and
// FileOrCreate create it when nothing exists there). The host path is returned as written.
func setUpHostPath(vol *v1.Volume) (string, error) {
	path := vol.HostPath.Path
	if slices.Contains(strings.Split(path, "/"), "..") {
		return "", fmt.Errorf("hostPath volume %q: invalid HostPath `%s`: must not contain '..'", vol.Name, path)
	}
	if vol.HostPath.Type == nil || *vol.HostPath.Type == v1.HostPathUnset {
		return path, nil
	}
	if err := checkHostPathType(path, *vol.HostPath.Type); err != nil {
		return "", fmt.Errorf("hostPath volume %q: %w", vol.Name, err)
	}
	return path, nil
}

// checkHostPathType is upstream's checkTypeInternal. Types are read with stat(2), so a symlink
// is judged by its target, as upstream.
func checkHostPathType(path string, want v1.HostPathType) error {
	switch want {
	case v1.HostPathDirectoryOrCreate:
		if !exists(path) {
			return makeDir(path)
		}
		return typeMatches(path, v1.HostPathDirectory, "directory")
	case v1.HostPathDirectory:
		return typeMatches(path, v1.HostPathDirectory, "directory")
	case v1.HostPathFileOrCreate:
		if !exists(path) {
			return makeFile(path)
		}
		return typeMatches(path, v1.HostPathFile, "file")
	case v1.HostPathFile:
		return typeMatches(path, v1.HostPathFile, "file")
	case v1.HostPathSocket:
		return typeMatches(path, v1.HostPathSocket, "socket file")
	case v1.HostPathCharDev:
		return typeMatches(path, v1.HostPathCharDev, "character device")
	case v1.HostPathBlockDev:
		return typeMatches(path, v1.HostPathBlockDev, "block device")
	default:
		return fmt.Errorf("%s is an invalid volume type", want)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// typeMatches returns upstream's messages, e.g.
// "hostPath type check failed: /x is not a directory, it's a File".
func typeMatches(path string, want v1.HostPathType, expected string) error {
	got, err := fileType(path)
	if err != nil {
		return fmt.Errorf("hostPath type check failed, %s is not a %s, unable to determine its type: %w", path, expected, err)
	}
	if got != want {
		return fmt.Errorf("hostPath type check failed: %s is not a %s, it's a %s", path, expected, got)
	}
	return nil
}

var errUnknownFileType = errors.New("only recognise file, directory, socket, block device and character device")

// fileType is upstream's hostutil getFileType.
func fileType(path string) (v1.HostPathType, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("path %q does not exist", path)
	}
	if err != nil {
		return "", err
	}
	mode := fi.Mode()
	switch {
	case mode.IsDir():
		return v1.HostPathDirectory, nil
	case mode.IsRegular():
		return v1.HostPathFile, nil
	case mode&os.ModeSocket != 0:
		return v1.HostPathSocket, nil
	case mode&os.ModeCharDevice != 0:
		return v1.HostPathCharDev, nil
	case mode&os.ModeDevice != 0:
		return v1.HostPathBlockDev, nil
	}
	return "", errUnknownFileType
}

// makeDir is upstream's: MkdirAll with 0755 (under the process umask).
func makeDir(path string) error {
	if err := os.MkdirAll(path, 0755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("hostPath type check failed: creating directory %s: %w", path, err)
	}
	return typeMatches(path, v1.HostPathDirectory, "directory")
}

// makeFile is upstream's: an empty 0644 file; the parent directory must exist (FileOrCreate
// does not create parents, as documented upstream).
func makeFile(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE, 0644)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("hostPath type check failed: creating file %s: %w", path, err)
	}
	if f != nil {
		f.Close()
	}
	return typeMatches(path, v1.HostPathFile, "file")
}
