//go:build !linux

package oomwatcher

import (
	"errors"
	"time"
)

// monotonicUptime: the kernel log (/dev/kmsg) is Linux's.
func monotonicUptime() (time.Duration, error) {
	return 0, errors.New("the kernel log (/dev/kmsg) is Linux only")
}
