package pleg

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/nodelet/nodelet/internal/container"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func status(uid types.UID, ip string) *container.PodStatus {
	s := &container.PodStatus{ID: uid}
	if ip != "" {
		s.IPs = []string{ip}
	}
	return s
}

type result struct {
	status *container.PodStatus
	err    error
}

// getNewerThanAsync runs GetNewerThan in a goroutine (of the caller's synctest bubble).
func getNewerThanAsync(ctx context.Context, c *Cache, uid types.UID, minTime time.Time) <-chan result {
	ch := make(chan result, 1)
	go func() {
		s, err := c.GetNewerThan(ctx, uid, minTime)
		ch <- result{s, err}
	}()
	return ch
}

func requireBlocked(t *testing.T, ch <-chan result) {
	t.Helper()
	synctest.Wait()
	select {
	case r := <-ch:
		t.Fatalf("GetNewerThan returned %+v, want it blocked", r)
	default:
	}
}

func requireResult(t *testing.T, ch <-chan result) result {
	t.Helper()
	synctest.Wait()
	select {
	case r := <-ch:
		return r
	default:
		t.Fatal("GetNewerThan is blocked, want a result")
		return result{}
	}
}

func TestCacheGetSetDelete(t *testing.T) {
	c := NewCache()
	if s, err := c.Get("a"); err != nil || s == nil || s.ID != "a" || len(s.IPs) != 0 {
		t.Fatalf("Get of an unknown pod = %+v, %v; want an empty status with ID", s, err)
	}
	if !c.Set("a", status("a", "10.0.0.1"), nil, t0) {
		t.Fatal("first Set not stored")
	}
	if s, _ := c.Get("a"); s.IPs[0] != "10.0.0.1" {
		t.Fatalf("Get = %+v", s)
	}
	if c.Set("a", status("a", "10.0.0.2"), nil, t0.Add(-time.Second)) {
		t.Error("Set older than the stored entry reported stored")
	}
	if s, _ := c.Get("a"); s.IPs[0] != "10.0.0.1" {
		t.Errorf("older Set replaced the entry: %+v", s)
	}
	if !c.Set("a", status("a", "10.0.0.3"), nil, t0) {
		t.Error("Set at the stored entry's time not stored")
	}
	boom := errors.New("boom")
	if !c.Set("a", nil, boom, t0.Add(time.Second)) {
		t.Error("newer Set not stored")
	}
	if s, err := c.Get("a"); !errors.Is(err, boom) || s == nil || s.ID != "a" {
		t.Errorf("Get after a failed inspection = %+v, %v; want an empty status and the error", s, err)
	}
	c.Delete("a")
	if s, err := c.Get("a"); err != nil || len(s.IPs) != 0 {
		t.Errorf("Get after Delete = %+v, %v", s, err)
	}
}

func TestCacheGetNewerThanReturnsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewCache()
		c.Set("a", status("a", "10.0.0.1"), nil, t0)
		if r := requireResult(t, getNewerThanAsync(t.Context(), c, "a", t0.Add(-time.Nanosecond))); r.status.IPs[0] != "10.0.0.1" {
			t.Errorf("entry newer than minTime: got %+v", r)
		}
		c.UpdateTime(t0.Add(time.Second))
		if r := requireResult(t, getNewerThanAsync(t.Context(), c, "a", t0)); r.status.IPs[0] != "10.0.0.1" {
			t.Errorf("global timestamp newer than minTime: got %+v", r)
		}
		if r := requireResult(t, getNewerThanAsync(t.Context(), c, "b", t0)); r.err != nil || r.status.ID != "b" {
			t.Errorf("unknown pod, global timestamp newer: got %+v, want empty status with ID", r)
		}
	})
}

func TestCacheGetNewerThanBlocksUntilSet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewCache()
		c.Set("a", status("a", "10.0.0.1"), nil, t0)
		ch := getNewerThanAsync(t.Context(), c, "a", t0)
		requireBlocked(t, ch) // equal is not newer

		c.Set("b", status("b", ""), nil, t0.Add(time.Second))
		requireBlocked(t, ch) // another pod
		c.Set("a", status("a", "10.0.0.2"), nil, t0.Add(-time.Second))
		requireBlocked(t, ch) // ignored, older
		c.Set("a", status("a", "10.0.0.3"), nil, t0)
		requireBlocked(t, ch) // stored, but not newer than minTime
		c.UpdateTime(t0)
		requireBlocked(t, ch) // global timestamp not newer than minTime

		c.Set("a", status("a", "10.0.0.4"), nil, t0.Add(time.Second))
		if r := requireResult(t, ch); r.err != nil || r.status.IPs[0] != "10.0.0.4" {
			t.Errorf("got %+v, want the newer entry", r)
		}
		if n := len(c.waiters); n != 0 {
			t.Errorf("%d waiter records left", n)
		}
	})
}

