package oomwatcher

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// monotonicUptime is CLOCK_MONOTONIC: the kernel log's timestamps count from boot on the
// same clock (local_clock, which also stops in suspend).
func monotonicUptime() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0, fmt.Errorf("clock_gettime(CLOCK_MONOTONIC): %w", err)
	}
	return time.Duration(ts.Nano()), nil
}
