//go:build linux

package socket_test

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/socket"
)

// silentServer accepts connections on a real socket and never answers;
// got receives each request line's first bytes as they arrive.
func silentServer(t *testing.T) (path string, got chan struct{}) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	got = make(chan struct{}, 16)
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
			go func() {
				buf := make([]byte, 64)
				if _, err := c.Read(buf); err == nil {
					got <- struct{}{}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return path, got
}

// The one-shot exchange's blocking connection keeps every bound of the
// poller's: the client's timeout, the caller's deadline and cancellation,
// each while the read waits in the kernel.
func TestExchangeBoundsOnARealSocket(t *testing.T) {
	path, got := silentServer(t)
	c := &socket.Client{Path: path, Protocol: socket.ProtocolOff, Timeout: 150 * time.Millisecond}
	start := time.Now()
	_, err := c.Ping(t.Context())
	if el := time.Since(start); !errors.Is(err, socket.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, socket.ErrAfterWrite) || el < 150*time.Millisecond || el > 2*time.Second {
		t.Fatalf("timeout: %v after %v", err, el)
	}
	<-got

	ctx, cancel := context.WithTimeout(t.Context(), 80*time.Millisecond)
	defer cancel()
	c.Timeout = time.Minute
	start = time.Now()
	_, err = c.Ping(ctx)
	if el := time.Since(start); !errors.Is(err, socket.ErrTimeout) || el < 80*time.Millisecond || el > 2*time.Second {
		t.Fatalf("caller's deadline: %v after %v", err, el)
	}
	<-got

	ctx2, cancel2 := context.WithCancel(t.Context())
	go func() { <-got; time.Sleep(20 * time.Millisecond); cancel2() }()
	start = time.Now()
	_, err = c.Ping(ctx2)
	if el := time.Since(start); !errors.Is(err, context.Canceled) || el > 2*time.Second {
		t.Fatalf("cancel: %v after %v", err, el)
	}
}

// Nothing listens: the same errors as net's dialer gives.
func TestExchangeDialErrors(t *testing.T) {
	dir := t.TempDir()
	c := &socket.Client{Path: filepath.Join(dir, "none.sock"), Protocol: socket.ProtocolOff}
	_, err := c.Ping(t.Context())
	var ue *socket.UnavailableError
	if !errors.As(err, &ue) {
		t.Fatalf("no socket: %v", err)
	}
	// A socket file nobody listens on is refused.
	ln, err := net.Listen("unix", filepath.Join(dir, "gone.sock"))
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	c.Path = filepath.Join(dir, "gone.sock")
	if _, err := c.Ping(t.Context()); !errors.As(err, &ue) {
		t.Fatalf("refused: %v", err)
	}
}
