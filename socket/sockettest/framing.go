package sockettest

import (
	"bytes"
	"io"
	"net"
	"os"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/herdr-link/herdr-link/internal/ndjson"
)

// readRequest reads a connection's request line with Herdr's framing:
// within ReadTimeout, at most MaxRequestBytes, valid UTF-8, not blank.
// ok is false when Herdr closes without a reply (timeout, oversize, EOF
// before the newline, invalid UTF-8, a blank line). extra reports bytes
// after the newline: Herdr reads the request byte by byte, so they stay
// in the socket, where a wait's disconnect check finds them.
func (s *Server) readRequest(c net.Conn) (line []byte, extra, ok bool) {
	var src io.Reader = c
	deadline := time.Now().Add(s.ReadTimeout)
	var pr *pollReader
	if s.PollRead {
		pr = &pollReader{c: c, deadline: deadline, done: s.done}
		src = pr
	} else {
		_ = c.SetReadDeadline(deadline)
	}
	lr := ndjson.NewReader(src, MaxRequestBytes)
	line, err := lr.ReadLine()
	extra = lr.Buffered() > 0
	if pr != nil && pr.slept {
		s.penalty.Add(1)
	}
	if err != nil {
		return nil, false, false
	}
	_ = c.SetReadDeadline(time.Time{})
	if !utf8.Valid(line) || len(bytes.TrimSpace(line)) == 0 {
		return nil, false, false
	}
	return line, extra, true
}

// pollReader reproduces Herdr's first read: a non-blocking read that
// sleeps PollInterval whenever nothing is pending.
type pollReader struct {
	c        net.Conn
	deadline time.Time
	slept    bool
	done     <-chan struct{}
}

func (p *pollReader) Read(b []byte) (int, error) {
	for {
		n, err, again := p.try(b)
		if !again {
			return n, err
		}
		if time.Now().After(p.deadline) {
			return 0, os.ErrDeadlineExceeded
		}
		p.slept = true
		select {
		case <-time.After(PollInterval):
		case <-p.done:
			return 0, net.ErrClosed
		}
	}
}

// try makes one non-blocking read, as Herdr's loop does: again is true
// when nothing was pending.
func (p *pollReader) try(b []byte) (n int, err error, again bool) {
	if mc, ok := p.c.(*memConn); ok {
		return mc.tryRead(b)
	}
	sc, ok := p.c.(syscall.Conn)
	if !ok {
		n, err = p.c.Read(b)
		return n, err, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, err, false
	}
	var rerr error
	cerr := rc.Read(func(fd uintptr) bool {
		n, rerr = readFD(fd, b)
		return true // never wait for readiness: report what is there now
	})
	switch {
	case cerr != nil:
		return 0, cerr, false
	case rerr == syscall.EAGAIN:
		return 0, nil, true
	case rerr != nil:
		return 0, rerr, false
	case n == 0:
		return 0, io.EOF, false
	}
	return n, nil, false
}
