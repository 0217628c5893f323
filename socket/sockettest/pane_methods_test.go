package sockettest_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

func TestPanes(t *testing.T) {
	srv := simtest.New(t, newWorld(t))
	c := srv.Client()
	ctx := t.Context()
	p, err := c.PaneGet(ctx, "w1:p3")
	if err != nil {
		t.Fatal(err)
	}
	if p.AgentStatus != schema.AgentStatusUnknown || p.Agent != nil {
		t.Fatalf("shell pane: status %s, agent %s; want unknown, <nil>", p.AgentStatus, deref(p.Agent))
	}
	if _, err := c.PaneGet(ctx, "w1:pZ"); err == nil || err.Error() != "herdr pane.get: pane_not_found: pane w1:pZ not found" {
		t.Fatalf("missing pane: %v", err)
	}
	all, _ := c.PaneList(ctx, "")
	w2, _ := c.PaneList(ctx, "w2")
	second, _ := c.PaneList(ctx, "2")
	if len(all) != 12 || len(w2) != 2 || len(second) != 2 {
		t.Fatalf("pane.list: %d all, %d in w2, %d by position", len(all), len(w2), len(second))
	}
	if _, err := c.PaneList(ctx, "w9"); codeOf(err) != "workspace_not_found" {
		t.Fatalf("unknown workspace: %v", err)
	}
	// A cross-workspace move: new id, old id a pane.* alias only.
	res, err := c.PaneMove(ctx, schema.PaneMoveParams{PaneID: "w1:p1", Destination: schema.PaneMoveDestination{Tab: &schema.PaneMoveDestinationTab{TabID: "w2:t1", Split: schema.SplitDirectionRight}}})
	if err != nil {
		t.Fatal(err)
	}
	newID := res.Pane.PaneID
	if !res.Changed || res.PreviousPaneID != "w1:p1" || !strings.HasPrefix(newID, "w2:p") || res.Pane.WorkspaceID != "w2" {
		t.Fatalf("move: changed %v, previous %s, now %s in %s; want true, w1:p1, w2:p… in w2",
			res.Changed, res.PreviousPaneID, newID, res.Pane.WorkspaceID)
	}
	if p, err := c.PaneGet(ctx, "w1:p1"); err != nil || p.PaneID != newID {
		t.Fatalf("pane.get w1:p1 = %s, %v; want %s (the alias)", p.PaneID, err, newID)
	}
	if _, err := c.AgentGet(ctx, "w1:p1"); codeOf(err) != "agent_not_found" {
		t.Fatalf("alias as agent target: %v", err)
	}
	if a, err := c.AgentGet(ctx, newID); err != nil || deref(a.Name) != "brain" || a.WorkspaceID != "w2" {
		t.Fatalf("agent.get %s = %s in %s, %v; want brain in w2", newID, deref(a.Name), a.WorkspaceID, err)
	}
	// Same-workspace move keeps the id.
	res, err = c.PaneMove(ctx, schema.PaneMoveParams{PaneID: "w1:p2", Destination: schema.PaneMoveDestination{NewTab: &schema.PaneMoveDestinationNewTab{}}})
	if err != nil {
		t.Fatalf("new tab move: %v", err)
	}
	if res.Pane.PaneID != "w1:p2" || res.CreatedTab == nil {
		t.Fatalf("new tab move: pane %s, created a tab %v; want w1:p2, true", res.Pane.PaneID, res.CreatedTab != nil)
	}
	// Close: the agent and its name go away.
	if err := c.PaneClose(ctx, newID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AgentGet(ctx, "brain"); codeOf(err) != "agent_not_found" {
		t.Fatalf("closed agent still resolves: %v", err)
	}
	if err := c.PaneClose(ctx, newID); codeOf(err) != "pane_not_found" {
		t.Fatalf("second close: %v", err)
	}
	// Closing the last pane of a workspace closes the workspace.
	_ = c.PaneClose(ctx, "w2:p1")
	_ = c.PaneClose(ctx, "w2:p2")
	ws, _ := c.WorkspaceList(ctx)
	if len(ws) != 1 {
		t.Fatalf("got %d workspaces after closing all of w2, want 1", len(ws))
	}
}

func TestListsAndSnapshot(t *testing.T) {
	srv := simtest.New(t, newWorld(t))
	c := srv.Client()
	ctx := t.Context()
	ws, err := c.WorkspaceList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 {
		t.Fatalf("workspace.list: got %d workspaces, want 2", len(ws))
	}
	if ws[0].Number != 1 || ws[0].PaneCount != 10 || ws[1].Label != "other" || !ws[0].Focused {
		t.Fatalf("workspace.list: first number %d, %d panes, focused %v; second label %q; want 1, 10, true; \"other\"",
			ws[0].Number, ws[0].PaneCount, ws[0].Focused, ws[1].Label)
	}
	tabs, err := c.TabList(ctx, "w2")
	if err != nil {
		t.Fatal(err)
	}
	if len(tabs) != 1 || tabs[0].Label != "1" {
		t.Fatalf("tab.list w2: got %d tabs, want one labelled 1", len(tabs))
	}
	if _, err := c.TabList(ctx, "nope"); codeOf(err) != "workspace_not_found" {
		t.Fatalf("tab.list unknown: %v", err)
	}
	snap, err := c.SessionSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type counts struct {
		Protocol               uint32
		Version, Focused       string
		Agents, Panes, Layouts int
	}
	got := counts{snap.Protocol, snap.Version, deref(snap.FocusedPaneID), len(snap.Agents), len(snap.Panes), len(snap.Layouts)}
	if diff := cmp.Diff(counts{20, "0.8.2", "w1:p1", 10, 12, 2}, got); diff != "" {
		t.Fatalf("snapshot mismatch (-want +got):\n%s", diff)
	}
	// Any other method of the schema: a distinct code.
	err = c.Call(ctx, schema.MethodWorkspaceCreate, schema.WorkspaceCreateParams{}, nil)
	if codeOf(err) != "not_implemented_in_simulator" {
		t.Fatalf("unimplemented: %v", err)
	}
}

func TestEvents(t *testing.T) { synctest.Test(t, testEvents) }

func testEvents(t *testing.T) {
	srv := simtest.New(t, newWorld(t), sockettest.InMemory, func(s *sockettest.Server) { s.Tick = 5 * time.Millisecond })
	c := srv.Client()
	ctx := t.Context()
	// A closed pane before subscribing is replayed (plain kinds start at 0).
	if err := srv.World.Close("w1:p3"); err != nil {
		t.Fatal(err)
	}
	sub, err := c.Subscribe(ctx, schema.EventsSubscribeParams{Subscriptions: []schema.Subscription{
		{PaneClosed: &schema.SubscriptionPaneClosed{}},
		{PaneUpdated: &schema.SubscriptionPaneUpdated{}},
		{PaneAgentStatusChanged: &schema.SubscriptionPaneAgentStatusChanged{PaneID: "w1:p2"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	next := func() socket.Event {
		t.Helper()
		nctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		ev, err := sub.Next(nctx)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	ev := next()
	d, err := ev.Plain()
	if err != nil || ev.Event != "pane_closed" || d.PaneClosed == nil || d.PaneClosed.PaneID != "w1:p3" {
		t.Fatalf("replayed event %s %s", ev.Event, ev.Data)
	}
	_ = srv.World.SetStatus("w1:p2", "working")
	ev = next()
	sc, ok, err := ev.AgentStatusChanged()
	if !ok || err != nil || sc.AgentStatus != schema.AgentStatusWorking || sc.PaneID != "w1:p2" {
		t.Fatalf("status event %s %s", ev.Event, ev.Data)
	}
	if _, err := c.AgentRename(ctx, "w1:p2", ptr("named")); err != nil {
		t.Fatal(err)
	}
	ev = next()
	if d, _ := ev.Plain(); ev.Event != "pane_updated" || d.PaneUpdated == nil {
		t.Fatalf("rename event %s %s", ev.Event, ev.Data)
	}
	// A probe failure answers with the <id>:sub:<n>:probe id.
	_, err = c.Subscribe(ctx, schema.EventsSubscribeParams{Subscriptions: []schema.Subscription{
		{PaneClosed: &schema.SubscriptionPaneClosed{}},
		{PaneAgentStatusChanged: &schema.SubscriptionPaneAgentStatusChanged{PaneID: "w9:p9"}},
	}})
	if codeOf(err) != "pane_not_found" {
		t.Fatalf("probe failure: %v", err)
	}
	// Close from another goroutine ends a pending Next.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := sub.Next(ctx)
		if !errors.Is(err, socket.ErrClosed) {
			t.Errorf("Next after Close: %v", err)
		}
	}()
	synctest.Wait() // Next is blocked
	sub.Close()
	wg.Wait()
}

func TestFaultsAndLog(t *testing.T) { synctest.Test(t, testFaultsAndLog) }

func testFaultsAndLog(t *testing.T) {
	srv := simtest.New(t, newWorld(t), sockettest.InMemory)
	c := srv.Client()
	c.Timeout = 300 * time.Millisecond
	ctx := t.Context()
	tests := []struct {
		name  string
		fault sockettest.Fault
		want  error
	}{
		{"hang", sockettest.Fault{Hang: true}, socket.ErrTimeout},
		{"latency over the deadline", sockettest.Fault{Latency: time.Second}, socket.ErrTimeout},
		{"drop before", sockettest.Fault{DropBeforeResponse: true}, socket.ErrEmptyResponse},
		{"drop mid", sockettest.Fault{DropMidResponse: true}, socket.ErrTruncatedResponse},
		{"garbage", sockettest.Fault{Garbage: true}, socket.ErrMalformedResponse},
		{"wrong id", sockettest.Fault{WrongID: true}, socket.ErrProtocol},
		{"herdr error", sockettest.Fault{Error: &schema.ErrorBody{Code: "server_unavailable", Message: "request handling failed: x"}}, socket.ErrServerUnavailable},
	}
	for _, tt := range tests {
		bubbleStep(t, tt.name, func(t *testing.T) {
			srv.SetFault(schema.MethodAgentList, tt.fault)
			defer srv.SetFault(schema.MethodAgentList, sockettest.Fault{})
			start := time.Now()
			_, err := c.AgentList(ctx)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if el := time.Since(start); el > 2*time.Second {
				t.Fatalf("took %v", el)
			}
		})
	}
	// Latency below the deadline only delays.
	srv.SetFault("", sockettest.Fault{Latency: 20 * time.Millisecond})
	if _, err := c.AgentList(ctx); err != nil {
		t.Fatal(err)
	}
	srv.ClearFaults()
	// An oversized response beyond the client's cap.
	srv.SetFault(schema.MethodAgentList, sockettest.Fault{OversizeBytes: 2 << 20})
	small := srv.Client()
	small.MaxResponseBytes = 1 << 20
	if _, err := small.AgentList(ctx); !errors.Is(err, socket.ErrResponseTooLarge) {
		t.Fatalf("oversize: %v", err)
	}
	srv.ClearFaults()
	// Refused connections, then recovery.
	if err := srv.SetRefuse(true); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Ping(ctx); !errors.Is(err, socket.ErrUnavailable) {
		t.Fatalf("refused: %v", err)
	}
	if err := srv.SetRefuse(false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Ping(ctx); err != nil {
		t.Fatalf("after refusal ends: %v", err)
	}
	// The request log.
	srv.ResetRequests()
	_, _ = c.AgentGet(ctx, "brain")
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Method != "agent.get" || string(reqs[0].Params) != `{"target":"brain"}` {
		t.Fatalf("request log %q, want one agent.get line with {\"target\":\"brain\"}", requestLines(reqs))
	}
}

// TestCloseAndMoveEvents: the events pane.close and pane.move emit, ids
// that are never reused, and what a move keeps.
func TestCloseAndMoveEvents(t *testing.T) { synctest.Test(t, testCloseAndMoveEvents) }

func testCloseAndMoveEvents(t *testing.T) {
	srv := simtest.New(t, newWorld(t), sockettest.InMemory, func(s *sockettest.Server) { s.Tick = 2 * time.Millisecond })
	c := srv.Client()
	ctx := t.Context()
	before, _ := c.AgentGet(ctx, "brain")
	res, err := c.PaneMove(ctx, schema.PaneMoveParams{PaneID: "w1:p1", Destination: schema.PaneMoveDestination{Tab: &schema.PaneMoveDestinationTab{TabID: "w2:t1", Split: schema.SplitDirectionRight}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pane.TerminalID != before.TerminalID {
		t.Errorf("terminal id changed on move: %s → %s", before.TerminalID, res.Pane.TerminalID)
	}
	if err := c.PaneClose(ctx, "w1:p3"); err != nil { // a tab with panes left: layout_updated
		t.Fatal(err)
	}
	for _, id := range []string{"w2:p1", "w2:p2", res.Pane.PaneID} { // the last panes of w2: workspace_closed
		if err := c.PaneClose(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	sub, err := c.Subscribe(ctx, schema.EventsSubscribeParams{Subscriptions: []schema.Subscription{
		{PaneMoved: &schema.SubscriptionPaneMoved{}}, {PaneClosed: &schema.SubscriptionPaneClosed{}},
		{LayoutUpdated: &schema.SubscriptionLayoutUpdated{}}, {WorkspaceClosed: &schema.SubscriptionWorkspaceClosed{}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	seen := map[string]int{}
	deadline := time.Now().Add(5 * time.Second)
	for seen["workspace_closed"] == 0 || seen["pane_closed"] < 4 || seen["pane_moved"] == 0 || seen["layout_updated"] == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("events seen %v", seen)
		}
		nctx, cancel := context.WithTimeout(ctx, time.Second)
		ev, err := sub.Next(nctx)
		cancel()
		if err != nil {
			t.Fatalf("%v (seen %v)", err, seen)
		}
		d, err := ev.Plain()
		if err != nil || d.Tag() != ev.Event {
			t.Fatalf("event %s: %v %s", ev.Event, err, ev.Data)
		}
		seen[ev.Event]++
	}
	// Ids are never reused: a new pane gets a number no pane ever had.
	ids, err := srv.World.AddAgents("w1:t1", 1, "fresh")
	if err != nil {
		t.Fatal(err)
	}
	for _, old := range []string{"w1:p1", "w1:p3"} {
		if ids[0] == old {
			t.Fatalf("id %s reused", old)
		}
	}
	// Workspace arguments: exact id, w_N, or a 1-based position.
	for _, arg := range []string{"w1", "w_1", "1"} {
		if _, err := c.PaneList(ctx, arg); err != nil {
			t.Errorf("pane.list %q: %v", arg, err)
		}
	}
}

// requestLines lists the logged lines for a failure message.
func requestLines(reqs []sockettest.Request) []string {
	lines := make([]string, len(reqs))
	for i, r := range reqs {
		lines[i] = r.Line
	}
	return lines
}
