package sockettest_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// worldOf builds a one-tab world with one agent pane per kind, named
// a0, a1, … in order.
func worldOf(t *testing.T, status string, kinds ...string) *sockettest.World {
	t.Helper()
	panes := ""
	for i, k := range kinds {
		if i > 0 {
			panes += ","
		}
		panes += fmt.Sprintf(`{"agent":{"kind":%q,"name":"a%d","status":%q}}`, k, i, status)
	}
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[` + panes + `]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// The built-in agent kinds are Herdr 0.8.2's, aliases
// included (upstream src/detect/mod.rs).
func TestBuiltinAgentKinds(t *testing.T) { synctest.Test(t, testBuiltinAgentKinds) }

func testBuiltinAgentKinds(t *testing.T) {
	accepted := []string{"pi", "claude", "codex", "gemini", "cursor", "devin", "agy", "cline", "omp", "mastracode",
		"opencode", "copilot", "kimi", "kiro", "droid", "amp", "grok", "hermes", "kilo", "qodercli", "qwen", "maki",
		"claude-code", "antigravity", "kiro-cli", "github-copilot", "Claude", "codex.exe", "qoder"}
	refused := []string{"goose", "crush", "aider", "my-hook-bot", "claudex"}
	kinds := append(append([]string(nil), accepted...), refused...)
	srv := simtest.New(t, worldOf(t, "idle", kinds...), sockettest.InMemory)
	c := srv.Client()
	for i, k := range kinds {
		_, err := c.AgentPrompt(t.Context(), schema.AgentPromptParams{Target: fmt.Sprintf("a%d", i), Text: "hello"})
		want := ""
		if i >= len(accepted) {
			want = "agent_not_ready"
		}
		if codeOf(err) != want || (want == "" && err != nil) {
			t.Errorf("prompt to kind %q: %v, want %q", k, err, want)
		}
	}
}

// statusSub subscribes to pane.agent_status_changed of paneID and returns
// a function reading the next event's status (or "" after timeout).
func statusSub(t *testing.T, srv *sockettest.Server, paneID string, filter *schema.AgentStatus) func(time.Duration) schema.AgentStatus {
	t.Helper()
	sub, err := srv.Client().Subscribe(t.Context(), schema.EventsSubscribeParams{Subscriptions: []schema.Subscription{
		{PaneAgentStatusChanged: &schema.SubscriptionPaneAgentStatusChanged{PaneID: paneID, AgentStatus: filter}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Close() })
	return func(d time.Duration) schema.AgentStatus {
		ctx, cancel := context.WithTimeout(t.Context(), d)
		defer cancel()
		ev, err := sub.Next(ctx)
		if err != nil {
			return ""
		}
		sc, ok, err := ev.AgentStatusChanged()
		if !ok || err != nil {
			t.Fatalf("event %s %s", ev.Event, ev.Data)
		}
		return sc.AgentStatus
	}
}

// A status subscription filtered on the status the pane
// already has gets that status as its first event.
func TestStatusSubscriptionInitialEvent(t *testing.T) {
	synctest.Test(t, testStatusSubscriptionInitialEvent)
}

func testStatusSubscriptionInitialEvent(t *testing.T) {
	srv := simtest.New(t, newWorld(t), sockettest.InMemory, func(s *sockettest.Server) { s.Tick = 5 * time.Millisecond })
	next := statusSub(t, srv, "w1:p2", ptr(schema.AgentStatusIdle))
	if got := next(2 * time.Second); got != schema.AgentStatusIdle {
		t.Fatalf("first event %q, want idle", got)
	}
	// Only once; then real changes matching the filter.
	if got := next(50 * time.Millisecond); got != "" {
		t.Fatalf("second event %q, want none", got)
	}
	_ = srv.World.SetStatus("w1:p2", "working")
	if got := next(50 * time.Millisecond); got != "" {
		t.Fatalf("filtered subscription delivered %q", got)
	}
}

// Every status change reaches a subscriber, one per tick,
// even when several happen within one tick; agent.wait sees a status the
// agent only passed through.
func TestStatusChangesNotCoalesced(t *testing.T) { synctest.Test(t, testStatusChangesNotCoalesced) }

func testStatusChangesNotCoalesced(t *testing.T) {
	srv := simtest.New(t, newWorld(t), sockettest.InMemory, func(s *sockettest.Server) { s.Tick = 20 * time.Millisecond })
	next := statusSub(t, srv, "w1:p2", nil)
	for _, st := range []string{"working", "idle", "working"} {
		if err := srv.World.SetStatus("w1:p2", st); err != nil {
			t.Fatal(err)
		}
	}
	var got []schema.AgentStatus
	for i := 0; i < 3; i++ {
		got = append(got, next(2*time.Second))
	}
	if fmt.Sprint(got) != "[working idle working]" {
		t.Fatalf("events %v, want [working idle working]", got)
	}
}

func TestAgentWaitSeesTransientStatus(t *testing.T) {
	synctest.Test(t, testAgentWaitSeesTransientStatus)
}

func testAgentWaitSeesTransientStatus(t *testing.T) {
	srv := simtest.New(t, newWorld(t), sockettest.InMemory, func(s *sockettest.Server) { s.Tick = 300 * time.Millisecond })
	type result struct {
		info schema.AgentInfo
		err  error
	}
	done := make(chan result, 1)
	go func() {
		var r schema.ResultAgentInfo
		err := srv.Client().Call(t.Context(), schema.MethodAgentWait,
			schema.AgentWaitParams{Target: "brain", Until: []schema.AgentStatus{schema.AgentStatusIdle}, TimeoutMS: ptr(uint64(3000))}, &r)
		done <- result{r.Agent, err}
	}()
	waitFor(t, func() bool { return srv.Waiting() == 1 }) // the wait's first check is over; its next is a tick away
	_ = srv.World.SetStatus("w1:p1", "idle")              // brain (focused): working → idle
	_ = srv.World.SetStatus("w1:p1", "working")           // and back before the next poll
	r := <-done
	if r.err != nil || r.info.AgentStatus != schema.AgentStatusIdle || r.info.PaneID != "w1:p1" {
		t.Fatalf("agent.wait = %s in %s, %v; want the transient status idle in w1:p1", r.info.AgentStatus, r.info.PaneID, r.err)
	}
}

// An agent finishing in the active tab reads idle (seen),
// not only in the focused pane; in another tab, or while the outer
// terminal is unfocused, it reads done.
func TestSeenFollowsActiveTabAndTerminalFocus(t *testing.T) {
	w := sockettest.DefaultWorld() // focused: w1:p1; w1:p2 shares its tab; w1:p5 is in tab w1:t2
	finish := func(pane string) schema.AgentStatus {
		t.Helper()
		if err := w.SetStatus(pane, "working"); err != nil {
			t.Fatal(err)
		}
		if err := w.SetStatus(pane, "idle"); err != nil {
			t.Fatal(err)
		}
		a, _ := w.Agent(pane)
		return a.AgentStatus
	}
	if got := finish("w1:p2"); got != schema.AgentStatusIdle {
		t.Errorf("active tab, unfocused pane: %s, want idle", got)
	}
	if got := finish("w1:p5"); got != schema.AgentStatusDone {
		t.Errorf("background tab: %s, want done", got)
	}
	w.SetTerminalFocus(false)
	if got := finish("w1:p2"); got != schema.AgentStatusDone {
		t.Errorf("terminal unfocused: %s, want done", got)
	}
	w.SetTerminalFocus(true)
	if got := finish("w1:p1"); got != schema.AgentStatusIdle {
		t.Errorf("focused pane, terminal focused: %s, want idle", got)
	}
}

// Workspace and tab agent_status rank blocked > done >
// working > idle.
func TestAggregateStatusRank(t *testing.T) {
	tests := []struct {
		statuses []string
		want     schema.AgentStatus
	}{
		{[]string{"working", "done"}, schema.AgentStatusDone},
		{[]string{"done", "blocked", "working"}, schema.AgentStatusBlocked},
		{[]string{"idle", "working"}, schema.AgentStatusWorking},
		{[]string{"idle", "unknown"}, schema.AgentStatusIdle},
	}
	for _, tt := range tests {
		panes := ""
		for i, st := range tt.statuses {
			if i > 0 {
				panes += ","
			}
			panes += fmt.Sprintf(`{"agent":{"kind":"claude","status":%q}}`, st)
		}
		w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"tabs":[{"panes":[` + panes + `]}]}]}`))
		if err != nil {
			t.Fatal(err)
		}
		srv := simtest.New(t, w)
		var wl schema.ResultWorkspaceList
		var tl schema.ResultTabList
		if err := srv.Client().Call(t.Context(), schema.MethodWorkspaceList, nil, &wl); err != nil {
			t.Fatal(err)
		}
		if err := srv.Client().Call(t.Context(), schema.MethodTabList, nil, &tl); err != nil {
			t.Fatal(err)
		}
		if wl.Workspaces[0].AgentStatus != tt.want || tl.Tabs[0].AgentStatus != tt.want {
			t.Errorf("%v: workspace %s, tab %s, want %s", tt.statuses, wl.Workspaces[0].AgentStatus, tl.Tabs[0].AgentStatus, tt.want)
		}
	}
}

// Pane.get and pane.close take parse_pane_id's loose
// forms: <ws>:p<n> and <ws>-<n> with <ws> an id, w_<position> or a bare
// position.
func TestLoosePaneIDs(t *testing.T) {
	srv := simtest.New(t, newWorld(t))
	c := srv.Client()
	ctx := t.Context()
	for arg, want := range map[string]string{
		"w1:p1": "w1:p1", "1:p1": "w1:p1", "w_1:p1": "w1:p1", "w1-1": "w1:p1", "1-10": "w1:pA",
		"w_2:p2": "w2:p2", "2-2": "w2:p2", "w2-1": "w2:p1",
	} {
		var r schema.ResultPaneInfo
		if err := c.Call(ctx, schema.MethodPaneGet, schema.PaneTarget{PaneID: arg}, &r); err != nil || r.Pane.PaneID != want {
			t.Errorf("pane.get %s: %s %v, want %s", arg, r.Pane.PaneID, err, want)
		}
	}
	for _, arg := range []string{"w9-1", "3:p1", "w1:pZZZZ", "w1-x", "w1:p99", "p1", "w_0:p1"} {
		err := c.Call(ctx, schema.MethodPaneGet, schema.PaneTarget{PaneID: arg}, nil)
		if codeOf(err) != "pane_not_found" {
			t.Errorf("pane.get %s: %v, want pane_not_found", arg, err)
		}
	}
	if err := c.Call(ctx, schema.MethodPaneClose, schema.PaneTarget{PaneID: "w_1-3"}, nil); err != nil {
		t.Fatalf("pane.close w_1-3: %v", err)
	}
	if _, err := c.PaneGet(ctx, "w1:p3"); codeOf(err) != "pane_not_found" {
		t.Fatalf("w1:p3 after closing w_1-3: %v", err)
	}
	// Agent targets stay exact: a loose form is a name, and no agent has it.
	if _, err := c.AgentGet(ctx, "w1-1"); codeOf(err) != "agent_not_found" {
		t.Fatalf("agent.get w1-1: %v, want agent_not_found", err)
	}
}
