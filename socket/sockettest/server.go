package sockettest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest/herdrstate"
)

// Herdr 0.8.2's framing constants.
const (
	MaxRequestBytes     = 1 << 20
	FirstReadTimeout    = 5 * time.Second
	PollInterval        = 100 * time.Millisecond
	PromptSubmitDelay   = herdrstate.PromptSubmitDelay
	PromptEffectTimeout = herdrstate.PromptEffectTimeout
)

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
	// Memory makes Start listen in memory instead of on a socket file:
	// [Server.Client] and [Server.Dial] reach it, nothing else does, and
	// its exchanges can run inside a testing/synctest bubble. A pane
	// program started by Programs cannot reach it (its
	// HERDR_SOCKET_PATH names no file): use a fake [Program] there.
	Memory bool
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
	waiting  atomic.Int64 // requests blocked in a wait
	protocol atomic.Uint32
	missingM map[string]bool
	// releaseMissing: the methods the release lacks (UseHerdr).
	releaseMissing []string
}

// NewUnstartedServer returns a server for w (the default world when nil)
// that is not listening yet.
func NewUnstartedServer(w *World) *Server {
	if w == nil {
		w = DefaultWorld()
	}
	s := &Server{World: w, Version: "0.8.2", Protocol: schema.Protocol,
		Capabilities: &schema.ServerCapabilities{LiveHandoff: true, DetachedServerDaemon: true},
		ReadTimeout:  FirstReadTimeout, Tick: PollInterval, SubmitDelay: PromptSubmitDelay, EffectTimeout: PromptEffectTimeout,
		conns: map[net.Conn]struct{}{}, faults: map[string]Fault{}, done: make(chan struct{})}
	applyEnvRelease(s)
	// agent.start of a kind with a start program (handlers_start.go).
	w.SetProgramRunner(func(paneID string, argv []string) {
		if err := s.RunCommand(paneID, CommandSpec{Argv: argv}); err != nil {
			s.logf("agent.start: the program in %s did not start: %v", paneID, err)
		}
	})
	return s
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
	if s.Memory {
		s.path = "herdr-sim-memory/herdr.sock"
		s.protocol.Store(s.Protocol)
		if err := s.listen(); err != nil {
			panic(err.Error())
		}
		if err := s.startCommands(); err != nil {
			s.Close()
			panic(err.Error())
		}
		return
	}
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
	if s.Memory {
		ln := newMemListener()
		s.mu.Lock()
		s.ln = ln
		s.mu.Unlock()
		s.wg.Add(1)
		go s.accept(ln)
		return nil
	}
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
	if s.Memory {
		return &socket.Client{Path: s.path, Dial: func(ctx context.Context, _ string) (net.Conn, error) { return s.DialContext(ctx) }}
	}
	return &socket.Client{Path: s.path}
}

// Env returns the environment a pane process of paneID would get:
// HERDR_ENV, HERDR_SOCKET_PATH and HERDR_PANE_ID.
func (s *Server) Env(paneID string) []string {
	return []string{"HERDR_ENV=1", "HERDR_SOCKET_PATH=" + s.path, "HERDR_PANE_ID=" + paneID}
}

// SetProtocol changes the protocol ping reports, at once.
func (s *Server) SetProtocol(p uint32) { s.protocol.Store(p) }

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

// Waiting is how many requests are blocked in a wait (agent.wait,
// agent.prompt with wait) after seeing the world not yet as they want it.
// Tests change the world once a wait is in place, instead of sleeping.
func (s *Server) Waiting() int { return int(s.waiting.Load()) }

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
	s.World.ClosePrograms(programCloseLimit)
	s.mu.Lock()
	if s.ln != nil {
		s.ln.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
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
