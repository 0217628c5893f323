package start_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/herdr-link/herdr-link/link/deliver"
	"github.com/herdr-link/herdr-link/link/proto"
	"github.com/herdr-link/herdr-link/link/start"
	"github.com/herdr-link/herdr-link/socket"
)

// fakeHerdr is a Herdr of one workspace "w" that starts every agent at
// once, ready; calls records the methods it was asked.
type fakeHerdr struct {
	mu      sync.Mutex
	calls   []string
	started deliver.Agent
}

func (h *fakeHerdr) note(m string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, m)
}

func (h *fakeHerdr) GetAgent(ctx context.Context, target string) (deliver.Agent, error) {
	h.note("agent.get")
	a := h.started
	a.Status, a.InteractiveReady = "idle", true
	return a, nil
}

func (h *fakeHerdr) ClosePane(ctx context.Context, paneID string) error {
	h.note("pane.close " + paneID)
	return nil
}

func (h *fakeHerdr) SplitPane(ctx context.Context, anchor, direction, cwd string) (start.Pane, error) {
	h.note("pane.split " + anchor + " " + direction)
	return start.Pane{PaneID: "w:p9", WorkspaceID: "w", TerminalID: "t9"}, nil
}

func (h *fakeHerdr) CreateTab(ctx context.Context, workspace, cwd, label string) (start.Pane, error) {
	h.note("tab.create " + workspace)
	return start.Pane{PaneID: "w:p9", WorkspaceID: "w", TerminalID: "t9"}, nil
}

func (h *fakeHerdr) StartAgent(ctx context.Context, paneID, name, kind string, args []string, timeout time.Duration) (deliver.Agent, error) {
	h.note("agent.start " + paneID)
	if paneID == "" {
		return deliver.Agent{}, socket.ErrAgentPaneNotFound // the preflight: the input passed
	}
	h.started = deliver.Agent{Name: name, Kind: kind, PaneID: paneID, WorkspaceID: "w", TerminalID: "t9", LaunchPending: true}
	return h.started, nil
}

func (h *fakeHerdr) ListPanes(ctx context.Context, workspace string) ([]start.PaneRecord, error) {
	h.note("pane.list")
	return []start.PaneRecord{{PaneID: "w:p1", TabID: "w:t1", WorkspaceID: "w", Agent: true}}, nil
}

// fakePorts places every start beside pane w:p1 (the caller's), a name
// "taken" excepted, and records the first messages sent.
type fakePorts struct {
	sent []string
}

var errPlace = proto.NewError(proto.PeerNotFound, "no such peer", nil)

func (p *fakePorts) Place(ctx context.Context, name, beside string) (start.Place, error) {
	if beside == "nobody" {
		return start.Place{}, errPlace
	}
	return start.Place{Anchor: "w:p1", Workspace: "w", Taken: name == "taken"}, nil
}

func (p *fakePorts) Send(ctx context.Context, to, message string) (string, string, error) {
	p.sent = append(p.sent, to+": "+message)
	return "hl_1_a", "submitted", nil
}

func (p *fakePorts) Undeliverable(message string) error {
	if strings.TrimSpace(message) == "" {
		return proto.NewError(proto.InvalidArgument, "blank", nil)
	}
	return nil
}

func (p *fakePorts) NoStarter() error { return proto.NewError(proto.NotInHerdr, "no starter", nil) }

func (p *fakePorts) HerdrFailed(method string, err error) error {
	return proto.NewError(proto.NotInHerdr, method, err)
}

func (p *fakePorts) Refusal(err error) bool {
	var se *socket.Error
	return errors.As(err, &se)
}

func (p *fakePorts) Ended(ctx context.Context) error { return ctx.Err() }

func launcher(t *testing.T, h start.Herdr, p start.Ports) *start.Launcher {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	return start.New(start.Config{Herdr: h, Ports: p, Dir: dir, Home: dir, CallTimeout: time.Second, Poll: time.Millisecond})
}

