//go:build linux

package socket

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The blocking connection on its own: its deadline ends a read waiting in
// the kernel, Close ends a read from another goroutine, and neither
// lets the descriptor be closed under a call.
func TestBlockingConnDeadlineAndClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	buf := make([]byte, 16)

	c, err := dialBlocking(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("x\n")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_ = c.SetDeadline(start.Add(60 * time.Millisecond))
	_, err = c.Read(buf)
	if el := time.Since(start); !errors.Is(err, os.ErrDeadlineExceeded) || !isTimeout(err) || el < 60*time.Millisecond || el > 2*time.Second {
		t.Fatalf("deadline: %v after %v", err, el)
	}
	if _, err := c.Write([]byte("y\n")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write after the deadline: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(buf); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read after Close: %v", err)
	}

	c, err = dialBlocking(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := c.Read(buf); done <- err }()
	time.Sleep(20 * time.Millisecond)
	_ = c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("read cut by Close: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not end a blocked read")
	}
	bc := c
	if !bc.released {
		t.Fatal("the descriptor is still open after Close and the read ended")
	}

	// A deadline already past fails the dial's first call at once.
	ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel()
	if _, err := dialBlocking(ctx, path); err == nil {
		t.Fatal("dial with an expired context succeeded")
	}
}

// threads is the number of OS threads of this process.
func threads(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no Threads line")
	return 0
}

// Many concurrent calls to a Herdr that accepts and never answers: each
// blocking read holds a thread, and past 10,000 threads the runtime ends
// the process (fatal, not an error). The blocking exchanges are bounded;
// the others wait in the poller as net's connections do, and every call
// still ends at its deadline.
func TestExchangeThreadsBoundedWhenHerdrHangs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	const calls = 6 * maxBlocking
	arrived := make(chan struct{}, calls)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() {
				buf := make([]byte, 256)
				if _, err := c.Read(buf); err == nil {
					arrived <- struct{}{}
				}
			}()
		}
	}()
	defer func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	before := threads(t)
	c := &Client{Path: path, Protocol: ProtocolOff, Timeout: 3 * time.Second}
	errs := make(chan error, calls)
	for range calls {
		go func() { _, err := c.Ping(t.Context()); errs <- err }()
	}
	for range calls {
		<-arrived // every request is written: every call waits for its answer
	}
	during := threads(t)
	for range calls {
		if err := <-errs; !errors.Is(err, ErrTimeout) {
			t.Errorf("call to a silent Herdr: got %v, want ErrTimeout", err)
		}
	}
	if got, want := during-before, maxBlocking+32; got > want {
		t.Fatalf("threads added while %d calls wait: got %d, want at most %d", calls, got, want)
	}
}
