package sockettest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/ndjson"
	"github.com/herdr-link/herdr-link/schema"
)

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

func (s *Server) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
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
	// Herdr reads the request byte by byte, so bytes after the newline stay
	// in the socket, where a wait's disconnect check finds them.
	extra := lr.Buffered() > 0
	if pr != nil && pr.slept {
		s.penalty.Add(1)
	}
	if err != nil {
		// Timeout, oversize, EOF before the newline: no reply.
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	if !utf8.Valid(line) {
		return
	}
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return
	}
	if !s.HerdrOnly {
		if sr, ok := parseSimRequest(trimmed); ok {
			s.serveSim(c, sr)
			return
		}
	}
	rec := Request{Time: time.Now(), Line: string(line)}
	req, perr := parseRequest(trimmed)
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
		perr = missingMethod(req.Method, missing, trimmed)
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

func errorLine(id, code, msg string) []byte {
	b, _ := jsonx.Marshal(schema.ErrorResponse{ID: id, Error: schema.ErrorBody{Code: code, Message: msg}})
	return b
}

type success struct {
	ID     string `json:"id"`
	Result any    `json:"result"`
}

func resultLine(id string, result any) []byte {
	if raw, ok := result.(jsonx.RawMessage); ok {
		idb, _ := jsonx.Marshal(id)
		b := lineBuffer(len(raw) + len(idb) + 20)
		b = append(append(append(b, `{"id":`...), idb...), `,"result":`...)
		return append(append(b, raw...), '}')
	}
	b, err := jsonx.Marshal(success{ID: id, Result: result})
	if err != nil {
		return errorLine(id, "internal_error", "failed to encode response")
	}
	return b
}

var newline = []byte{'\n'}

// reply writes one checked line and "\n" (one writev, no copy of line).
func (s *Server) reply(c net.Conn, line []byte) {
	s.check(line)
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	bufs := net.Buffers{line, newline}
	_, _ = bufs.WriteTo(c)
	releaseLine(line)
}

func (s *Server) check(line []byte) {
	if s.Check == nil {
		return
	}
	if err := s.Check(line); err != nil {
		s.mu.Lock()
		s.checkErr = append(s.checkErr, fmt.Errorf("%w: %s", err, truncate(line)))
		s.mu.Unlock()
		s.logf("sockettest: response fails the schema: %v", err)
	}
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

func (s *Server) dispatch(c net.Conn, req parsedRequest, extra bool) {
	if extra {
		c = strayConn{c}
	}
	switch req.Method {
	case schema.MethodEventsSubscribe:
		s.subscribe(c, req)
		return
	}
	if resp := s.respond(c, req); resp != nil {
		s.reply(c, resp)
	}
}

// respond computes the response line of an ordinary or waiting method;
// nil means "write nothing" (client gone).
func (s *Server) respond(c net.Conn, req parsedRequest) []byte {
	if req.Method == schema.MethodPing {
		if line := s.pongLine(req.ID); line != nil {
			return line
		}
		return resultLine(req.ID, schema.ResultPong{Type: schema.ResultTypePong, Version: s.Version, Protocol: s.protocol.Load(), Capabilities: s.Capabilities})
	}
	if req.Method == schema.MethodServerStop {
		s.stopping.Store(true)
		return resultLine(req.ID, schema.ResultOk{Type: schema.ResultTypeOk})
	}
	if s.stopping.Load() {
		return errorLine(req.ID, "server_unavailable", "server is shutting down")
	}
	h, ok := s.handlerFor(req.Method)
	if !ok {
		return errorLine(req.ID, "not_implemented_in_simulator", "herdr-sim does not implement "+req.Method)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := &call{s: s, w: s.World, req: req, ctx: ctx}
	if isWait(req) {
		gone := s.watchGone(c)
		go func() {
			select {
			case <-gone:
			case <-s.done:
			case <-ctx.Done():
				return
			}
			cancel()
			s.World.mu.Lock()
			s.World.bump()
			s.World.mu.Unlock()
		}()
	}
	res, herr := h(env)
	if ctx.Err() != nil {
		return nil // the client left: Herdr abandons the wait silently
	}
	if herr != nil {
		return errorLine(req.ID, herr.code, herr.msg)
	}
	return resultLine(req.ID, res)
}

// isWait reports whether req holds its connection and watches for the
// client going away: agent.wait, and agent.prompt with wait. Without
// wait, agent.prompt is an ordinary request: Herdr never reads the
// connection again and always replies, even to a half-closed client or
// one that sent a stray byte.
func isWait(req parsedRequest) bool {
	if req.Method != schema.MethodAgentPrompt {
		return waits[req.Method]
	}
	var p struct {
		Wait jsonx.RawMessage `json:"wait"`
	}
	_ = jsonx.Unmarshal(req.Params, &p)
	return len(p.Wait) > 0 && string(p.Wait) != "null"
}

// herdrError is an error response of a method.
type herdrError struct{ code, msg string }

func herr(code, format string, args ...any) *herdrError {
	return &herdrError{code: code, msg: fmt.Sprintf(format, args...)}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
