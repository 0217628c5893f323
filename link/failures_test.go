package link_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/herdr-link/herdr-link/internal/testsupport/lineserver"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket"
)

// fake is an in-memory Herdr whose calls can be held and observed, for
// deterministic concurrency tests. Hooks run after the call has read
// Herdr's state, so a held ListAgents returns an answer older than what
// happens meanwhile.
type fake struct {
	mu      sync.Mutex
	agents  []link.Agent
	renames int
	prompts []string
	// latency, when set, is how long every call takes (fake time under
	// synctest); a call gives up when its context ends.
	latency time.Duration
	// onList, onRename, when set, run inside the n-th call (1-based).
	onList   func(ctx context.Context, n int) error
	onRename func(ctx context.Context, n int) error
	lists    int
	renameN  int
	// screens is what ReadScreen answers per pane ("" when unset).
	screens map[string]string
}

func (f *fake) wait(ctx context.Context) error {
	if f.latency == 0 {
		return nil
	}
	t := time.NewTimer(f.latency)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fake) ListAgents(ctx context.Context) ([]link.Agent, error) {
	f.mu.Lock()
	out := append([]link.Agent(nil), f.agents...)
	f.lists++
	n := f.lists
	f.mu.Unlock()
	if f.onList != nil {
		if err := f.onList(ctx, n); err != nil {
			return nil, err
		}
	}
	return out, f.wait(ctx)
}

func (f *fake) find(target string) (link.Agent, int) {
	for i, a := range f.agents {
		if a.PaneID == target || (a.Name != "" && a.Name == target) {
			return a, i
		}
	}
	return link.Agent{}, -1
}

