//go:build linux

package containergc

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// listShims finds the containerd shims among the processes under procRoot (/proc).
func listShims(procRoot string) ([]Shim, error) {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var out []Shim
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue // gone, or a kernel thread
		}
		args := strings.Split(string(bytes.TrimRight(cmdline, "\x00")), "\x00")
		if !strings.HasPrefix(filepath.Base(args[0]), "containerd-shim") {
			continue
		}
		fi, err := os.Stat(filepath.Join(procRoot, e.Name()))
		if err != nil {
			continue
		}
		s := Shim{PID: pid, Started: fi.ModTime()}
		for i := 1; i+1 < len(args); i++ {
			switch args[i] {
			case "-namespace":
				s.Namespace = args[i+1]
			case "-id":
				s.ID = args[i+1]
			case "-address":
				s.Address = args[i+1]
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// children lists the processes whose parent is pid.
func children(procRoot string, pid int) []int {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after the last ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// stopShim kills the processes the shim started, then the shim.
func stopShim(procRoot string, s Shim) error {
	var errs []error
	for _, c := range children(procRoot, s.PID) {
		if err := syscall.Kill(c, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("kill process %d of shim %d: %w", c, s.PID, err))
		}
	}
	if err := syscall.Kill(s.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, fmt.Errorf("kill shim %d: %w", s.PID, err))
	}
	return errors.Join(errs...)
}
