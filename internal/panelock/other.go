//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package panelock

import (
	"context"
	"os"
	"path/filepath"
	"sync"
)

// On systems without flock, deliveries are serialized within this process
// only, by the Locker's own table: herdr-link has one Locker per process.
type localLocks struct {
	mu    sync.Mutex
	locks map[string]chan struct{}
}

// Lock waits until this process holds the delivery lock of terminalID or
// ctx ends (ctx's error is returned). The returned function releases it.
func (l *Locker) Lock(ctx context.Context, terminalID string) (func(), error) {
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
	var once sync.Once
	return func() { once.Do(func() { <-ch }) }, nil
}

// ownedDir reports whether dir is a directory (ownership is not checked
// here).
func ownedDir(dir string) bool {
	st, err := os.Stat(dir)
	return err == nil && st.IsDir()
}

// scopeID identifies the socket at path by its cleaned path.
func scopeID(path string) string { return "path:" + filepath.Clean(path) }
