package link_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// startLink is e.link with a working directory, a home, and a short
// readiness budget.
func (e env) startLink(t *testing.T, pane string) *link.Link {
	t.Helper()
	l := e.link(pane)
	// A start makes six round trips under one operation deadline: the
	// production default, not e.link's short one, so load cannot fail it.
	c := e.srv.Client()
	c.Timeout = link.DefaultCallTimeout
	l = relink(t, l, func(cf *link.Config) { cf.Herdr, cf.CallTimeout = link.SocketHerdr{Client: c}, c.Timeout })
	l = relink(t, l, func(c *link.Config) { c.Home = t.TempDir() })
	l = relink(t, l, func(c *link.Config) { c.Dir = filepath.Join(l.Config().Home, "repo") })
	if err := os.MkdirAll(filepath.Join(l.Config().Dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	l = relink(t, l, func(c *link.Config) { c.StartTimeout, c.StartPoll = 2*time.Second, 5*time.Millisecond })
	return l
}

// tabs returns the tab ids of workspace ws.
func (e env) tabs(t *testing.T, ws string) []string {
	t.Helper()
	ts, err := e.srv.Client().TabList(t.Context(), ws)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range ts {
		out = append(out, x.TabID)
	}
	return out
}

// privateIn fails when text holds any id of the world.
func privateIn(t *testing.T, w *sockettest.World, text string) {
	t.Helper()
	// Message ids are herdr-link's own (random: one may hold "w1").
	text = regexp.MustCompile(`hl_[a-z0-9]+_[a-z0-9]+`).ReplaceAllString(text, "hl_ID")
	for _, id := range w.IDs() {
		if strings.Contains(text, id) {
			t.Errorf("model-facing text %q holds the id %q", text, id)
		}
	}
}

func TestStartPlacements(t *testing.T) {
	ctx := t.Context()
	for _, place := range []string{"", link.PlaceRight, link.PlaceDown, link.PlaceTab} {
		for _, msg := range []string{"", "please run the tests"} {
			t.Run(place+"/message="+msg, func(t *testing.T) {
				e := setup(t)
				l := e.startLink(t, "w1:p1")
				beforePanes, beforeTabs := e.w.PaneIDs(), e.tabs(t, "w1")
				got, err := l.Start(ctx, link.StartRequest{Name: "tester", Kind: "claude", Args: []string{"--model", "x y"}, Placement: place, Message: msg})
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != "started" || got.Agent != "tester" || got.State != "idle" {
					t.Fatalf("start = %s %s/%s, want started tester/idle", got.Status, got.Agent, got.State)
				}
				b, _ := jsonx.Marshal(got)
				privateIn(t, e.w, string(b))
				after := e.w.PaneIDs()
				if len(after) != len(beforePanes)+1 {
					t.Fatalf("panes %v → %v", beforePanes, after)
				}
				tabs := e.tabs(t, "w1")
				if place == link.PlaceTab {
					if len(tabs) != len(beforeTabs)+1 {
						t.Errorf("tabs %v → %v", beforeTabs, tabs)
					}
				} else if after[1] != "w1:p9" || len(tabs) != len(beforeTabs) {
					t.Errorf("the split is not beside the caller: panes %v, tabs %v", after, tabs)
				}
				if !slices.Equal(e.w.Started()[0], []string{"claude", "--model", "x y"}) {
					t.Errorf("argv %q", e.w.Started())
				}
				peers, err := l.Peers(ctx)
				if err != nil || !strings.Contains(names(peers.Peers), "tester/") {
					t.Errorf("tester is not a peer: %v %v", peers, err)
				}
				if msg != "" {
					if got.ID == "" || got.Delivery == "" {
						t.Errorf("start with a message: id %q, delivery %q; want both set", got.ID, got.Delivery)
					}
					id := after[slices.IndexFunc(after, func(s string) bool { return !slices.Contains(beforePanes, s) })]
					if ps := e.w.Prompts(id); len(ps) != 1 || !strings.Contains(ps[0], msg) {
						t.Errorf("prompts %q", ps)
					}
				} else if got.ID != "" || got.Delivery != "" {
					t.Errorf("start without a message: id %q, delivery %q; want neither", got.ID, got.Delivery)
				}
			})
		}
	}
}

func TestStartBeside(t *testing.T) {
	e := setup(t)
	l := e.startLink(t, "w1:p1")
	if _, err := l.Start(t.Context(), link.StartRequest{Name: "tester", Kind: "codex", Beside: "reviewer", Placement: "down"}); err != nil {
		t.Fatal(err)
	}
	if ids := e.w.PaneIDs(); ids[2] != "w1:p9" {
		t.Errorf("not beside reviewer: %v", ids)
	}
	// A peer of another workspace is no anchor.
	_, err := l.Start(t.Context(), link.StartRequest{Name: "tester2", Kind: "codex", Beside: "ops"})
	if code(err) != link.PeerNotFound {
		t.Errorf("beside ops: %v", err)
	}
}

// TestStartRefusedBeforeCreating: bad input, taken names, unknown kinds and
// configuration errors create nothing (no pane.split or tab.create is
// sent).
func TestStartRefusedBeforeCreating(t *testing.T) {
	outside := t.TempDir()
	tests := []struct {
		name string
		req  link.StartRequest
		want link.Code
	}{
		{"bad name", link.StartRequest{Name: "Tester", Kind: "claude"}, link.StartInputInvalid},
		{"no kind or agent", link.StartRequest{Name: "tester"}, link.StartInputInvalid},
		{"kind and agent", link.StartRequest{Name: "tester", Kind: "claude", Agent: "x"}, link.StartInputInvalid},
		{"agent with args", link.StartRequest{Name: "tester", Agent: "x", Args: []string{"a"}}, link.StartInputInvalid},
		{"malformed kind", link.StartRequest{Name: "tester", Kind: "sh -c"}, link.StartInputInvalid},
		{"unknown kind", link.StartRequest{Name: "tester", Kind: "nosuch"}, link.StartInputInvalid},
		{"NUL in args", link.StartRequest{Name: "tester", Kind: "claude", Args: []string{"a\x00b"}}, link.StartInputInvalid},
		{"newline in args", link.StartRequest{Name: "tester", Kind: "claude", Args: []string{"a\nrm -rf /"}}, link.StartInputInvalid},
		{"too many args", link.StartRequest{Name: "tester", Kind: "claude", Args: make([]string, 33)}, link.StartInputInvalid},
		{"huge arg", link.StartRequest{Name: "tester", Kind: "claude", Args: []string{strings.Repeat("a", 4097)}}, link.StartInputInvalid},
		{"placement", link.StartRequest{Name: "tester", Kind: "claude", Placement: "left"}, link.StartInputInvalid},
		{"beside with tab", link.StartRequest{Name: "tester", Kind: "claude", Placement: "tab", Beside: "reviewer"}, link.StartInputInvalid},
		{"cwd outside", link.StartRequest{Name: "tester", Kind: "claude", Cwd: outside}, link.StartInputInvalid},
		{"cwd root", link.StartRequest{Name: "tester", Kind: "claude", Cwd: "/"}, link.StartInputInvalid},
		{"cwd up", link.StartRequest{Name: "tester", Kind: "claude", Cwd: "../../.."}, link.StartInputInvalid},
		{"cwd missing", link.StartRequest{Name: "tester", Kind: "claude", Cwd: "nope"}, link.StartInputInvalid},
		{"name taken here", link.StartRequest{Name: "reviewer", Kind: "claude"}, link.StartNameTaken},
		{"own name", link.StartRequest{Name: "brain", Kind: "claude"}, link.StartNameTaken},
		{"no config", link.StartRequest{Name: "tester", Agent: "reviewer"}, link.StartConfigNotFound},
		{"blank message", link.StartRequest{Name: "tester", Kind: "claude", Message: " "}, link.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := setup(t)
			l := e.startLink(t, "w1:p1")
			before := e.w.PaneIDs()
			_, err := l.Start(t.Context(), tt.req)
			if code(err) != tt.want {
				t.Fatalf("got %v, want %s", err, tt.want)
			}
			privateIn(t, e.w, err.Error())
			for _, m := range e.srv.Methods() {
				if m == schema.MethodPaneSplit || m == schema.MethodTabCreate {
					t.Errorf("%s was sent", m)
				}
			}
			if after := e.w.PaneIDs(); !slices.Equal(before, after) {
				t.Errorf("panes %v → %v", before, after)
			}
		})
	}
}

func TestStartCwd(t *testing.T) {
	e := setup(t)
	l := e.startLink(t, "w1:p1")
	if _, err := l.Start(t.Context(), link.StartRequest{Name: "tester", Kind: "claude", Cwd: "sub"}); err != nil {
		t.Fatal(err)
	}
	p, err := e.srv.Client().PaneGet(t.Context(), "w1:p9")
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.EvalSymlinks(filepath.Join(l.Config().Dir, "sub")); p.CWD == nil || *p.CWD != want {
		t.Errorf("cwd %v, want %s", p.CWD, want)
	}
}

// startFault makes the agent.start with a pane (not the pane-less check)
// fail: it sets the simulator's fault just before that call.
type startFault struct {
	link.SocketHerdr
	srv   *sockettest.Server
	fault sockettest.Fault
}

func (h startFault) StartAgent(ctx context.Context, paneID, name, kind string, args []string, timeout time.Duration) (link.Agent, error) {
	if paneID != "" {
		h.srv.SetFault(schema.MethodAgentStart, h.fault)
		defer h.srv.ClearFaults()
	}
	return h.SocketHerdr.StartAgent(ctx, paneID, name, kind, args, timeout)
}

// TestStartRollback: a fault at each Herdr step after a pane exists
// returns an error and leaves no pane behind; a fault creating the pane
// creates nothing.
func TestStartRollback(t *testing.T) {
	refuse := sockettest.Fault{Error: &schema.ErrorBody{Code: "internal_error", Message: "boom w1:p1"}}
	tests := []struct {
		name   string
		place  string
		method string // the faulted method, set before the start
		start  *sockettest.Fault
		world  func(w *sockettest.World)
		want   link.Code
	}{
		{"split refused", "right", schema.MethodPaneSplit, nil, nil, link.StartFailed},
		{"tab refused", "tab", schema.MethodTabCreate, nil, nil, link.StartFailed},
		{"tab answer lost", "tab", schema.MethodTabCreate, nil, nil, link.StartFailed},
		{"split answer lost", "right", schema.MethodPaneSplit, nil, nil, link.StartFailed},
		{"start refused", "right", "", &refuse, nil, link.StartFailed},
		{"start refused in a tab", "tab", "", &refuse, nil, link.StartFailed},
		{"start answer lost", "right", "", &sockettest.Fault{DropMidResponse: true}, nil, link.StartFailed},
		{"start name taken", "right", "", &sockettest.Fault{Error: &schema.ErrorBody{Code: "agent_name_taken", Message: "x"}}, nil, link.StartNameTaken},
		{"readiness refused", "right", schema.MethodAgentGet, nil, nil, link.StartFailed},
		{"readiness timeout", "right", "", nil, func(w *sockettest.World) { w.SetStartOutcome("", sockettest.StartNever) }, link.StartFailed},
		{"readiness timeout in a tab", "tab", "", nil, func(w *sockettest.World) { w.SetStartOutcome("", sockettest.StartNever) }, link.StartFailed},
		{"blocked at startup", "right", "", nil, func(w *sockettest.World) { w.SetStartOutcome("claude", sockettest.StartBlocked) }, link.StartFailed},
		{"exited at startup", "down", "", nil, func(w *sockettest.World) { w.SetStartOutcome("claude", sockettest.StartExit) }, link.StartFailed},
		{"message refused", "right", schema.MethodAgentPrompt, nil, nil, link.StartFailed},
		{"message answer lost", "tab", schema.MethodAgentPrompt, nil, nil, link.StartFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := setup(t)
			l := e.startLink(t, "w1:p1")
			l = relink(t, l, func(c *link.Config) { c.StartTimeout = 300 * time.Millisecond })
			if tt.start != nil {
				l = relink(t, l, func(c *link.Config) {
					c.Herdr = startFault{SocketHerdr: l.Config().Herdr.(link.SocketHerdr), srv: e.srv, fault: *tt.start}
				})
			}
			if tt.world != nil {
				tt.world(e.w)
			}
			switch {
			case tt.method == "":
			case strings.Contains(tt.name, "lost"):
				e.srv.SetFault(tt.method, sockettest.Fault{DropMidResponse: true})
			default:
				e.srv.SetFault(tt.method, refuse)
			}
			before, beforeTabs := e.w.PaneIDs(), e.tabs(t, "w1")
			_, err := l.Start(t.Context(), link.StartRequest{Name: "tester", Kind: "claude", Placement: tt.place, Message: "hello"})
			if code(err) != tt.want {
				t.Fatalf("got %v, want %s", err, tt.want)
			}
			privateIn(t, e.w, err.Error())
			e.srv.ClearFaults()
			if after := e.w.PaneIDs(); !slices.Equal(before, after) {
				t.Errorf("panes left behind: %v → %v", before, after)
			}
			if tabs := e.tabs(t, "w1"); !slices.Equal(beforeTabs, tabs) {
				t.Errorf("tabs left behind: %v → %v", beforeTabs, tabs)
			}
			// The name is free again.
			e.w.SetStartOutcome("", sockettest.StartReady)
			e.w.SetStartOutcome("claude", sockettest.StartReady)
			if _, err := e.startLink(t, "w1:p1").Start(t.Context(), link.StartRequest{Name: "tester", Kind: "claude"}); err != nil {
				t.Errorf("a second start: %v", err)
			}
		})
	}
}

