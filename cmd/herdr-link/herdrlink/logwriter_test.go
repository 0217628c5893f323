package herdrlink

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// gateWriter blocks every Write until the gate opens (a stderr pipe that
// nobody reads), then keeps what it is given.
type gateWriter struct {
	gate chan struct{}
	mu   sync.Mutex
	buf  bytes.Buffer
}

func (g *gateWriter) Write(p []byte) (int, error) {
	<-g.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.Write(p)
}

func (g *gateWriter) String() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.String()
}

func TestAsyncWriterNeverBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gateWriter{gate: make(chan struct{})}
		const line = "level=INFO msg=held id=hl_0123456789abcdef\n"
		a := newAsyncWriter(g, 10*len(line))
		// The first line is taken by the writer (blocked in w), ten more
		// fill the buffer, the rest are dropped: none of them blocks.
		for i := range 100 {
			a.Write([]byte(line))
			if i == 0 {
				synctest.Wait()
			}
		}
		close(g.gate)
		synctest.Wait()
		a.Write([]byte("after\n"))
		a.Close(time.Second)
		got := g.String()
		if n := strings.Count(got, line); n != 11 {
			t.Errorf("lines written: %d, want 11 (one in the write, ten buffered)", n)
		}
		if want := "herdr-link: 89 log lines dropped (stderr was not read)\n"; !strings.Contains(got, want) {
			t.Errorf("output %q lacks %q", got, want)
		}
		if !strings.HasSuffix(got, "after\n") {
			t.Errorf("output %q: the line written after the drain is missing", got)
		}
	})
}

func TestAsyncWriterCloseIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gateWriter{gate: make(chan struct{})}
		a := newAsyncWriter(g, 1<<10)
		a.Write([]byte("stuck\n"))
		start := time.Now()
		a.Close(200 * time.Millisecond)
		if got, want := time.Since(start), 200*time.Millisecond; got != want {
			t.Errorf("Close with a blocked stderr took %v, want %v", got, want)
		}
		close(g.gate) // the writer ends with the bubble
	})
}

// errWriter fails every Write.
type errWriter struct{ n int }

func (e *errWriter) Write([]byte) (int, error) { e.n++; return 0, fmt.Errorf("broken pipe") }

func TestAsyncWriterStopsAfterAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := &errWriter{}
		a := newAsyncWriter(&dropWriter{w: e}, 1<<10)
		for range 5 {
			a.Write([]byte("x\n"))
			synctest.Wait()
		}
		a.Close(time.Second)
		if e.n != 1 {
			t.Errorf("writes to a broken stderr: %d, want 1", e.n)
		}
	})
}
