package volumes

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"k8s.io/apimachinery/pkg/types"
)

// MaxContainerTerminationMessageLength is upstream's bound on what is read of one container's
// termination message file: its last 4096 bytes. The per-pod bound (12 KiB shared evenly by
// the pod's containers, upstream's MaxPodTerminationMessageLogLength) needs every container's
// status, so it is applied where the pod status is built (internal/status), not here.
const MaxContainerTerminationMessageLength = 4 * 1024

// terminationFilePerm lets any container user write its message (upstream: 0666).
const terminationFilePerm os.FileMode = 0666

func (m *Manager) containerDir(uid types.UID, container string) string {
	return filepath.Join(m.podDir(uid), "containers", container)
}

// TerminationMessagePath is the host file mounted at a container instance's
// terminationMessagePath: <root>/pods/<uid>/containers/<name>/<restartCount as 8 hex digits>.
// Upstream names it with 8 random hex digits and finds it again through the mounts in the CRI
// container status; nodelet derives the name from (pod, container, restartCount) so that a
// restarted nodelet finds the file from the container's labels and annotations alone.
func (m *Manager) TerminationMessagePath(podUID types.UID, container string, restartCount int) string {
	return filepath.Join(m.containerDir(podUID, container), terminationFileName(restartCount))
}

func terminationFileName(restartCount int) string {
	return fmt.Sprintf("%08x", uint32(restartCount))
}

// createTerminationFile creates (or empties, should a restart count be reused) the instance's
// termination message file with mode 0666, and removes the files of instances older than the
// previous one, which nothing reads any more.
func (m *Manager) createTerminationFile(uid types.UID, container string, restartCount int) (string, error) {
	dir := m.containerDir(uid, container)
	if err := os.MkdirAll(dir, podDirPerm); err != nil {
		return "", fmt.Errorf("creating container directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, terminationFileName(restartCount))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, terminationFilePerm)
	if err != nil {
		return "", fmt.Errorf("creating termination message file: %w", err)
	}
	err = f.Chmod(terminationFilePerm) // whatever the umask
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("creating termination message file %s: %w", path, err)
	}
	pruneTerminationFiles(dir, restartCount)
	return path, nil
}

func pruneTerminationFiles(dir string, restartCount int) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		n, err := strconv.ParseUint(e.Name(), 16, 32)
		if err != nil || len(e.Name()) != 8 || !e.Type().IsRegular() {
			continue
		}
		if int64(n) < int64(restartCount)-1 {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// ReadTerminationMessage returns the last MaxContainerTerminationMessageLength bytes of the
// termination message file of the container instance (pod, container, restartCount), as
// upstream's getTerminationMessage. A missing file is ("", an error matching fs.ErrNotExist).
// Any other failure returns upstream's message "Error on reading termination log <path>: <err>"
// together with the error, so a caller that shows the message shows what upstream shows.
func (m *Manager) ReadTerminationMessage(podUID types.UID, container string, restartCount int) (string, error) {
	if err := checkName("pod UID", string(podUID)); err != nil {
		return "", err
	}
	if err := checkName("container name", container); err != nil {
		return "", err
	}
	path := m.TerminationMessagePath(podUID, container, restartCount)
	data, err := readTail(path, MaxContainerTerminationMessageLength)
	if errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err != nil {
		return fmt.Sprintf("Error on reading termination log %s: %v", path, err), err
	}
	return string(data), nil
}

// readTail is upstream's tail.ReadAtMost: the last limit bytes of a regular file. It does not
// follow a symlink: a container cannot make nodelet read another host file.
func readTail(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	size := fi.Size()
	if size == 0 {
		return nil, nil
	}
	off := max(size-limit, 0)
	return io.ReadAll(io.NewSectionReader(f, off, size-off))
}
