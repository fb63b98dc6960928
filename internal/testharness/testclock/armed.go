// Package testclock has a fake clock for tests that must step time exactly when the code under
// test waits on it, without polling: Armed signals each timer armed on it.
package testclock

import (
	"time"

	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

// Armed is a fake clock whose NewTimer signals on Armed, one pending signal at most: a test
// reads Armed, then steps the clock, knowing that a timer waits on it. A signal may be stale
// (its timer stopped or fired since); stepping again is harmless in the tests that use it.
type Armed struct {
	*testingclock.FakeClock
	Armed chan struct{}
}

// NewArmed returns an Armed clock at t.
func NewArmed(t time.Time) *Armed {
	return &Armed{FakeClock: testingclock.NewFakeClock(t), Armed: make(chan struct{}, 1)}
}

// NewTimer is the fake clock's, then a signal on Armed.
func (c *Armed) NewTimer(d time.Duration) clock.Timer {
	t := c.FakeClock.NewTimer(d)
	select {
	case c.Armed <- struct{}{}:
	default:
	}
	return t
}
