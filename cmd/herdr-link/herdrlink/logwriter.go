package herdrlink

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// logBuffer bounds the log lines waiting for stderr: 256 KiB, a few
// thousand lines.
const logBuffer = 256 << 10

// logFlushWait bounds how long a server that ends waits for its last log
// lines to reach stderr.
const logFlushWait = 200 * time.Millisecond

// asyncWriter hands each Write (one log line) to a goroutine that writes
// it to w, so that a log line never blocks its caller: a host that does
// not read the server's stderr fills the pipe, and the server goes on
// serving. Lines that do not fit in the buffer (max bytes) are dropped
// and counted; once w takes lines again, a line says how many were
// dropped. (The server's w is a dropWriter: after a failed write,
// everything is dropped.)
type asyncWriter struct {
	w   io.Writer
	max int

	mu      sync.Mutex
	queue   [][]byte
	size    int
	dropped int
	closed  bool
	wake    chan struct{}
	done    chan struct{}
}

func newAsyncWriter(w io.Writer, max int) *asyncWriter {
	a := &asyncWriter{w: w, max: max, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go a.run()
	return a
}

// Write queues a copy of p; it never blocks on w and never fails.
func (a *asyncWriter) Write(p []byte) (int, error) {
	a.mu.Lock()
	if a.closed || a.size+len(p) > a.max {
		a.dropped++
		a.mu.Unlock()
		return len(p), nil
	}
	a.queue = append(a.queue, append([]byte(nil), p...))
	a.size += len(p)
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (a *asyncWriter) run() {
	defer close(a.done)
	for {
		a.mu.Lock()
		q, dropped, closed := a.queue, a.dropped, a.closed
		a.queue, a.size, a.dropped = nil, 0, 0
		a.mu.Unlock()
		for _, p := range q {
			_, _ = a.w.Write(p)
		}
		if dropped > 0 {
			fmt.Fprintf(a.w, "herdr-link: %d log lines dropped (stderr was not read)\n", dropped)
		}
		if closed && len(q) == 0 && dropped == 0 {
			return
		}
		if len(q) == 0 && dropped == 0 {
			<-a.wake
		}
	}
}

// Close drops what is written from now on and waits, up to wait, for
// the queued lines to reach w.
func (a *asyncWriter) Close(wait time.Duration) {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-a.done:
	case <-t.C:
	}
}
