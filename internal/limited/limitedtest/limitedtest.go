// Package limitedtest gives tests of bounded readers an input that never
// ends on its own: a named pipe fed until its reader lets go.
package limitedtest

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// Feed is an endless input file: Path is a named pipe that takes Prefix,
// then zeros until the reader closes it or Cap bytes went through.
type Feed struct {
	Path    string
	written atomic.Int64
	done    chan struct{}
}

// Written is how many bytes the reader took (or the pipe buffered: up to
// one pipe buffer, 64 KiB on Linux, more than the reader read).
func (f *Feed) Written() int64 { return f.written.Load() }

// Wait waits until the feeder has stopped (the reader closed its end, or
// Cap was reached) and returns Written.
func (f *Feed) Wait() int64 { <-f.done; return f.Written() }

// Endless makes a Feed in a temporary directory. The feeder stops when
// the test ends, whether or not the file was opened.
func Endless(t testing.TB, prefix string, cap int64) *Feed {
	t.Helper()
	path := filepath.Join(t.TempDir(), "endless")
	if err := mkfifo(path); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	f := &Feed{Path: path, done: make(chan struct{})}
	go f.feed(prefix, cap)
	t.Cleanup(func() {
		// Unblock a feeder whose open still waits for a reader.
		unblock(path)
		<-f.done
	})
	return f
}

func (f *Feed) feed(prefix string, cap int64) {
	defer close(f.done)
	w, err := os.OpenFile(f.Path, os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer w.Close()
	n, err := w.Write([]byte(prefix))
	f.written.Add(int64(n))
	if err != nil {
		return
	}
	buf := make([]byte, 64<<10)
	for f.written.Load() < cap {
		n, err := w.Write(buf[:min(int64(len(buf)), cap-f.written.Load())])
		f.written.Add(int64(n))
		if err != nil {
			return // EPIPE: the reader let go
		}
	}
}
