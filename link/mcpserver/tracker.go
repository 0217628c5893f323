package mcpserver

import (
	"sync"
	"time"
)

// tracker counts the goroutines a session runs besides the connection's
// (tool calls, the bootstrap), so that Serve can wait for them without a
// goroutine of its own.
type tracker struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed when n drops to 0; nil when nobody waits
}

func (t *tracker) add() {
	t.mu.Lock()
	t.n++
	t.mu.Unlock()
}

func (t *tracker) done() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n--
	if t.n == 0 && t.zero != nil {
		close(t.zero)
		t.zero = nil
	}
}

// wait waits until nothing runs, at most d (no bound when d < 0) and
// until stop is closed (nil: never). It reports whether nothing runs.
func (t *tracker) wait(stop <-chan struct{}, d time.Duration) bool {
	t.mu.Lock()
	if t.n == 0 {
		t.mu.Unlock()
		return true
	}
	if t.zero == nil {
		t.zero = make(chan struct{})
	}
	zero := t.zero
	t.mu.Unlock()
	var timeout <-chan time.Time
	if d >= 0 {
		tm := time.NewTimer(d)
		defer tm.Stop()
		timeout = tm.C
	}
	select {
	case <-zero:
		return true
	case <-timeout:
	case <-stop:
	}
	return false
}