func codeOf(err error) proto.Code {
	var e *proto.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// TestStartChecksFirst: a request that fails its checks, a name the
// caller's workspace has, and a peer the resolution does not find are
// refused before Herdr is asked to create anything.
func TestStartChecksFirst(t *testing.T) {
	tests := []struct {
		name string
		req  start.Request
		want proto.Code
	}{
		{"bad name", start.Request{Name: "Bad", Kind: "claude"}, proto.StartInputInvalid},
		{"alias-like name", start.Request{Name: "a__b", Kind: "claude"}, proto.StartInputInvalid},
		{"kind and agent", start.Request{Name: "a", Kind: "claude", Agent: "rev"}, proto.StartInputInvalid},
		{"neither kind nor agent", start.Request{Name: "a"}, proto.StartInputInvalid},
		{"args with an agent", start.Request{Name: "a", Agent: "rev", Args: []string{}}, proto.StartInputInvalid},
		{"bad kind", start.Request{Name: "a", Kind: "sh -c"}, proto.StartInputInvalid},
		{"bad placement", start.Request{Name: "a", Kind: "claude", Placement: "left"}, proto.StartInputInvalid},
		{"beside with a tab", start.Request{Name: "a", Kind: "claude", Placement: start.PlaceTab, Beside: "b"}, proto.StartInputInvalid},
		{"control in args", start.Request{Name: "a", Kind: "claude", Args: []string{"a\x1bb"}}, proto.StartInputInvalid},
		{"too many args", start.Request{Name: "a", Kind: "claude", Args: make([]string, start.MaxArgs+1)}, proto.StartInputInvalid},
		{"cwd outside", start.Request{Name: "a", Kind: "claude", Cwd: "/"}, proto.StartInputInvalid},
		{"cwd missing", start.Request{Name: "a", Kind: "claude", Cwd: "nothere"}, proto.StartInputInvalid},
		{"blank first message", start.Request{Name: "a", Kind: "claude", Message: " "}, proto.InvalidArgument},
		{"no configuration", start.Request{Name: "a", Agent: "rev"}, proto.StartConfigNotFound},
		{"name taken", start.Request{Name: "taken", Kind: "claude"}, proto.StartNameTaken},
		{"unknown peer", start.Request{Name: "a", Kind: "claude", Beside: "nobody"}, proto.PeerNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &fakeHerdr{}
			_, err := launcher(t, h, &fakePorts{}).Start(t.Context(), tt.req)
			if got := codeOf(err); got != tt.want {
				t.Errorf("got %v, want %s", err, tt.want)
			}
			if len(h.calls) != 0 {
				t.Errorf("got Herdr calls %q, want none", h.calls)
			}
		})
	}
}

// TestStartSteps: a start checks its input with Herdr (a preflight
// without a pane), lists the panes, splits beside the anchor, starts the
// agent in the new pane, waits until it is ready and sends the first
// message through the send.
func TestStartSteps(t *testing.T) {
	h, p := &fakeHerdr{}, &fakePorts{}
	got, err := launcher(t, h, p).Start(t.Context(), start.Request{Name: "rev", Kind: "claude", Cwd: "sub", Message: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	want := start.Result{Status: "started", Agent: "rev", State: "idle", ID: "hl_1_a", Delivery: "submitted"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	calls := []string{"agent.start ", "pane.list", "pane.split w:p1 right", "agent.start w:p9", "agent.get"}
	if diff := cmp.Diff(calls, h.calls); diff != "" {
		t.Errorf("Herdr calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"rev: hello"}, p.sent); diff != "" {
		t.Errorf("first messages (-want +got):\n%s", diff)
	}
}

// startOnly is a Herdr that cannot start agents.
type startOnly struct{ start.Herdr }

// TestStartWithoutStarter: a Herdr that cannot start agents gives the
// ports' error, after the input's checks.
func TestStartWithoutStarter(t *testing.T) {
	l := launcher(t, startOnly{&fakeHerdr{}}, &fakePorts{})
	if _, err := l.Start(t.Context(), start.Request{Name: "Bad", Kind: "claude"}); codeOf(err) != proto.StartInputInvalid {
		t.Errorf("bad input: got %v, want %s", err, proto.StartInputInvalid)
	}
	if _, err := l.Start(t.Context(), start.Request{Name: "a", Kind: "claude"}); codeOf(err) != proto.NotInHerdr {
		t.Errorf("good input: got %v, want %s", err, proto.NotInHerdr)
	}
}
