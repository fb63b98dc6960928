package testclock

import (
	"testing"
	"time"
)

func TestArmed(t *testing.T) {
	c := NewArmed(time.Unix(0, 0))
	select {
	case <-c.Armed:
		t.Fatal("armed before any timer")
	default:
	}
	timer := c.NewTimer(time.Second)
	c.NewTimer(time.Minute) // a second signal is dropped while one is pending
	<-c.Armed
	select {
	case <-c.Armed:
		t.Fatal("two pending signals")
	default:
	}
	c.Step(time.Second)
	select {
	case <-timer.C():
	default:
		t.Fatal("the timer did not fire on Step")
	}
}
