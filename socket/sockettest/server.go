package sockettest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/ndjson"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
)

// Herdr 0.8.2's framing constants.
const (
	MaxRequestBytes     = 1 << 20
	FirstReadTimeout    = 5 * time.Second
	PollInterval        = 100 * time.Millisecond
	PromptSubmitDelay   = 300 * time.Millisecond
	PromptEffectTimeout = 5 * time.Second
)

// Fault changes how the server answers a method; see [Server.SetFault].
// Several fields may be set; they apply in field order and the first that
// ends the exchange wins.
type Fault struct {
	// Latency delays the answer.
	Latency time.Duration
	// Hang never answers: the connection stays open until the client goes
	// away or the server closes.
	Hang bool
	// DropBeforeResponse closes the connection without a reply.
	DropBeforeResponse bool
	// DropMidResponse writes the first half of the reply, then closes.
	DropMidResponse bool
	// Garbage answers with a line that is not JSON.
	Garbage bool
	// WrongID answers with a different request id.
	WrongID bool
	// OversizeBytes, when positive, pads the reply line to this size.
	OversizeBytes int
	// Error answers with this Herdr error instead of running the method.
	Error *schema.ErrorBody
}

// Request is one request line the server received.
type Request struct {
	Time   time.Time
	Line   string // the line as received, without "\n"
	ID     string // "" when the line did not parse
	Method string
	Params jsonx.RawMessage
}

// Server is a Herdr socket server backed by a [World], for tests and for
// the herdr-sim command. Create it with [NewServer] or
// [NewUnstartedServer]; configure fields before Start.
type Server struct {
	// World is the state the server serves.
	World *World
	// Version and Protocol are what ping reports ("0.8.2", 20 by default).
	Version  string
	Protocol uint32
	// Capabilities is ping's capabilities; nil reports null.
	Capabilities *schema.ServerCapabilities
	// CapabilitiesJSON, when set, is reported instead of Capabilities
	// (newer protocols add fields; see [Server.UseProtocol]).
	CapabilitiesJSON jsonx.RawMessage

	// PollRead reproduces Herdr's first read: when the request has not
	// arrived at the first poll, the server sleeps 100 ms before reading
	// again.
	PollRead bool
	// ReadTimeout bounds the wait for the request line (5 s).
	ReadTimeout time.Duration
	// Tick is the poll interval of waits and subscriptions (100 ms).
	Tick time.Duration
	// SubmitDelay is the delay between a prompt's text and its Enter
	// (300 ms), on the world's [Clock].
	SubmitDelay time.Duration
	// EffectTimeout bounds agent.prompt's wait for a state change (5 s).
	EffectTimeout time.Duration
	// Check, when set, is called with every response and event line the
	// server writes (not with lines a Fault corrupts); its errors are kept
	// for [Server.CheckErrors].
	Check func(line []byte) error
	// Logf receives diagnostics; nil discards them.
	Logf func(format string, args ...any)
	// Programs starts the commands of panes that have one (see
	// [CommandSpec]); ptypane.Start runs them in pseudo-terminals. Nil:
	// a world with pane commands does not start.
	Programs ProgramStarter
	// HerdrOnly turns off the simulator-only methods ([SimMethodTurns]):
	// they are then unknown methods, as in real Herdr.
	HerdrOnly bool

	path     string
	dir      string // temp dir to remove on Close
	inode    uint64
	mu       sync.Mutex
	ln       net.Listener
	conns    map[net.Conn]struct{}
	faults   map[string]Fault
	requests []Request
	checkErr []error
	closed   bool
	stopping atomic.Bool
	wg       sync.WaitGroup
	done     chan struct{}
	penalty  atomic.Int64
	protocol atomic.Uint32
	missingM map[string]bool
}

// SetMissing makes the server pretend not to have methods: their requests
// fail to parse (unknown variant), as in a Herdr that predates them.
func (s *Server) SetMissing(methods ...string) {
	m := map[string]bool{}
	for _, x := range methods {
		m[x] = true
	}
	s.mu.Lock()
	s.missingM = m
	s.mu.Unlock()
}

func (s *Server) missing() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.missingM
}

// NewUnstartedServer returns a server for w (the default world when nil)
// that is not listening yet.
func NewUnstartedServer(w *World) *Server {
	if w == nil {
		w = DefaultWorld()
	}
	return &Server{World: w, Version: "0.8.2", Protocol: schema.Protocol,
		Capabilities: &schema.ServerCapabilities{LiveHandoff: true, DetachedServerDaemon: true},
		ReadTimeout:  FirstReadTimeout, Tick: PollInterval, SubmitDelay: PromptSubmitDelay, EffectTimeout: PromptEffectTimeout,
		conns: map[net.Conn]struct{}{}, faults: map[string]Fault{}, done: make(chan struct{})}
}

// NewServer starts a server for w on a socket in a new temporary directory.
// The caller must Close it.
func NewServer(w *World) *Server {
	s := NewUnstartedServer(w)
	s.Start()
	return s
}

// Start listens on a socket in a new temporary directory (short, so it fits
// sun_path). It panics on failure, as httptest does.
func (s *Server) Start() {
	dir, err := os.MkdirTemp("", "hs")
	if err != nil {
		panic("sockettest: " + err.Error())
	}
	s.dir = dir
	if err := s.StartAt(filepath.Join(dir, "herdr.sock")); err != nil {
		panic(err.Error())
	}
}

// ErrBusy is returned by StartAt when a live server already answers at the
// path.
var ErrBusy = errors.New("herdr is already running")

