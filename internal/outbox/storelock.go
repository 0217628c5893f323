package outbox

import "sync"

// storeLock is the store's mutex: a channel, not a sync.Mutex, because the
// store holds it across the short sleeps between tries of the journal's
// flock (another process may hold that), and a goroutine waiting for a
// sync.Mutex is not durably blocked to testing/synctest: one such waiter
// beside the sleeping holder stops a bubble's clock for good, so the
// sleep never ends. A channel send blocks durably. The zero value is
// ready for use.
type storeLock struct {
	once sync.Once
	ch   chan struct{}
}

func (l *storeLock) Lock() {
	l.once.Do(func() { l.ch = make(chan struct{}, 1) })
	l.ch <- struct{}{}
}

func (l *storeLock) Unlock() { <-l.ch }
