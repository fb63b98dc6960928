package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

const (
	// settleIdle is the share of the machine's CPU time that must be idle over a settleStep,
	// settleSteps steps in a row, before a run starts.
	settleIdle  = 0.85
	settleStep  = time.Second
	settleSteps = 2
	// settleLimit bounds the wait; a run then starts anyway, and the report says so.
	settleLimit = 2 * time.Minute
)

// cpuTimes are the "cpu" line of /proc/stat: all CPU time and the idle part (idle + iowait),
// in ticks.
type cpuTimes struct{ total, idle uint64 }

func parseCPUTimes(stat string) (cpuTimes, error) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return cpuTimes{}, fmt.Errorf("unexpected first line of /proc/stat: %q", line)
	}
	var t cpuTimes
	for i, s := range f[1:] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return cpuTimes{}, fmt.Errorf("/proc/stat field %d: %w", i+1, err)
		}
		if i < 8 { // user nice system idle iowait irq softirq steal; guest time is in user already
			t.total += v
		}
		if i == 3 || i == 4 {
			t.idle += v
		}
	}
	return t, nil
}

func readCPUTimes() (cpuTimes, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}, err
	}
	return parseCPUTimes(string(b))
}

// idleShare is the idle share of the CPU time between two readings.
func idleShare(a, b cpuTimes) float64 {
	if b.total <= a.total {
		return 1
	}
	return float64(b.idle-a.idle) / float64(b.total-a.total)
}

// settle waits until the machine is idle (settleIdle of its CPU time over settleSteps steps in
// a row), at most settleLimit: after a teardown, containerd goes on removing snapshots and
// content in the background for seconds, and a run starting meanwhile would pay for its
// predecessor's clean-up. It returns how long it waited, and whether the machine settled.
func settle(ctx context.Context) (time.Duration, bool, error) {
	start := time.Now()
	prev, err := readCPUTimes()
	if err != nil {
		return 0, false, err
	}
	calm := 0
	for time.Since(start) < settleLimit {
		select {
		case <-ctx.Done():
			return time.Since(start), false, context.Cause(ctx)
		case <-time.After(settleStep):
		}
		cur, err := readCPUTimes()
		if err != nil {
			return 0, false, err
		}
		if idleShare(prev, cur) >= settleIdle {
			calm++
		} else {
			calm = 0
		}
		prev = cur
		if calm >= settleSteps {
			return time.Since(start), true, nil
		}
	}
	return time.Since(start), false, nil
}
