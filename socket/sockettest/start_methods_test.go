package sockettest_test

import (
	"slices"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

const startWorld = `{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[
 {"id":"w1:p1","cwd":"/repo","agent":{"kind":"claude","name":"brain","status":"idle"}},
 {"id":"w1:p2","cwd":"/repo"}]}]}]}`

func startSetup(t *testing.T) (*sockettest.World, *sockettest.Server) {
	t.Helper()
	w, err := sockettest.ParseWorld([]byte(startWorld))
	if err != nil {
		t.Fatal(err)
	}
	return w, simtest.New(t, w)
}

func u64(n uint64) *uint64 { return &n }

// agent.start's refusals in upstream's order: name, kind, args, name
// taken, pane, busy pane, timeout.
func TestAgentStartRefusals(t *testing.T) {
	_, srv := startSetup(t)
	c := srv.Client()
	ctx := t.Context()
	tests := []struct {
		p    schema.AgentStartParams
		want string
	}{
		{schema.AgentStartParams{Name: "Bad", Kind: "nosuch", PaneID: "w1:pZ"}, "invalid_agent_name"},
		{schema.AgentStartParams{Name: "brain", Kind: "nosuch", PaneID: "w1:pZ"}, "unsupported_agent_kind"},
		{schema.AgentStartParams{Name: "brain", Kind: "claude", Args: []string{"a\nb"}, PaneID: "w1:pZ"}, "invalid_agent_argument"},
		{schema.AgentStartParams{Name: "brain", Kind: "claude", PaneID: "w1:pZ"}, "agent_name_taken"},
		{schema.AgentStartParams{Name: "tester", Kind: "claude", PaneID: ""}, "agent_pane_not_found"},
		{schema.AgentStartParams{Name: "tester", Kind: "claude", PaneID: "w1:p1"}, "agent_pane_busy"},
		{schema.AgentStartParams{Name: "tester", Kind: "claude", PaneID: "w1:p2", TimeoutMS: u64(3000)}, "invalid_agent_timeout"},
		{schema.AgentStartParams{Name: "tester", Kind: "claude", PaneID: "w1:p2", TimeoutMS: u64(300001)}, "invalid_agent_timeout"},
	}
	for _, tt := range tests {
		if _, err := c.AgentStart(ctx, tt.p); codeOf(err) != tt.want {
			params, _ := jsonx.Marshal(tt.p)
			t.Errorf("agent.start %s: got %v, want %s", params, err, tt.want)
		}
	}
}

// A start is named at once and pending; it turns interactive_ready when
// the agent is ready, or loses its name at the deadline.
func TestAgentStartLaunch(t *testing.T) {
	for _, tt := range []struct {
		outcome sockettest.StartOutcome
		status  schema.AgentStatus
		ready   bool
		named   bool
	}{
		{sockettest.StartReady, schema.AgentStatusIdle, true, true},
		{sockettest.StartBlocked, schema.AgentStatusBlocked, false, true},
		{sockettest.StartExit, schema.AgentStatusUnknown, false, false},
		{sockettest.StartNever, schema.AgentStatusUnknown, false, false},
	} {
		var spec sockettest.WorldSpec
		if err := jsonx.Unmarshal([]byte(startWorld), &spec); err != nil {
			t.Fatal(err)
		}
		clock := sockettest.NewFakeClock(time.Unix(1e9, 0))
		w, err := sockettest.NewWorldClock(spec, clock)
		if err != nil {
			t.Fatal(err)
		}
		c := simtest.New(t, w).Client()
		ctx := t.Context()
		w.SetStartOutcome("codex", tt.outcome)
		w.SetStartDelay(10 * time.Millisecond)
		r, err := c.AgentStart(ctx, schema.AgentStartParams{Name: "tester", Kind: "codex", Args: []string{"--full-auto"}, PaneID: "w1:p2", TimeoutMS: u64(3001)})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Argv, []string{"codex", "--full-auto"}) || deref(r.Agent.Name) != "tester" || !r.Agent.LaunchPending {
			t.Fatalf("started argv %q, name %s, pending %v; want [codex --full-auto], tester, true", r.Argv, deref(r.Agent.Name), r.Agent.LaunchPending)
		}
		if _, err := c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "tester", Text: "hi"}); codeOf(err) != "agent_not_ready" {
			t.Errorf("a prompt while pending: %v", err)
		}
		clock.Advance(10 * time.Millisecond)
		if tt.outcome == sockettest.StartNever {
			clock.Advance(3 * time.Second) // the launch's deadline
		}
		a, err := c.AgentGet(ctx, "w1:p2")
		named := err == nil && a.Name != nil
		if err == nil && (a.AgentStatus != tt.status || a.InteractiveReady != tt.ready) || named != tt.named {
			t.Errorf("outcome %d: agent.get = %s, ready %v, named %v, err %v; want %s, ready %v, named %v",
				tt.outcome, a.AgentStatus, a.InteractiveReady, named, err, tt.status, tt.ready, tt.named)
		}
	}
}

func TestSplitAndTab(t *testing.T) {
	w, srv := startSetup(t)
	c := srv.Client()
	ctx := t.Context()
	anchor, cwd := "w1:p1", "/elsewhere"
	p, err := c.PaneSplit(ctx, schema.PaneSplitParams{TargetPaneID: &anchor, Direction: schema.SplitDirectionDown, CWD: &cwd})
	if err != nil {
		t.Fatal(err)
	}
	if p.PaneID != "w1:p3" || p.Agent != nil || deref(p.CWD) != cwd {
		t.Fatalf("split: pane %s, agent %s, cwd %s; want w1:p3, <nil>, %s", p.PaneID, deref(p.Agent), deref(p.CWD), cwd)
	}
	if ids := w.PaneIDs(); !slices.Equal(ids, []string{"w1:p1", "w1:p3", "w1:p2"}) {
		t.Errorf("layout %v", ids)
	}
	missing := "w1:pZ"
	if _, err := c.PaneSplit(ctx, schema.PaneSplitParams{TargetPaneID: &missing, Direction: schema.SplitDirectionRight}); codeOf(err) != "pane_not_found" {
		t.Errorf("split of a missing pane: %v", err)
	}
	ws := "w1"
	r, err := c.TabCreate(ctx, schema.TabCreateParams{WorkspaceID: &ws})
	if err != nil {
		t.Fatal(err)
	}
	if r.Tab.TabID != "w1:t2" || r.RootPane.TabID != "w1:t2" || deref(r.RootPane.CWD) != "/repo" {
		t.Fatalf("tab.create: tab %s, root pane in %s with cwd %s; want w1:t2, w1:t2, /repo", r.Tab.TabID, r.RootPane.TabID, deref(r.RootPane.CWD))
	}
	bad := "w9"
	if _, err := c.TabCreate(ctx, schema.TabCreateParams{WorkspaceID: &bad}); codeOf(err) != "workspace_not_found" {
		t.Errorf("tab in a missing workspace: %v", err)
	}
	// Closing the only pane of the new tab closes the tab.
	if err := c.PaneClose(ctx, r.RootPane.PaneID); err != nil {
		t.Fatal(err)
	}
	if tabs, _ := c.TabList(ctx, "w1"); len(tabs) != 1 {
		t.Errorf("got %d tabs in w1 after closing the new tab, want 1", len(tabs))
	}
}
