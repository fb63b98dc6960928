package logrotation

import "sync"

// keyedMutex serialises work on one container (a rotation, a Clean) while letting different
// containers proceed in parallel. The zero value is ready to use.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*refLock
}

// refLock is a lock held by sending into sem (capacity one); refs counts holders and waiters,
// and the entry is dropped when it reaches zero.
type refLock struct {
	sem  chan struct{}
	refs int
}

// lock locks key and returns the function that unlocks it.
func (k *keyedMutex) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*refLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &refLock{sem: make(chan struct{}, 1)}
		k.locks[key] = l
	}
	l.refs++
	k.mu.Unlock()

	l.sem <- struct{}{}
	return func() {
		<-l.sem
		k.mu.Lock()
		defer k.mu.Unlock()
		if l.refs--; l.refs == 0 {
			delete(k.locks, key)
		}
	}
}
