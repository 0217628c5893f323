package sockettest

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// An in-memory server listens on a [memListener] instead of a socket file
// (see [Server.Memory]): each dial is a [memConn], whose server end
// Accept returns. Every wait of an exchange is then on a channel or a
// timer, which testing/synctest counts as durably blocking, so a test can
// run the server inside a bubble and let its fake clock jump over
// timeouts, polls and turn times.
type memListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *memListener) Addr() net.Addr { return memAddr{} }

type memAddr struct{}

func (memAddr) Network() string { return "memory" }
func (memAddr) String() string  { return "herdr.sock" }

// errRefused is a dial of a closed in-memory listener, as the kernel
// reports a socket nobody listens on.
var errRefused = &net.OpError{Op: "dial", Net: "unix", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}

// dial connects to l, or is refused once l is closed.
func (l *memListener) dial(ctx context.Context) (net.Conn, error) {
	client, server := memPipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		client.Close()
		server.Close()
		return nil, errRefused
	case <-ctx.Done():
		client.Close()
		server.Close()
		return nil, ctx.Err()
	}
}

// DialContext opens a raw connection to the server, on its socket or in
// memory, for tests that write the wire themselves.
func (s *Server) DialContext(ctx context.Context) (net.Conn, error) {
	if !s.Memory {
		var d net.Dialer
		return d.DialContext(ctx, "unix", s.path)
	}
	s.mu.Lock()
	ml, _ := s.ln.(*memListener)
	s.mu.Unlock()
	if ml == nil {
		return nil, errRefused
	}
	return ml.dial(ctx)
}

// Dial is [Server.DialContext] without a context.
func (s *Server) Dial() (net.Conn, error) { return s.DialContext(context.Background()) }

// InMemory is an option of simtest.New: the server listens in memory
// ([Server.Memory]).
func InMemory(s *Server) { s.Memory = true }

// memConn is one end of an in-memory connection: two [net.Pipe]s, one
// per direction, so that like a Unix socket it can be half-closed
// (CloseWrite: the other end reads EOF and can still write). Writes are
// unbuffered: they return once the other end has read them.
type memConn struct {
	r, w  net.Conn // the read end of one pipe, the write end of the other
	rShut atomic.Bool
	wShut atomic.Bool
}

func memPipe() (client, server *memConn) {
	up, upEnd := net.Pipe()     // client → server
	downEnd, down := net.Pipe() // server → client
	return &memConn{r: down, w: up}, &memConn{r: upEnd, w: downEnd}
}

func (c *memConn) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	return n, c.opError("read", err, &c.rShut)
}

func (c *memConn) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	return n, c.opError("write", err, &c.wShut)
}

// opError words a pipe's error as a Unix socket's: net.ErrClosed on a
// direction this end shut, EPIPE writing to a peer that left, in a
// *net.OpError.
func (c *memConn) opError(op string, err error, shut *atomic.Bool) error {
	switch {
	case err == nil || err == io.EOF:
		return err
	case errors.Is(err, io.ErrClosedPipe) && shut.Load():
		err = net.ErrClosed
	case errors.Is(err, io.ErrClosedPipe) && op == "write":
		err = os.NewSyscallError("write", syscall.EPIPE)
	}
	return &net.OpError{Op: op, Net: "unix", Addr: memAddr{}, Err: err}
}

// CloseWrite ends what this end sends: the other end reads EOF.
func (c *memConn) CloseWrite() error {
	c.wShut.Store(true)
	return c.w.Close()
}

// CloseRead ends what this end receives: the other end's writes fail.
func (c *memConn) CloseRead() error {
	c.rShut.Store(true)
	return c.r.Close()
}

func (c *memConn) Close() error {
	c.CloseWrite()
	c.CloseRead()
	return nil
}

func (c *memConn) LocalAddr() net.Addr  { return memAddr{} }
func (c *memConn) RemoteAddr() net.Addr { return memAddr{} }

func (c *memConn) SetDeadline(t time.Time) error {
	c.r.SetReadDeadline(t)
	return c.w.SetWriteDeadline(t)
}

func (c *memConn) SetReadDeadline(t time.Time) error  { return c.r.SetReadDeadline(t) }
func (c *memConn) SetWriteDeadline(t time.Time) error { return c.w.SetWriteDeadline(t) }

// tryRead is the poll-read mode's non-blocking read in memory: what the
// peer is writing now, else again. In a synctest bubble "now" is before
// the fake clock moves: the read's 1 ns deadline fires only once every
// goroutine of the bubble is blocked.
func (c *memConn) tryRead(b []byte) (n int, err error, again bool) {
	_ = c.r.SetReadDeadline(time.Now().Add(time.Nanosecond))
	n, err = c.Read(b)
	_ = c.r.SetReadDeadline(time.Time{})
	if n == 0 && errors.Is(err, os.ErrDeadlineExceeded) {
		return 0, nil, true
	}
	return n, err, false
}
