package mcpserver_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/link/mcpserver"
)

// fakeHerdr is an in-memory Herdr for tests inside testing/synctest: its
// calls take latency on the bubble's clock, or hang until their context
// ends, so timing is exact and nothing waits on the wall clock.
type fakeHerdr struct {
	mu      sync.Mutex
	agents  []link.Agent
	latency time.Duration
	hang    bool
	stuck   time.Duration // a call ignores its context for this long
	methods []string
}

var errFake = errors.New("fake herdr: no such agent")

func newFakeHerdr() *fakeHerdr {
	return &fakeHerdr{agents: []link.Agent{
		{Name: "brain", Status: "working", WorkspaceID: "w1", PaneID: "w1:p1", TerminalID: "term_1", Kind: "claude"},
		{Name: "reviewer", Status: "idle", WorkspaceID: "w1", PaneID: "w1:p2", TerminalID: "term_2", Kind: "codex"},
		{Status: "idle", WorkspaceID: "w1", PaneID: "w1:p3", TerminalID: "term_3", Kind: "pi"},
	}}
}

func (f *fakeHerdr) set(fn func(f *fakeHerdr)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// calls returns the methods called so far.
func (f *fakeHerdr) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.methods...)
}

func (f *fakeHerdr) call(ctx context.Context, method string) error {
	f.mu.Lock()
	f.methods = append(f.methods, method)
	latency, hang, stuck := f.latency, f.hang, f.stuck
	f.mu.Unlock()
	if stuck > 0 {
		time.Sleep(stuck)
	}
	var after <-chan time.Time
	if hang {
		after = nil
	} else if latency > 0 {
		after = time.After(latency)
	} else {
		return ctx.Err()
	}
	select {
	case <-after:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fakeHerdr) find(target string) (link.Agent, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range f.agents {
		if a.PaneID == target || (a.Name != "" && a.Name == target) {
			return a, true
		}
	}
	return link.Agent{}, false
}

func (f *fakeHerdr) ListAgents(ctx context.Context) ([]link.Agent, error) {
	if err := f.call(ctx, "agent.list"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]link.Agent(nil), f.agents...), nil
}

func (f *fakeHerdr) GetAgent(ctx context.Context, target string) (link.Agent, error) {
	if err := f.call(ctx, "agent.get"); err != nil {
		return link.Agent{}, err
	}
	if a, ok := f.find(target); ok {
		return a, nil
	}
	return link.Agent{}, errFake
}

func (f *fakeHerdr) Prompt(ctx context.Context, target, _ string) (link.Agent, error) {
	if err := f.call(ctx, "agent.prompt"); err != nil {
		return link.Agent{}, err
	}
	return f.GetAgent(ctx, target)
}

func (f *fakeHerdr) Rename(ctx context.Context, target, name string) (link.Agent, error) {
	if err := f.call(ctx, "agent.rename"); err != nil {
		return link.Agent{}, err
	}
	f.mu.Lock()
	for i := range f.agents {
		if f.agents[i].PaneID == target {
			f.agents[i].Name = name
		}
	}
	f.mu.Unlock()
	return f.GetAgent(ctx, target)
}

func (f *fakeHerdr) GetPane(ctx context.Context, paneID string) (link.Pane, error) {
	if err := f.call(ctx, "pane.get"); err != nil {
		return link.Pane{}, err
	}
	if a, ok := f.find(paneID); ok {
		return link.Pane{PaneID: a.PaneID, WorkspaceID: a.WorkspaceID, TerminalID: a.TerminalID}, nil
	}
	return link.Pane{}, errFake
}

func (f *fakeHerdr) ClosePane(ctx context.Context, _ string) error { return f.call(ctx, "pane.close") }

func (f *fakeHerdr) ReadScreen(ctx context.Context, paneID string) (string, error) {
	if err := f.call(ctx, "pane.read"); err != nil {
		return "", err
	}
	if _, ok := f.find(paneID); ok {
		return "", nil
	}
	return "", errFake
}

// session is a server on in-memory pipes, for use inside a synctest
// bubble: a test that waits for output that never comes is a deadlock,
// which synctest reports, so no read needs a timeout.
type session struct {
	t      testing.TB
	in     *io.PipeWriter
	out    *io.PipeReader
	lines  chan string
	done   chan error
	cancel context.CancelFunc
}

func startSession(t testing.TB, opt mcpserver.Options) *session {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	s := &session{t: t, lines: make(chan string, 1024), done: make(chan error, 1), cancel: cancel}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s.in, s.out = inW, outR
	go func() {
		s.done <- mcpserver.Serve(ctx, inR, outW, opt)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	t.Cleanup(func() { cancel(); inW.Close() })
	return s
}

// fakeLink is a Link on h for pane w1:p1.
func fakeLink(t testing.TB, h *fakeHerdr) *link.Link {
	return mustLink(t, link.Config{Herdr: h, PaneID: "w1:p1", CallTimeout: 10 * time.Second})
}

func (s *session) send(line string) {
	s.t.Helper()
	if _, err := s.in.Write([]byte(line + "\n")); err != nil {
		s.t.Fatalf("write: %v", err)
	}
}

func (s *session) next() string {
	s.t.Helper()
	l, ok := <-s.lines
	if !ok {
		s.t.Fatal("server output closed")
	}
	return l
}

// until reads lines up to and including the one that has prefix.
func (s *session) until(prefix string) []string {
	s.t.Helper()
	var out []string
	for {
		l := s.next()
		out = append(out, l)
		if len(l) >= len(prefix) && l[:len(prefix)] == prefix {
			return out
		}
	}
}

// activate initializes the session and activates the tools.
func (s *session) activate() {
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
	s.until(`{"jsonrpc":"2.0","id":1,`)
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"herdr_link"}}`)
	s.until(`{"jsonrpc":"2.0","id":2,`)
}
