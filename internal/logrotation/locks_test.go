package logrotation

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
)

func TestKeyedMutex(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var k keyedMutex
		unlockA := k.lock("a")
		unlockB := k.lock("b") // another key does not wait

		var acquired atomic.Bool
		done := make(chan struct{})
		go func() {
			defer close(done)
			unlock := k.lock("a")
			acquired.Store(true)
			unlock()
		}()
		synctest.Wait()
		if acquired.Load() {
			t.Fatal("a second lock of a key was acquired while the first was held")
		}
		unlockA()
		<-done
		if !acquired.Load() {
			t.Fatal("the waiting lock was not acquired after unlock")
		}
		unlockB()
		if n := len(k.locks); n != 0 {
			t.Errorf("%d keys left after every unlock, want 0", n)
		}
	})
}