func (f *fake) GetAgent(ctx context.Context, target string) (link.Agent, error) {
	if err := f.wait(ctx); err != nil {
		return link.Agent{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	a, i := f.find(target)
	if i < 0 {
		return a, socket.ErrAgentNotFound
	}
	return a, nil
}

func (f *fake) Prompt(ctx context.Context, target, text string) (link.Agent, error) {
	if err := f.wait(ctx); err != nil {
		return link.Agent{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	a, i := f.find(target)
	if i < 0 {
		return a, socket.ErrAgentNotFound
	}
	f.prompts = append(f.prompts, a.Name)
	return a, nil
}

func (f *fake) Rename(ctx context.Context, target, name string) (link.Agent, error) {
	f.mu.Lock()
	f.renameN++
	n := f.renameN
	f.mu.Unlock()
	if f.onRename != nil {
		if err := f.onRename(ctx, n); err != nil {
			return link.Agent{}, err
		}
	}
	if err := f.wait(ctx); err != nil {
		return link.Agent{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	_, i := f.find(target)
	if i < 0 {
		return link.Agent{}, socket.ErrAgentNotFound
	}
	f.agents[i].Name = name
	f.renames++
	return f.agents[i], nil
}

func (f *fake) GetPane(ctx context.Context, paneID string) (link.Pane, error) {
	if err := f.wait(ctx); err != nil {
		return link.Pane{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	a, i := f.find(paneID)
	if i < 0 {
		return link.Pane{}, socket.ErrPaneNotFound
	}
	return link.Pane{PaneID: a.PaneID, WorkspaceID: a.WorkspaceID}, nil
}

func (f *fake) ReadScreen(ctx context.Context, paneID string) (string, error) {
	if err := f.wait(ctx); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, i := f.find(paneID); i < 0 {
		return "", socket.ErrPaneNotFound
	}
	return f.screens[paneID], nil
}

func (f *fake) ClosePane(ctx context.Context, paneID string) error {
	return f.wait(ctx)
}

func unnamedWorld() *fake {
	return &fake{agents: []link.Agent{
		{PaneID: "w1:p1", WorkspaceID: "w1", Status: "idle"}, // the caller, unnamed
		{PaneID: "w1:p2", WorkspaceID: "w1", Name: "reviewer", Status: "idle"},
	}}
}

// A call holding an agent.list answer older than a rename that settled
// since does not rename a second time.
func TestNoSecondRenameFromStaleSnapshot(t *testing.T) {
	f := unnamedWorld()
	entered, release := make(chan struct{}), make(chan struct{})
	f.onList = func(_ context.Context, n int) error {
		if n == 1 { // B's list: hold it until A has renamed
			close(entered)
			<-release
		}
		return nil
	}
	l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1"})
	ctx := t.Context()
	type res struct {
		r   link.PeersResult
		err error
	}
	b := make(chan res, 1)
	go func() { r, err := l.Peers(ctx); b <- res{r, err} }()
	<-entered
	a, err := l.Peers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	rb := <-b
	if rb.err != nil {
		t.Fatal(rb.err)
	}
	if f.renames != 1 {
		t.Fatalf("%d renames, want 1", f.renames)
	}
	if a.Self.Name != rb.r.Self.Name {
		t.Fatalf("the callers see two names: %q and %q", a.Self.Name, rb.r.Self.Name)
	}
	// The sender of an envelope is the name Herdr has.
	if _, err := l.Send(ctx, link.SendRequest{To: "reviewer", Message: "hi"}); err != nil {
		t.Fatal(err)
	}
}

// One waiter's cancellation does not fail the others sharing the rename:
// the shared work runs under its own context.
func TestRenameWaitersGiveUpAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := unnamedWorld()
		entered, release := make(chan struct{}), make(chan struct{})
		f.onRename = func(ctx context.Context, n int) error {
			if n == 1 {
				close(entered)
				select {
				case <-release:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		}
		l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1"})
		actx, cancelA := context.WithCancel(t.Context())
		aErr := make(chan error, 1)
		go func() { _, err := l.Peers(actx); aErr <- err }()
		<-entered
		bRes := make(chan error, 1)
		var bName string
		go func() {
			r, err := l.Peers(t.Context())
			bName = r.Self.Name
			bRes <- err
		}()
		synctest.Wait() // B waits on the shared rename
		cancelA()
		if err := <-aErr; !errors.Is(err, link.ErrNotInHerdr) {
			t.Fatalf("cancelled caller: %v", err)
		}
		close(release)
		if err := <-bRes; err != nil {
			t.Fatalf("the other caller failed with the first one's cancellation: %v", err)
		}
		if bName == "" || f.renames != 1 {
			t.Fatalf("name %q, %d renames", bName, f.renames)
		}
	})
}

// A tool call has one overall deadline, CallTimeout, however many socket
// calls it makes; the bootstrap follows it.
func TestOneDeadlinePerCall(t *testing.T) {
	const timeout = 2 * time.Second
	ops := []struct {
		name string
		f    func() *fake
		run  func(context.Context, *link.Link) error
	}{
		{"send, named caller", func() *fake {
			f := unnamedWorld()
			f.agents[0].Name = "brain"
			return f
		}, func(ctx context.Context, l *link.Link) error {
			_, err := l.Send(ctx, link.SendRequest{To: "reviewer", Message: "x"})
			return err
		}},
		{"send, unnamed caller", unnamedWorld, func(ctx context.Context, l *link.Link) error {
			_, err := l.Send(ctx, link.SendRequest{To: "reviewer", Message: "x"})
			return err
		}},
		{"peers, unnamed caller", unnamedWorld, func(ctx context.Context, l *link.Link) error { _, err := l.Peers(ctx); return err }},
		{"close, moved caller", func() *fake {
			f := unnamedWorld()
			f.agents[0].PaneID = "w2:p9" // HERDR_PANE_ID no longer listed
			return f
		}, func(ctx context.Context, l *link.Link) error { _, err := l.Close(ctx, "reviewer"); return err }},
		{"bootstrap", unnamedWorld, func(ctx context.Context, l *link.Link) error { _, err := l.Bootstrap(ctx); return err }},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := op.f()
				// Each call alone is within the deadline; together they are not.
				f.latency = timeout * 6 / 10
				l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1", CallTimeout: timeout})
				start := time.Now()
				err := op.run(t.Context(), l)
				if el := time.Since(start); el != timeout {
					t.Fatalf("took %v, want exactly the %v deadline (err %v)", el, timeout, err)
				}
				if !errors.Is(err, link.ErrNotInHerdr) {
					t.Fatalf("err %v", err)
				}
				// A shared rename outlives its callers by at most its own
				// deadline (fake time).
				time.Sleep(timeout)
				if len(f.prompts) != 0 {
					t.Fatalf("delivered after the deadline: %v", f.prompts)
				}
			})
		})
	}
}

// An agent whose workspace Herdr did not report is in no workspace, on
// either side: nothing is listed, sent or closed.
func TestUnreportedWorkspaceFailsClosed(t *testing.T) {
	worlds := map[string][]link.Agent{
		"both unreported": {
			{PaneID: "p1", Name: "brain", Status: "idle"},
			{PaneID: "p2", Name: "reviewer", Status: "idle"},
		},
		"caller unreported": {
			{PaneID: "p1", Name: "brain", Status: "idle"},
			{PaneID: "p2", Name: "reviewer", Status: "idle", WorkspaceID: "w1"},
		},
		"target unreported": {
			{PaneID: "p1", Name: "brain", Status: "idle", WorkspaceID: "w1"},
			{PaneID: "p2", Name: "reviewer", Status: "idle"},
		},
	}
	ctx := t.Context()
	for name, agents := range worlds {
		t.Run(name, func(t *testing.T) {
			f := &fake{agents: agents}
			l := mustLink(t, link.Config{Herdr: f, PaneID: "p1"})
			r, err := l.Peers(ctx)
			if err != nil || len(r.Peers) != 0 {
				t.Fatalf("peers %s, %v; want none", names(r.Peers), err)
			}
			if _, err := l.Send(ctx, link.SendRequest{To: "reviewer", Message: "x"}); !errors.Is(err, link.ErrPeerNotFound) {
				t.Fatalf("send: %v", err)
			}
			if _, err := l.Close(ctx, "reviewer"); !errors.Is(err, link.ErrPeerNotFound) {
				t.Fatalf("close: %v", err)
			}
			if len(f.prompts) != 0 {
				t.Fatalf("delivered to %v", f.prompts)
			}
		})
	}
}

// The model sees one fixed sentence per code; the cause, for the operator
// log, names what is wrong.
func TestEnvironmentFailureTexts(t *testing.T) {
	dir := t.TempDir()
	l := mustLink(t, link.Config{Herdr: link.SocketHerdr{Client: &socket.Client{Path: dir}}, PaneID: "w1:p1"})
	_, err := l.Peers(t.Context())
	if err == nil || err.Error() != "NOT_IN_HERDR: Herdr did not answer; is the Herdr server running?" {
		t.Fatalf("model text %v", err)
	}
	var ee *socket.EnvError
	if !errors.As(err, &ee) || !strings.Contains(ee.Error(), "directory") {
		t.Fatalf("operator cause %v", errors.Unwrap(err))
	}
}

// A send whose request line would exceed Herdr's 1 MiB is refused before
// it is written, as not delivered: the message check
// sizes the escaped request line first, so it is INVALID_ARGUMENT
// and nothing reaches Herdr.
func TestOversizeRequestNotSent(t *testing.T) {
	e := setup(t)
	l := e.link("w1:p1")
	msg := strings.Repeat("\x01", link.MaxMessageBytes)
	_, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: msg})
	if !errors.Is(err, link.ErrInvalidArgument) {
		t.Fatalf("err %v (cause %v)", err, errors.Unwrap(err))
	}
	for _, m := range e.roundTrips() {
		if m == "agent.prompt" {
			t.Fatal("the oversize prompt was sent")
		}
	}
}

// An agent.list over 4 MiB is decoded as a stream, with the same agents
// as the one-buffer path; one over the list bound is refused.
func TestLargeAgentListStreamed(t *testing.T) {
	for _, n := range []int{10, 4000} {
		var b strings.Builder
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"pane_id":"w1:p%d","terminal_id":"term_%d","name":"a%d","agent_status":"idle","workspace_id":"w1","cwd":"/home/u/%s","extra":{"x":[1,2]}}`, i, i, i, strings.Repeat("d", 1000))
		}
		list := b.String()
		srv, err := lineserver.New(func(line []byte) []byte {
			var req struct{ ID string }
			_ = json.Unmarshal(line, &req)
			return []byte(`{"result":{"agents":[` + list + `],"type":"agent_list"},"id":"` + req.ID + `"}` + "\n")
		})
		if err != nil {
			t.Fatal(err)
		}
		h := link.SocketHerdr{Client: &socket.Client{Path: srv.Path(), Protocol: socket.ProtocolOff, Timeout: time.Minute}}
		agents, err := h.ListAgents(t.Context())
		srv.Close()
		if err != nil {
			t.Fatalf("%d agents (%d bytes): %v", n, len(list), err)
		}
		if len(agents) != n {
			t.Fatalf("%d agents decoded, want %d", len(agents), n)
		}
		want := link.Agent{Name: fmt.Sprint("a", n-1), Status: "idle", WorkspaceID: "w1", PaneID: fmt.Sprint("w1:p", n-1), TerminalID: fmt.Sprint("term_", n-1)}
		if diff := cmp.Diff(want, agents[n-1], cmpopts.EquateComparable(link.OptionalSeq{})); diff != "" {
			t.Fatalf("last of %d agents mismatch (-want +got):\n%s", n, diff)
		}
		small := link.SocketHerdr{Client: &socket.Client{Path: srv.Path(), Protocol: socket.ProtocolOff, Timeout: time.Minute, MaxResponseBytes: len(list) / 2}}
		if n > 10 {
			srv2, _ := lineserver.New(func(line []byte) []byte {
				var req struct{ ID string }
				_ = json.Unmarshal(line, &req)
				return []byte(`{"id":"` + req.ID + `","result":{"type":"agent_list","agents":[` + list + `]}}` + "\n")
			})
			small.Client.Path = srv2.Path()
			if _, err := small.ListAgents(t.Context()); !errors.Is(err, socket.ErrResponseTooLarge) {
				t.Fatalf("over the bound: %v", err)
			}
			srv2.Close()
		}
	}
}
