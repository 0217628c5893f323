//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package panelock

import (
	"context"
	"path/filepath"
	"sync"
	"time"
)

// On systems without flock, deliveries are serialized within this process
// only.
var (
	mu    sync.Mutex
	locks = map[string]chan struct{}{}
)

// Lease is a held delivery lock (within this process only).
type Lease struct {
	once sync.Once
	ch   chan struct{}
}

// Begin never fails here: no other process can break the lease.
func (le *Lease) Begin(time.Duration) error { return nil }

// Extend does nothing here.
func (le *Lease) Extend(time.Duration) {}

// Unlock releases the lock; more calls do nothing.
func (le *Lease) Unlock() { le.once.Do(func() { <-le.ch }) }

// Lock waits until this process holds the delivery lock of terminalID or
// ctx ends (ctx's error is returned).
func (l *Locker) Lock(ctx context.Context, terminalID string, _ time.Duration) (*Lease, error) {
	key := l.Key(terminalID)
	mu.Lock()
	ch, ok := locks[key]
	if !ok {
		ch = make(chan struct{}, 1)
		locks[key] = ch
	}
	mu.Unlock()
	select {
	case ch <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &Lease{ch: ch}, nil
}

// DirPath returns "": no lock directory is used here.
func (l *Locker) DirPath() (string, error) { return "", nil }

// scopeID identifies the socket at path by its cleaned path.
func scopeID(path string) string { return "path:" + filepath.Clean(path) }
