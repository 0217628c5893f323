//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package panelock

import (
	"context"
	"os"
	"path/filepath"
	"sync"
)

// On systems without flock, deliveries are serialized within this process
// only.
var (
	mu    sync.Mutex
	locks = map[string]chan struct{}{}
)

// Lock waits until this process holds the delivery lock of terminalID or
// ctx ends (ctx's error is returned). The returned function releases it.
func (l *Locker) Lock(ctx context.Context, terminalID string) (func(), error) {
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