// StartAt listens at path as Herdr does: the parent directory is created,
// a stale socket file (nobody answers) is replaced, a live one makes
// StartAt fail with [ErrBusy], and the socket is made mode 0600.
func (s *Server) StartAt(path string) error {
	s.path = path
	s.protocol.Store(s.Protocol)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if _, err := os.Lstat(path); err == nil {
		c, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			c.Close()
			return fmt.Errorf("sockettest: %w (socket busy at %s)", ErrBusy, path)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.ENOENT) && !errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("sockettest: probing existing socket %s: %w", path, err)
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if err := s.listen(); err != nil {
		return err
	}
	// Pane commands start once the socket answers, so they can use it.
	if err := s.startCommands(); err != nil {
		s.Close()
		return err
	}
	return nil
}

func (s *Server) listen() error {
	ln, err := net.Listen("unix", s.path)
	if err != nil {
		return fmt.Errorf("sockettest: listen %s: %w", s.path, err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(s.path, 0o600); err != nil {
		ln.Close()
		return err
	}
	if fi, err := os.Stat(s.path); err == nil {
		s.inode = inode(fi)
	}
	s.mu.Lock()
	s.ln = ln
	s.mu.Unlock()
	s.wg.Add(1)
	go s.accept(ln)
	return nil
}

// Path is the socket path.
func (s *Server) Path() string { return s.path }

// Client returns a socket client for this server.
func (s *Server) Client() *socket.Client {
	return &socket.Client{Path: s.path}
}

// Env returns the environment a pane process of paneID would get:
// HERDR_ENV, HERDR_SOCKET_PATH and HERDR_PANE_ID.
func (s *Server) Env(paneID string) []string {
	return []string{"HERDR_ENV=1", "HERDR_SOCKET_PATH=" + s.path, "HERDR_PANE_ID=" + paneID}
}

// SetProtocol changes the protocol ping reports, at once.
func (s *Server) SetProtocol(p uint32) { s.protocol.Store(p) }

// SetFault makes method misbehave; method "" applies to every method
// without a fault of its own (ping included). A zero Fault clears it.
func (s *Server) SetFault(method string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f == (Fault{}) {
		delete(s.faults, method)
		return
	}
	s.faults[method] = f
}

// ClearFaults removes every fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = map[string]Fault{}
}

// SetRefuse stops (true) or resumes (false) accepting connections. While
// refusing, the socket file stays, so clients get "connection refused",
// as with a crashed Herdr.
func (s *Server) SetRefuse(refuse bool) error {
	s.mu.Lock()
	ln := s.ln
	if refuse {
		s.ln = nil
	}
	s.mu.Unlock()
	if refuse {
		if ln != nil {
			return ln.Close()
		}
		return nil
	}
	if ln != nil {
		return nil
	}
	if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return s.listen()
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ResetRequests forgets the requests received so far.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}

// Methods returns the methods of the requests received, in order.
func (s *Server) Methods() []string {
	var out []string
	for _, r := range s.Requests() {
		out = append(out, r.Method)
	}
	return out
}

// PollPenalties counts the first reads that found no request and slept
// (PollRead mode).
func (s *Server) PollPenalties() int64 { return s.penalty.Load() }

// CheckErrors returns what Check rejected.
func (s *Server) CheckErrors() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.checkErr...)
}

// programCloseLimit bounds how long Close waits for pane programs.
const programCloseLimit = 10 * time.Second

// Close ends pane programs (see [Program]), stops listening, ends open connections (waits, subscriptions,
// hung requests), waits for every handler to return and removes the socket
// file if it is still the one this server bound.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.done)
	s.mu.Unlock()
	// Pane programs first (they may hold connections), bounded.
	s.World.closePrograms(programCloseLimit)
	s.mu.Lock()
	if s.ln != nil {
		s.ln.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.World.mu.Lock()
	s.World.bump()
	s.World.mu.Unlock()
	s.wg.Wait()
	if fi, err := os.Stat(s.path); err == nil && s.inode != 0 && inode(fi) == s.inode {
		os.Remove(s.path)
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

func (s *Server) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

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
		s.reply(c, errorLine("", "invalid_request", perr.Error()))
		return
	}
	if hasFault && s.applyFault(c, req, fault) {
		return
	}
	s.dispatch(c, req, extra)
}

// applyFault reports whether the fault ended the exchange.
func (s *Server) applyFault(c net.Conn, req parsedRequest, f Fault) bool {
	if f.Latency > 0 {
		select {
		case <-time.After(f.Latency):
		case <-s.done:
			return true
		}
	}
	if f.Hang {
		s.awaitGone(c)
		return true
	}
	if f.DropBeforeResponse {
		return true
	}
	if f.Garbage {
		_, _ = c.Write([]byte("this is not json at all\n"))
		return true
	}
	if f.Error != nil {
		s.reply(c, errorLine(req.ID, f.Error.Code, f.Error.Message))
		return true
	}
	if f.DropMidResponse || f.WrongID || f.OversizeBytes > 0 {
		resp := s.respond(c, req)
		if resp == nil {
			return true
		}
		switch {
		case f.DropMidResponse:
			_, _ = c.Write(resp[:len(resp)/2])
		case f.WrongID:
			var env map[string]jsonx.RawMessage
			_ = jsonx.Unmarshal(resp, &env)
			env["id"], _ = jsonx.Marshal(req.ID + "-not-yours")
			out, _ := jsonx.Marshal(env)
			_, _ = c.Write(append(out, '\n'))
		default:
			pad := f.OversizeBytes - len(resp)
			if pad < 0 {
				pad = 0
			}
			out := append([]byte(`{"id":"`+req.ID+`","result":{"type":"pong","version":"0.8.2","protocol":20,"capabilities":null,"padding":"`), bytes.Repeat([]byte("x"), pad)...)
			out = append(out, "\"}}\n"...)
			_, _ = c.Write(out)
		}
		return true
	}
	return false
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
	h, ok := handlers[req.Method]
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
