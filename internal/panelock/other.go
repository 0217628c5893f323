//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package panelock

import (
	"context"
	"path/filepath"
	"sync"
	"time"
)

// On systems without flock, deliveries are serialized within this process
// only, by the Locker's own table: herdr-link has one Locker per process.
type localLocks struct {
	mu    sync.Mutex
	locks map[string]chan struct{}
}

// dirCache is empty: no lock directory is used here.
//
//lint:ignore U1000 used on systems with flock (dir_unix.go)
type dirCache struct{}

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
	l.local.mu.Lock()
	if l.local.locks == nil {
		l.local.locks = map[string]chan struct{}{}
	}
	ch, ok := l.local.locks[key]
	if !ok {
		ch = make(chan struct{}, 1)
		l.local.locks[key] = ch
	}
	l.local.mu.Unlock()
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