// TestStartUnnamedCaller: an unnamed caller is named first (bootstrap).
func TestStartUnnamedCaller(t *testing.T) {
	e := setup(t)
	l := e.startLink(t, "w1:p3")
	if _, err := l.Start(t.Context(), link.StartRequest{Name: "tester", Kind: "claude", Message: "hi"}); err != nil {
		t.Fatal(err)
	}
	a, err := e.srv.Client().AgentGet(t.Context(), "w1:p3")
	if err != nil || a.Name == nil || !strings.HasPrefix(*a.Name, "hl-") {
		t.Errorf("caller not named: %v %v", a.Name, err)
	}
	ps := e.w.Prompts("w1:p9")
	if len(ps) != 1 || !strings.Contains(ps[0], `"from": "hl-`) && !strings.Contains(ps[0], `"from":"hl-`) {
		t.Errorf("prompt %q", ps)
	}
}

// TestStartCancelledRollsBack: the call cancelled while the agent starts
// still closes the pane it created.
func TestStartCancelledRollsBack(t *testing.T) {
	e := setup(t)
	l := e.startLink(t, "w1:p1")
	e.w.SetStartOutcome("", sockettest.StartNever)
	before := e.w.PaneIDs()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := l.Start(ctx, link.StartRequest{Name: "tester", Kind: "claude"})
		done <- err
	}()
	// Cancel once agent.start was received (the pane exists).
	for !slices.Contains(e.srv.Methods(), schema.MethodAgentGet) {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; code(err) != link.NotInHerdr || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("got %v", err)
	}
	if after := e.w.PaneIDs(); !slices.Equal(before, after) {
		t.Errorf("panes %v → %v", before, after)
	}
}
