//go:build linux

package socket

import (
	"context"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// dialExchange is the dial of a one-shot exchange (a request line, its
// answer) when the client has no Dial of its own: a blocking connection
// (blockingConn), as the bench's floor relay makes. A read waits in the
// kernel, in the calling thread, instead of parking the goroutine in the
// network poller: an agent.list round trip no longer hands the call from
// one thread to the poller's and back, and the runtime's sysmon thread,
// which falls into its deep sleep whenever every P is idle, is not woken
// again by the read that follows Herdr's answer (a thread in a system
// call keeps its P). herdr-bench's MCP peers route: about a sixth less
// server CPU per call. Subscriptions keep net's connection: they wait
// long, and a thread per blocked read is for short waits only.
//
// Each blocking connection holds a thread while its read waits, and the
// runtime ends the process past 10,000 threads: at most maxBlocking
// exchanges use one at a time; past that (many concurrent calls to a
// Herdr that does not answer) an exchange dials as subscriptions do.
func dialExchange(ctx context.Context, path string) (net.Conn, error) {
	select {
	case blockingSlots <- struct{}{}:
	default:
		return dialUnix(ctx, path)
	}
	c, err := dialBlocking(ctx, path)
	if err != nil {
		<-blockingSlots
		return nil, err
	}
	c.slot = true
	return c, nil
}

// maxBlocking bounds the blocking connections open at once (see
// dialExchange); blockingSlots holds one token per open one.
const maxBlocking = 64

var blockingSlots = make(chan struct{}, maxBlocking)

// dialBlocking connects to the Unix socket at path as net.Dialer does
// (a non-blocking connect: a full backlog fails at once, as it does
// there, with the same errors), then makes the socket blocking, with
// ctx's deadline as the connection's.
func dialBlocking(ctx context.Context, path string) (*blockingConn, error) {
	addr := &net.UnixAddr{Name: path, Net: "unix"}
	opErr := func(call string, err error) error {
		return &net.OpError{Op: "dial", Net: "unix", Addr: addr, Err: os.NewSyscallError(call, err)}
	}
	if err := ctx.Err(); err != nil {
		return nil, &net.OpError{Op: "dial", Net: "unix", Addr: addr, Err: err}
	}
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, opErr("socket", err)
	}
	for {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: path})
		if err != syscall.EINTR {
			break
		}
	}
	if err == nil {
		// Blocking from here on: O_NONBLOCK is the only status flag a
		// new socket has, so one F_SETFL clears it (SetNonblock reads
		// the flags first: a second system call).
		if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFL, 0); errno != 0 {
			err = opErr("fcntl", errno)
		}
	} else {
		err = opErr("connect", err)
	}
	if err != nil {
		_ = syscall.Close(fd)
		return nil, err
	}
	c := &blockingConn{fd: fd, addr: addr}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	return c, nil
}

// blockingConn is a connected Unix stream socket in blocking mode: reads
// and writes are plain system calls in the caller's thread. Its deadline
// is a timer that shuts the socket down when it expires (no socket
// option to set: two system calls fewer per exchange), which ends a
// read or write waiting in the kernel with os.ErrDeadlineExceeded; an
// expired deadline ends the connection for good (an exchange sets one
// deadline). Close shuts the socket down too, which ends a read or write
// blocked in another goroutine; the descriptor itself is closed when no
// call uses it any more, so it is never reused under one.
type blockingConn struct {
	fd   int
	addr *net.UnixAddr
	slot bool // holds a token of blockingSlots until the descriptor is closed

	mu       sync.Mutex
	users    int         // reads and writes in a system call
	closed   bool        // Close was called
	released bool        // the descriptor was closed
	expired  bool        // the deadline passed: the socket is shut down
	deadline time.Time   // as last set; zero: none
	timer    *time.Timer // expires the connection at the deadline
}

// enter reserves the descriptor for one system call. It fails once the
// connection is closed or its deadline passed.
func (c *blockingConn) enter(op string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.endedLocked(op); err != nil {
		return err
	}
	c.users++
	return nil
}

