package sockettest

import (
	"bytes"
	"net"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/socket/sockettest/reqcheck"
)

// accept takes connections until ln closes, serving each on its own
// goroutine.
func (s *Server) accept(ln net.Listener) {
	defer s.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(c)
	}
}

// serve answers one connection as Herdr does: read the request line
// (framing.go), check it as serde would (package reqcheck), apply a
// fault if one is set (faults.go), then dispatch it (dispatch.go), which
// has the world answer it (package herdrstate) and writes the response
// (response.go).
func (s *Server) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	line, extra, ok := s.readRequest(c)
	if !ok {
		return
	}
	trimmed := bytes.TrimSpace(line)
	if !s.HerdrOnly {
		if sr, ok := parseSimRequest(trimmed); ok {
			s.serveSim(c, sr)
			return
		}
	}
	rec := Request{Time: time.Now(), Line: string(line)}
	req, perr := reqcheck.Parse(trimmed)
	if perr == nil {
		rec.ID, rec.Method, rec.Params = req.ID, req.Method, append(jsonx.RawMessage(nil), req.Params...)
	}
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	fault, hasFault := s.faults[req.Method]
	if !hasFault {
		fault, hasFault = s.faults[""]
	}
	s.mu.Unlock()
	if missing := s.missing(); req.Method != "" && missing[req.Method] {
		perr = reqcheck.MissingMethod(req.Method, missing, trimmed)
	}
	if perr != nil {
		req, perr = s.releaseParse(trimmed, req, perr)
	}
	if perr != nil {
		s.reply(c, errorLine("", "invalid_request", perr.Error()))
		return
	}
	if hasFault && s.applyFault(c, req, fault) {
		return
	}
	s.dispatch(c, req, extra)
}

// awaitGone blocks until the client sends a byte or closes, or the server
// closes. Herdr treats either as "client gone".
func (s *Server) awaitGone(c net.Conn) {
	gone := s.watchGone(c)
	select {
	case <-gone:
	case <-s.done:
	}
}

// strayConn is a connection whose client sent bytes after its request
// line: a wait's first disconnect check sees them.
type strayConn struct{ net.Conn }

// watchGone returns a channel closed when the client sends any byte or
// EOF (Unix semantics of Herdr's disconnect check).
func (s *Server) watchGone(c net.Conn) <-chan struct{} {
	ch := make(chan struct{})
	if _, stray := c.(strayConn); stray {
		close(ch)
		return ch
	}
	go func() {
		var b [1]byte
		_, _ = c.Read(b[:])
		close(ch)
	}()
	return ch
}
