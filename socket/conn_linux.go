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
func dialExchange(ctx context.Context, path string) (net.Conn, error) {
	return dialBlocking(ctx, path)
}

// dialBlocking connects to the Unix socket at path as net.Dialer does
// (a non-blocking connect: a full backlog fails at once, as it does
// there, with the same errors), then makes the socket blocking, with the
// time left before ctx's deadline as its send and receive timeouts.
func dialBlocking(ctx context.Context, path string) (net.Conn, error) {
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
		err = syscall.SetNonblock(fd, false)
		if err != nil {
			err = opErr("fcntl", err)
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
		if err := c.SetDeadline(dl); err != nil {
			_ = c.Close()
			return nil, &net.OpError{Op: "dial", Net: "unix", Addr: addr, Err: err}
		}
	}
	return c, nil
}

// blockingConn is a connected Unix stream socket in blocking mode: reads
// and writes are plain system calls in the caller's thread. Its deadline
// is the socket's receive and send timeout (each read or write waits at
// most the time that was left when it was set; the exchange's context,
// whose deadline it is, closes the connection when it expires). Close
// shuts the socket down first, which ends a read or write blocked in
// another goroutine; the descriptor itself is closed when no call uses
// it any more, so it is never reused under one.
type blockingConn struct {
	fd   int
	addr *net.UnixAddr

	mu       sync.Mutex
	users    int       // reads and writes in a system call
	closed   bool      // Close was called
	released bool      // the descriptor was closed
	deadline time.Time // as last set; zero: none
}

// enter reserves the descriptor for one system call; false once closed.
func (c *blockingConn) enter() (expired bool, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false, false
	}
	c.users++
	return !c.deadline.IsZero() && !time.Now().Before(c.deadline), true
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
	}
}

func (c *blockingConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "unix", Addr: c.addr, Err: err}
}

// Read implements net.Conn.
func (c *blockingConn) Read(b []byte) (int, error) {
	expired, ok := c.enter()
	if !ok {
		return 0, c.opError("read", net.ErrClosed)
	}
	if expired {
		c.leave()
		return 0, c.opError("read", os.ErrDeadlineExceeded)
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
	case err == syscall.EAGAIN:
		return 0, c.opError("read", os.ErrDeadlineExceeded)
	case err != nil:
		if c.isClosed() {
			return 0, c.opError("read", net.ErrClosed)
		}
		return 0, c.opError("read", os.NewSyscallError("read", err))
	case n == 0:
		if c.isClosed() {
			return 0, c.opError("read", net.ErrClosed)
		}
		return 0, io.EOF
	}
	return n, nil
}

// Write implements net.Conn.
func (c *blockingConn) Write(b []byte) (int, error) {
	expired, ok := c.enter()
	if !ok {
		return 0, c.opError("write", net.ErrClosed)
	}
	defer c.leave()
	if expired {
		return 0, c.opError("write", os.ErrDeadlineExceeded)
	}
	done := 0
	for done < len(b) {
		n, err := syscall.Write(c.fd, b[done:])
		if n > 0 {
			done += n
		}
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return done, c.opError("write", os.ErrDeadlineExceeded)
		case err != nil:
			if c.isClosed() {
				return done, c.opError("write", net.ErrClosed)
			}
			return done, c.opError("write", os.NewSyscallError("write", err))
		case n == 0:
			return done, c.opError("write", io.ErrUnexpectedEOF)
		}
	}
	return done, nil
}

func (c *blockingConn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
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
	if c.users > 0 {
		_ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
	}
	c.releaseLocked()
	return nil
}

// LocalAddr implements net.Conn: the client's end is unnamed.
func (c *blockingConn) LocalAddr() net.Addr { return &net.UnixAddr{Net: "unix"} }

// RemoteAddr implements net.Conn.
func (c *blockingConn) RemoteAddr() net.Addr { return c.addr }

// SetDeadline implements net.Conn: the time left becomes the socket's
// receive and send timeout. Setting the deadline it has is free.
func (c *blockingConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.opError("set", net.ErrClosed)
	}
	if t.Equal(c.deadline) {
		return nil
	}
	c.deadline = t
	var tv syscall.Timeval
	if !t.IsZero() {
		// A timeout of zero would mean none: an expired deadline is
		// checked before each call instead, so any positive value does.
		tv = syscall.NsecToTimeval(max(time.Until(t), time.Microsecond).Nanoseconds())
	}
	for _, opt := range [...]int{syscall.SO_RCVTIMEO, syscall.SO_SNDTIMEO} {
		if err := syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, opt, &tv); err != nil {
			return c.opError("set", os.NewSyscallError("setsockopt", err))
		}
	}
	return nil
}

// SetReadDeadline implements net.Conn (as SetDeadline: one deadline).
func (c *blockingConn) SetReadDeadline(t time.Time) error { return c.SetDeadline(t) }

// SetWriteDeadline implements net.Conn (as SetDeadline: one deadline).
func (c *blockingConn) SetWriteDeadline(t time.Time) error { return c.SetDeadline(t) }