// leave ends a system call; the last one closes a closed connection's
// descriptor.
func (c *blockingConn) leave() {
	c.mu.Lock()
	c.users--
	c.releaseLocked()
	c.mu.Unlock()
}

func (c *blockingConn) releaseLocked() {
	if c.closed && c.users == 0 && !c.released {
		c.released = true
		_ = syscall.Close(c.fd)
		if c.slot {
			<-blockingSlots
		}
	}
}

// ended returns the error of a call that the deadline or Close cut
// short, nil when neither happened.
func (c *blockingConn) ended(op string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.endedLocked(op)
}

func (c *blockingConn) endedLocked(op string) error {
	switch {
	case c.closed:
		return c.opError(op, net.ErrClosed)
	case c.expired:
		return c.opError(op, os.ErrDeadlineExceeded)
	}
	return nil
}

func (c *blockingConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "unix", Addr: c.addr, Err: err}
}

// Read implements net.Conn.
func (c *blockingConn) Read(b []byte) (int, error) {
	if err := c.enter("read"); err != nil {
		return 0, err
	}
	if len(b) == 0 {
		c.leave()
		return 0, nil
	}
	var n int
	var err error
	for {
		n, err = syscall.Read(c.fd, b)
		if err != syscall.EINTR {
			break
		}
	}
	c.leave()
	switch {
	case err != nil:
		if e := c.ended("read"); e != nil {
			return 0, e
		}
		return 0, c.opError("read", os.NewSyscallError("read", err))
	case n == 0:
		if e := c.ended("read"); e != nil {
			return 0, e
		}
		return 0, io.EOF
	}
	return n, nil
}

// Write implements net.Conn.
func (c *blockingConn) Write(b []byte) (int, error) {
	if err := c.enter("write"); err != nil {
		return 0, err
	}
	defer c.leave()
	done := 0
	for done < len(b) {
		n, err := syscall.Write(c.fd, b[done:])
		if n > 0 {
			done += n
		}
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			if e := c.ended("write"); e != nil {
				return done, e
			}
			return done, c.opError("write", os.NewSyscallError("write", err))
		case n == 0:
			return done, c.opError("write", io.ErrUnexpectedEOF)
		}
	}
	return done, nil
}

// Close implements net.Conn. It may be called while a read or write
// waits in another goroutine: that call returns net.ErrClosed.
func (c *blockingConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.opError("close", net.ErrClosed)
	}
	c.closed = true
	if c.timer != nil {
		c.timer.Stop()
	}
	if c.users > 0 && !c.expired {
		_ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
	}
	c.releaseLocked()
	return nil
}

// LocalAddr implements net.Conn: the client's end is unnamed.
func (c *blockingConn) LocalAddr() net.Addr { return &net.UnixAddr{Net: "unix"} }

// RemoteAddr implements net.Conn.
func (c *blockingConn) RemoteAddr() net.Addr { return c.addr }

// SetDeadline implements net.Conn for reads and writes alike. Setting
// the deadline it has is free; once one expired, the connection stays
// ended.
func (c *blockingConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.opError("set", net.ErrClosed)
	}
	if t.Equal(c.deadline) || c.expired {
		return nil
	}
	c.deadline = t
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	switch d := time.Until(t); {
	case t.IsZero():
	case d <= 0:
		c.expireLocked()
	default:
		c.timer = time.AfterFunc(d, c.expire)
	}
	return nil
}

func (c *blockingConn) expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expireLocked()
}

// expireLocked ends the connection at its deadline: a read or write
// waiting in the kernel returns, and later ones fail at once.
func (c *blockingConn) expireLocked() {
	if c.closed || c.expired {
		return
	}
	c.expired = true
	_ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
}

// SetReadDeadline implements net.Conn (as SetDeadline: one deadline).
func (c *blockingConn) SetReadDeadline(t time.Time) error { return c.SetDeadline(t) }

// SetWriteDeadline implements net.Conn (as SetDeadline: one deadline).
func (c *blockingConn) SetWriteDeadline(t time.Time) error { return c.SetDeadline(t) }