func TestCacheGetNewerThanBlocksUntilUpdateTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewCache()
		c.Set("a", status("a", "10.0.0.1"), errors.New("inspect failed"), t0)
		known := getNewerThanAsync(t.Context(), c, "a", t0)
		unknown := getNewerThanAsync(t.Context(), c, "gone", t0)
		requireBlocked(t, known)
		requireBlocked(t, unknown)

		c.UpdateTime(t0.Add(time.Second))
		if r := requireResult(t, known); r.err == nil || r.status.IPs[0] != "10.0.0.1" {
			t.Errorf("known pod: got %+v, want its entry and error", r)
		}
		if r := requireResult(t, unknown); r.err != nil || r.status == nil || r.status.ID != "gone" {
			t.Errorf("unknown pod: got %+v, want an empty status with ID", r)
		}
		c.UpdateTime(t0) // going back is ignored
		requireBlocked(t, getNewerThanAsync(t.Context(), c, "gone", t0.Add(time.Second)))
		c.UpdateTime(t0.Add(2 * time.Second)) // lets the last one finish before the bubble ends
	})
}

func TestCacheGetNewerThanContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewCache()
		ctx, cancel := context.WithCancel(t.Context())
		ch := getNewerThanAsync(ctx, c, "a", t0)
		other := getNewerThanAsync(t.Context(), c, "a", t0)
		requireBlocked(t, ch)
		cancel()
		if r := requireResult(t, ch); !errors.Is(r.err, context.Canceled) || r.status != nil {
			t.Errorf("got %+v, want nil status and context.Canceled", r)
		}
		requireBlocked(t, other) // the other waiter on the pod is unaffected
		c.Set("a", status("a", ""), nil, t0.Add(time.Second))
		if r := requireResult(t, other); r.err != nil || r.status.ID != "a" {
			t.Errorf("other waiter: got %+v", r)
		}
		if n := len(c.waiters); n != 0 {
			t.Errorf("%d waiter records left", n)
		}

		ctx, cancel = context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		if _, err := c.GetNewerThan(ctx, "a", t0.Add(time.Hour)); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("got %v, want context.DeadlineExceeded", err)
		}
	})
}

func TestCacheWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewCache()
		c.Set("a", status("a", ""), nil, t0)
		select {
		case <-c.Waits():
			t.Fatal("Waits signalled without a waiting call")
		default:
		}
		a1 := getNewerThanAsync(t.Context(), c, "a", t0)
		a2 := getNewerThanAsync(t.Context(), c, "a", t0.Add(time.Second))
		b := getNewerThanAsync(t.Context(), c, "b", t0)
		synctest.Wait()
		select {
		case <-c.Waits():
		default:
			t.Fatal("Waits not signalled")
		}
		want := map[types.UID]time.Time{"a": t0.Add(time.Second), "b": t0}
		if got := c.Waiting(); !reflect.DeepEqual(got, want) {
			t.Errorf("Waiting = %v, want %v", got, want)
		}

		c.Set("a", status("a", ""), nil, t0.Add(time.Second)) // releases a1 only
		requireResult(t, a1)
		requireBlocked(t, a2)
		// a2 was woken by the Set, then went back to waiting: it signals again, or a PLEG that
		// read Waiting while a2 was between the two would leave it to its next tick.
		select {
		case <-c.Waits():
		default:
			t.Error("a call that went back to waiting did not signal Waits again")
		}
		if got := c.Waiting(); !reflect.DeepEqual(got, want) {
			t.Errorf("Waiting = %v, want %v", got, want)
		}
		c.UpdateTime(t0.Add(2 * time.Second))
		requireResult(t, a2)
		requireResult(t, b)
		if got := c.Waiting(); len(got) != 0 {
			t.Errorf("Waiting = %v after all were released", got)
		}
	})
}
