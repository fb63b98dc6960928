//go:build !linux

package containergc

import "errors"

func listShims(string) ([]Shim, error) { return nil, errors.New("shims are found on Linux only") }

func stopShim(string, Shim) error { return errors.New("shims are stopped on Linux only") }
