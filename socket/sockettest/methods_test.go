package sockettest_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

func ptr[T any](v T) *T { return &v }

const testWorld = `{"workspaces":[
 {"id":"w1","label":"main","tabs":[{"id":"w1:t1","panes":[
   {"id":"w1:p1","cwd":"/repo","agent":{"kind":"claude","name":"brain","status":"working"}},
   {"id":"w1:p2","agent":{"kind":"pi","status":"idle"}},
   {"id":"w1:p3"},
   {"id":"w1:p4","agent":{"kind":"codex","name":"blocky","status":"blocked"}},
   {"id":"w1:p5","agent":{"kind":"my-hook-bot","name":"custom","status":"idle"}},
   {"id":"w1:p6","agent":{"kind":"claude","name":"pending","status":"idle","launch_pending":true}},
   {"id":"w1:p7","agent":{"kind":"codex","name":"gone","status":"idle","not_foreground":true}},
   {"id":"w1:p8","agent":{"kind":"copilot","name":"pilot","status":"idle","bracketed_paste":true}},
   {"id":"w1:p9","agent":{"kind":"claude","name":"broken","status":"idle","prompt_fails":true}},
   {"id":"w1:pA","agent":{"kind":"claude","name":"finished","status":"done"}}
 ]}]},
 {"id":"w2","label":"other","tabs":[{"id":"w2:t1","panes":[
   {"id":"w2:p1","agent":{"kind":"codex","name":"far","status":"idle"}},
   {"id":"w2:p2"}
 ]}]}]}`

func newWorld(t *testing.T) *sockettest.World {
	t.Helper()
	w, err := sockettest.ParseWorld([]byte(testWorld))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func codeOf(err error) string { return socket.CodeOf(err) }

func TestWorldFile(t *testing.T) {
	for _, bad := range []string{
		`{"workspaces":[{"id":"w1","tabs":[]}]}`,
		`{"workspaces":[{"tabs":[{"panes":[{"agent":{"kind":"x","status":"sleepy"}}]}]}]}`,
		`{"workspaces":[{"tabs":[{"panes":[{"id":"a"},{"id":"a"}]}]}]}`,
		`{"workspaces":[],"unknown":1}`,
		`{"workspaces":[{"tabs":[{"panes":[{"agent":{}}]}]}]}`,
	} {
		if _, err := sockettest.ParseWorld([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	// The example world works, with generated terminal ids.
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"id":"w1","label":"main","tabs":[{"id":"w1:t1","panes":[{"id":"w1:p1","cwd":"/repo","agent":{"kind":"claude","name":"brain","status":"working"}},{"id":"w1:p2","agent":{"kind":"pi","status":"idle"}},{"id":"w1:p3"}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w)
	agents, err := srv.Client().AgentList(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(agents) != 2 || *agents[0].Name != "brain" || agents[1].Name != nil || !strings.HasPrefix(agents[0].TerminalID, "term_") {
		t.Fatalf("agents = %+v", agents)
	}
	// The default world has two workspaces, named and unnamed agents and a shell.
	d := sockettest.DefaultWorld()
	ids := strings.Join(d.PaneIDs(), " ")
	if !strings.Contains(ids, "w1:") || !strings.Contains(ids, "w2:") {
		t.Fatalf("default world panes %s", ids)
	}
}

func TestEncodeNumber(t *testing.T) {
	for n, want := range map[uint64]string{1: "1", 9: "9", 10: "A", 31: "Z", 32: "0", 33: "11", 64: "10", 65: "21", 1056: "00", 1057: "111"} {
		if got := sockettest.EncodeNumber(n); got != want {
			t.Errorf("EncodeNumber(%d) = %q, want %q", n, got, want)
		}
		if back, ok := sockettest.DecodeNumber(want); !ok || back != n {
			t.Errorf("DecodeNumber(%q) = %d, %v", want, back, ok)
		}
	}
}

func TestAgentListAndGet(t *testing.T) {
	srv := simtest.New(t, newWorld(t))
	c := srv.Client()
	ctx := context.Background()
	agents, err := c.AgentList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var panes []string
	for _, a := range agents {
		panes = append(panes, a.PaneID)
	}
	if got := strings.Join(panes, ","); got != "w1:p1,w1:p2,w1:p4,w1:p5,w1:p6,w1:p7,w1:p8,w1:p9,w1:pA,w2:p1" {
		t.Fatalf("agent.list panes %s: unnamed agents in, shells out, layout order", got)
	}
	// Optional fields are omitted; state_change_seq is always written.
	var raw jsonx.RawMessage
	if err := c.Call(ctx, schema.MethodAgentList, nil, &raw); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Agents []map[string]any `json:"agents"`
	}
	_ = jsonx.Unmarshal(raw, &list)
	if _, ok := list.Agents[1]["name"]; ok {
		t.Error("unnamed agent has a name key")
	}
	if _, ok := list.Agents[1]["launch_pending"]; ok {
		t.Error("launch_pending written while false")
	}
	if _, ok := list.Agents[1]["state_change_seq"]; !ok {
		t.Error("state_change_seq missing")
	}
	if list.Agents[4]["launch_pending"] != true {
		t.Error("launch_pending missing on a pending launch")
	}
	statuses := map[string]schema.AgentStatus{}
	for _, a := range agents {
		statuses[a.PaneID] = a.AgentStatus
	}
	if statuses["w1:pA"] != schema.AgentStatusDone || statuses["w1:p2"] != schema.AgentStatusIdle {
		t.Errorf("done/idle mapping: %v", statuses)
	}

	tests := []struct {
		target, wantPane, wantCode string
	}{
		{"brain", "w1:p1", ""},
		{"w1:p2", "w1:p2", ""},                        // unnamed agent by pane id
		{"far", "w2:p1", ""},                          // names resolve across workspaces
		{"w1:p3", "", "agent_not_found"},              // a shell is not an agent
		{"claude", "", "agent_not_found"},             // kind labels are not targets
		{agents[0].TerminalID, "", "agent_not_found"}, // terminal ids are not targets
		{"nobody", "", "agent_not_found"},
	}
	for _, tt := range tests {
		a, err := c.AgentGet(ctx, tt.target)
		if codeOf(err) != tt.wantCode || (err == nil && a.PaneID != tt.wantPane) {
			t.Errorf("agent.get %s = %s, %v; want %s %s", tt.target, a.PaneID, err, tt.wantPane, tt.wantCode)
		}
	}
	_, err = c.AgentGet(ctx, "nobody")
	if err.Error() != "herdr agent.get: agent_not_found: agent target nobody not found" {
		t.Errorf("message %q", err)
	}
	// Names set outside rename can collide: ambiguous.
	if err := srv.World.Rename("w2:p1", "brain"); err != nil {
		t.Fatal(err)
	}
	_, err = c.AgentGet(ctx, "brain")
	var he *socket.Error
	if !errors.As(err, &he) || he.Code != "agent_target_ambiguous" ||
		!strings.Contains(he.Message, "candidates: terminal_id=") || !strings.Contains(he.Message, "cwd=/repo status=Working; terminal_id=") {
		t.Errorf("ambiguous: %v", err)
	}
}

func TestAgentPrompt(t *testing.T) {
	srv := simtest.New(t, newWorld(t), func(s *sockettest.Server) { s.SubmitDelay = 20 * time.Millisecond })
	c := srv.Client()
	ctx := context.Background()
	tests := []struct {
		target, text, code, msg string
	}{
		{"nobody", "", "empty_agent_prompt", "agent prompt must not be empty"}, // empty is checked first
		{"nobody", "x", "agent_not_found", "agent target nobody not found"},
		{"blocky", "x", "agent_blocked", "agent blocky is blocked and requires interactive input"},
		{"w1:p4", "", "empty_agent_prompt", "agent prompt must not be empty"},
		{"custom", "x", "agent_not_ready", "agent custom is not an active named agent"},
		{"pending", "x", "agent_not_ready", "agent pending is not an active named agent"},
		{"gone", "x", "agent_not_ready", "agent gone is no longer the pane foreground process"},
		{"broken", "x", "agent_prompt_failed", ""},
	}
	for _, tt := range tests {
		_, err := c.AgentPrompt(ctx, schema.AgentPromptParams{Target: tt.target, Text: tt.text})
		var he *socket.Error
		if !errors.As(err, &he) || he.Code != tt.code || (tt.msg != "" && he.Message != tt.msg) {
			t.Errorf("prompt %s %q: %v; want %s %q", tt.target, tt.text, err, tt.code, tt.msg)
		}
	}
	if in := srv.World.Inputs("w1:p4"); len(in) != 0 {
		t.Errorf("a blocked agent received %q", in)
	}
	// Success: text at once (in paste brackets: a ready agent has
	// bracketed paste on), Enter as a separate write later.
	before, _ := srv.World.Agent("finished")
	info, err := c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "finished", Text: "line one\nline two"})
	if err != nil {
		t.Fatal(err)
	}
	if info.Revision != before.Revision || info.AgentStatus != schema.AgentStatusDone {
		t.Errorf("prompted agent %+v is not the pre-submission record", info)
	}
	if in := srv.World.Inputs("w1:pA"); len(in) != 1 || in[0] != "\x1b[200~line one\nline two\x1b[201~" {
		t.Fatalf("inputs right after the prompt: %q", in)
	}
	if p := srv.World.Prompts("w1:pA"); len(p) != 1 || p[0] != "line one\nline two" {
		t.Fatalf("prompts %q", p)
	}
	waitFor(t, func() bool { return len(srv.World.Inputs("w1:pA")) == 2 })
	if in := srv.World.Inputs("w1:pA"); in[1] != "\r" {
		t.Fatalf("inputs %q, want the text then Enter", in)
	}
	// Bracketed paste and Copilot's focus-in report.
	if _, err := c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "pilot", Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	if in := srv.World.Inputs("w1:p8"); len(in) < 2 || in[0] != "\x1b[I" || in[1] != "\x1b[200~hello\x1b[201~" {
		t.Fatalf("copilot inputs %q", in)
	}
	// pane.read and agent.read show the pane as the screen would: the
	// turn the agent received, then its (empty) composer; revision 0.
	waitFor(t, func() bool { return len(srv.World.Submissions("w1:p8")) == 1 })
	r, err := c.PaneRead(ctx, schema.PaneReadParams{PaneID: "w1:p8", Source: schema.ReadSourceRecent})
	if err != nil || !strings.HasPrefix(r.Text, "hello\n\n") || !strings.HasSuffix(r.Text, "\n> ") || r.Revision != 0 {
		t.Fatalf("pane.read = %+v, %v", r, err)
	}
	var ar schema.ResultPaneRead
	if err := c.Call(ctx, schema.MethodAgentRead, schema.AgentReadParams{Target: "pilot", Source: schema.ReadSourceRecent}, &ar); err != nil || ar.Read.Text != r.Text {
		t.Fatalf("agent.read = %+v, %v", ar, err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestAgentPromptWait(t *testing.T) {
	srv := simtest.New(t, newWorld(t), func(s *sockettest.Server) {
		s.Tick = 5 * time.Millisecond
		s.SubmitDelay = time.Millisecond
		s.EffectTimeout = 100 * time.Millisecond
	})
	c := srv.Client()
	ctx := context.Background()
	wait := func(until []schema.AgentStatus, ms uint64) *schema.AgentPromptWaitOptions {
		o := &schema.AgentPromptWaitOptions{Until: until}
		if ms > 0 {
			o.TimeoutMS = &ms
		}
		return o
	}
	// No state change (the composer never submits): timeout when
	// timeout_ms ≤ the gate, stalled otherwise.
	if err := srv.World.SetBehaviour("w1:pA", sockettest.Behaviour{Stuck: true}); err != nil {
		t.Fatal(err)
	}
	_, err := c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "finished", Text: "x", Wait: wait(nil, 50)})
	if codeOf(err) != "timeout" {
		t.Errorf("short timeout: %v", err)
	}
	_, err = c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "finished", Text: "x", Wait: wait(nil, 10000)})
	if codeOf(err) != "agent_prompt_stalled" || !strings.Contains(err.Error(), "status is done and state_change_seq remained") {
		t.Errorf("stalled: %v", err)
	}
	// Resolution errors win over an empty prompt; a blocked agent starts no wait.
	if _, err := c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "nobody", Text: "", Wait: wait(nil, 0)}); codeOf(err) != "agent_not_found" {
		t.Errorf("wait + unknown target: %v", err)
	}
	if _, err := c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "blocky", Text: "x", Wait: wait(nil, 0)}); codeOf(err) != "agent_blocked" {
		t.Errorf("wait + blocked: %v", err)
	}
	// The agent works, then finishes: the wait returns the matching record.
	_ = srv.World.SetBehaviour("w1:pA", sockettest.Behaviour{TurnTime: -1})
	go func() {
		time.Sleep(20 * time.Millisecond)
		_ = srv.World.SetStatus("w1:pA", "working")
		time.Sleep(20 * time.Millisecond)
		_ = srv.World.SetStatus("w1:pA", "done")
	}()
	info, err := c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "finished", Text: "go", Wait: wait([]schema.AgentStatus{schema.AgentStatusDone}, 5000)})
	if err != nil || info.AgentStatus != schema.AgentStatusDone {
		t.Fatalf("wait for done: %+v, %v", info, err)
	}
	// The pane closes mid-wait: agent_not_running.
	go func() {
		time.Sleep(20 * time.Millisecond)
		_ = srv.World.SetStatus("w1:p1", "working")
		_ = srv.World.Close("w1:p1")
	}()
	_, err = c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "brain", Text: "go", Wait: wait(nil, 5000)})
	if codeOf(err) != "agent_not_running" || !strings.Contains(err.Error(), "agent is no longer running in the target pane") {
		t.Errorf("closed mid-wait: %v", err)
	}
}

func TestAgentWait(t *testing.T) {
	srv := simtest.New(t, newWorld(t), func(s *sockettest.Server) { s.Tick = 5 * time.Millisecond })
	c := srv.Client()
	ctx := context.Background()
	ms := uint64(50)
	var r schema.ResultAgentInfo
	// Already in the default until set: immediate.
	if err := c.Call(ctx, schema.MethodAgentWait, schema.AgentWaitParams{Target: "finished"}, &r); err != nil || r.Agent.AgentStatus != schema.AgentStatusDone {
		t.Fatalf("immediate: %+v %v", r, err)
	}
	err := c.Call(ctx, schema.MethodAgentWait, schema.AgentWaitParams{Target: "brain", Until: []schema.AgentStatus{schema.AgentStatusIdle}, TimeoutMS: &ms}, &r)
	if codeOf(err) != "timeout" || !strings.Contains(err.Error(), "timed out waiting for agent status") {
		t.Fatalf("timeout: %v", err)
	}
	go func() { time.Sleep(20 * time.Millisecond); _ = srv.World.SetStatus("w1:p1", "idle") }()
	if err := c.Call(ctx, schema.MethodAgentWait, schema.AgentWaitParams{Target: "brain"}, &r); err != nil || r.Agent.AgentStatus != schema.AgentStatusIdle {
		t.Fatalf("match: %+v %v", r, err)
	}
	// A client that leaves abandons the wait: nothing is written.
	cctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if err := c.Call(cctx, schema.MethodAgentWait, schema.AgentWaitParams{Target: "far", Until: []schema.AgentStatus{schema.AgentStatusBlocked}}, &r); !errors.Is(err, socket.ErrTimeout) {
		t.Fatalf("client-side deadline: %v", err)
	}
}

func TestAgentRename(t *testing.T) {
	srv := simtest.New(t, newWorld(t))
	c := srv.Client()
	ctx := context.Background()
	tests := []struct {
		target string
		name   *string
		code   string
		msg    string
	}{
		{"nobody", ptr("Bad Name"), "agent_not_found", "agent target nobody not found"}, // resolution first
		{"w1:p2", ptr("Bad Name"), "invalid_agent_name", "agent name must start with a lowercase letter and contain only lowercase letters, digits, '-' or '_' (1-32 characters)"},
		{"w1:p2", ptr(""), "invalid_agent_name", ""},
		{"w1:p2", ptr("1abc"), "invalid_agent_name", ""},
		{"w1:p2", ptr(strings.Repeat("a", 33)), "invalid_agent_name", ""},
		{"w1:p2", ptr("far"), "agent_name_taken", "agent name far is already used; candidates: terminal_id="}, // global uniqueness
		{"pending", ptr("pending2"), "agent_launch_pending", "agent name cannot change while startup is pending"},
		{"brain", ptr("brain"), "", ""}, // its own name
		{"w1:p2", ptr(strings.Repeat("a", 32)), "", ""},
	}
	for _, tt := range tests {
		_, err := c.AgentRename(ctx, tt.target, tt.name)
		var he *socket.Error
		if tt.code == "" {
			if err != nil {
				t.Errorf("rename %s → %v: %v", tt.target, *tt.name, err)
			}
			continue
		}
		if !errors.As(err, &he) || he.Code != tt.code || !strings.HasPrefix(he.Message, tt.msg) {
			t.Errorf("rename %s → %q: %v; want %s %q", tt.target, *tt.name, err, tt.code, tt.msg)
		}
	}
	_, err := c.AgentRename(ctx, "w1:p2", ptr("far"))
	if !strings.Contains(err.Error(), "pane_id=w2:p1 workspace_id=w2 tab_id=w2:t1 cwd=unknown status=Idle") {
		t.Errorf("candidates format: %v", err)
	}
	// null clears; the name no longer resolves.
	info, err := c.AgentRename(ctx, "brain", nil)
	if err != nil || info.Name != nil {
		t.Fatalf("clear: %+v %v", info, err)
	}
	if _, err := c.AgentGet(ctx, "brain"); codeOf(err) != "agent_not_found" {
		t.Fatalf("cleared name still resolves: %v", err)
	}
}

func TestPanes(t *testing.T) {
	srv := simtest.New(t, newWorld(t))
	c := srv.Client()
	ctx := context.Background()
	p, err := c.PaneGet(ctx, "w1:p3")
	if err != nil || p.AgentStatus != schema.AgentStatusUnknown || p.Agent != nil {
		t.Fatalf("shell pane: %+v %v", p, err)
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
		t.Fatalf("move result %+v", res)
	}
	if p, err := c.PaneGet(ctx, "w1:p1"); err != nil || p.PaneID != newID {
		t.Fatalf("alias through pane.get: %+v %v", p, err)
	}
	if _, err := c.AgentGet(ctx, "w1:p1"); codeOf(err) != "agent_not_found" {
		t.Fatalf("alias as agent target: %v", err)
	}
	if a, err := c.AgentGet(ctx, newID); err != nil || *a.Name != "brain" || a.WorkspaceID != "w2" {
		t.Fatalf("agent under its new id: %+v %v", a, err)
	}
	// Same-workspace move keeps the id.
	res, err = c.PaneMove(ctx, schema.PaneMoveParams{PaneID: "w1:p2", Destination: schema.PaneMoveDestination{NewTab: &schema.PaneMoveDestinationNewTab{}}})
	if err != nil || res.Pane.PaneID != "w1:p2" || res.CreatedTab == nil {
		t.Fatalf("new tab move: %+v %v", res, err)
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
		t.Fatalf("workspaces after closing all of w2: %+v", ws)
	}
}

func TestListsAndSnapshot(t *testing.T) {
	srv := simtest.New(t, newWorld(t))
	c := srv.Client()
	ctx := context.Background()
	ws, err := c.WorkspaceList(ctx)
	if err != nil || len(ws) != 2 || ws[0].Number != 1 || ws[0].PaneCount != 10 || ws[1].Label != "other" || !ws[0].Focused {
		t.Fatalf("workspace.list %+v %v", ws, err)
	}
	tabs, err := c.TabList(ctx, "w2")
	if err != nil || len(tabs) != 1 || tabs[0].Label != "1" {
		t.Fatalf("tab.list %+v %v", tabs, err)
	}
	if _, err := c.TabList(ctx, "nope"); codeOf(err) != "workspace_not_found" {
		t.Fatalf("tab.list unknown: %v", err)
	}
	snap, err := c.SessionSnapshot(ctx)
	if err != nil || snap.Protocol != 20 || snap.Version != "0.8.2" || len(snap.Agents) != 10 || len(snap.Panes) != 12 || len(snap.Layouts) != 2 || *snap.FocusedPaneID != "w1:p1" {
		t.Fatalf("snapshot %+v %v", snap, err)
	}
	// Any other method of the schema: a distinct code.
	err = c.Call(ctx, schema.MethodWorkspaceCreate, schema.WorkspaceCreateParams{}, nil)
	if codeOf(err) != "not_implemented_in_simulator" {
		t.Fatalf("unimplemented: %v", err)
	}
}

func TestEvents(t *testing.T) {
	srv := simtest.New(t, newWorld(t), func(s *sockettest.Server) { s.Tick = 5 * time.Millisecond })
	c := srv.Client()
	ctx := context.Background()
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
	time.Sleep(20 * time.Millisecond)
	sub.Close()
	wg.Wait()
}

func TestFaultsAndLog(t *testing.T) {
	srv := simtest.New(t, newWorld(t))
	c := srv.Client()
	c.Timeout = 300 * time.Millisecond
	ctx := context.Background()
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
		t.Run(tt.name, func(t *testing.T) {
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
	small := &socket.Client{Path: srv.Path(), MaxResponseBytes: 1 << 20}
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
		t.Fatalf("log %+v", reqs)
	}
}

// TestAgentLifecycle covers the state model of the facts sheet's
// checklist: seq bumps, detection, seen/unseen, managed launches, and what
// clears a name.
func TestAgentLifecycle(t *testing.T) {
	srv := simtest.New(t, newWorld(t), func(s *sockettest.Server) { s.Tick = 5 * time.Millisecond })
	c := srv.Client()
	ctx := context.Background()
	w := srv.World
	get := func(target string) schema.AgentInfo {
		t.Helper()
		a, err := c.AgentGet(ctx, target)
		if err != nil {
			t.Fatalf("agent.get %s: %v", target, err)
		}
		return a
	}
	// A global counter: every state change bumps it, for the agent that changed.
	a0, b0 := get("w1:p2"), get("finished")
	_ = w.SetStatus("w1:p2", "working")
	a1 := get("w1:p2")
	if a1.StateChangeSeq <= a0.StateChangeSeq || a1.StateChangeSeq <= b0.StateChangeSeq || get("finished").StateChangeSeq != b0.StateChangeSeq {
		t.Errorf("state_change_seq: %d → %d (other agent %d)", a0.StateChangeSeq, a1.StateChangeSeq, b0.StateChangeSeq)
	}
	// Finishing in a background workspace reads done; in the active tab, idle.
	_ = w.SetStatus("w1:p2", "idle")
	if s := get("w1:p2").AgentStatus; s != schema.AgentStatusIdle {
		t.Errorf("active-tab working → idle reads %s, want idle", s)
	}
	_ = w.SetStatus("w2:p1", "working")
	_ = w.SetStatus("w2:p1", "idle")
	if s := get("w2:p1").AgentStatus; s != schema.AgentStatusDone {
		t.Errorf("background working → idle reads %s, want done", s)
	}
	_ = w.SetStatus("w1:p1", "idle")
	if s := get("brain").AgentStatus; s != schema.AgentStatusIdle {
		t.Errorf("focused working → idle reads %s, want idle", s)
	}
	// Detection: a shell gets an unnamed agent in status unknown; its first
	// idle reads idle, not done.
	if err := w.Detect("w1:p3", "claude"); err != nil {
		t.Fatal(err)
	}
	if d := get("w1:p3"); d.AgentStatus != schema.AgentStatusUnknown || d.Name != nil || *d.Agent != "claude" {
		t.Errorf("detected %+v", d)
	}
	_ = w.SetStatus("w1:p3", "idle")
	if s := get("w1:p3").AgentStatus; s != schema.AgentStatusIdle {
		t.Errorf("first idle after detection reads %s", s)
	}
	// A managed launch: pending, then blocked during start-up (still
	// pending: prompt says blocked, rename says pending), then active.
	_ = w.SetStatus("w1:p6", "blocked")
	p := get("pending")
	if !p.LaunchPending || p.AgentStatus != schema.AgentStatusBlocked {
		t.Errorf("blocked launch %+v", p)
	}
	if _, err := c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "pending", Text: "x"}); codeOf(err) != "agent_blocked" {
		t.Errorf("prompt during blocked launch: %v", err)
	}
	if _, err := c.AgentRename(ctx, "pending", ptr("other")); codeOf(err) != "agent_launch_pending" {
		t.Errorf("rename during blocked launch: %v", err)
	}
	_ = w.SetStatus("w1:p6", "idle")
	if p := get("pending"); p.LaunchPending || !p.InteractiveReady || p.AgentStatus != schema.AgentStatusIdle {
		t.Errorf("active launch %+v", p)
	}
	// Exit and replacement clear the name.
	_ = w.Exit("w1:p7")
	if _, err := c.AgentGet(ctx, "gone"); codeOf(err) != "agent_not_found" {
		t.Errorf("after exit: %v", err)
	}
	_ = w.Detect("w1:p9", "codex") // a different agent replaces claude
	if _, err := c.AgentGet(ctx, "broken"); codeOf(err) != "agent_not_found" {
		t.Errorf("after replacement: %v", err)
	}
	// A move to another workspace ends an agent.wait on the pane.
	go func() { time.Sleep(30 * time.Millisecond); _, _ = w.Move("w1:p8", "w2") }()
	var r schema.ResultAgentInfo
	err := c.Call(ctx, schema.MethodAgentWait, schema.AgentWaitParams{Target: "pilot", Until: []schema.AgentStatus{schema.AgentStatusBlocked}}, &r)
	if codeOf(err) != "agent_not_running" {
		t.Errorf("wait across a move: %v", err)
	}
}

// TestCloseAndMoveEvents: the events pane.close and pane.move emit, ids
// that are never reused, and what a move keeps.
func TestCloseAndMoveEvents(t *testing.T) {
	srv := simtest.New(t, newWorld(t), func(s *sockettest.Server) { s.Tick = 2 * time.Millisecond })
	c := srv.Client()
	ctx := context.Background()
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

func TestRenameWithoutLabel(t *testing.T) {
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"tabs":[{"panes":[{"id":"w1:p1","agent":{"name":"starting","status":"unknown"}}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w)
	_, err = srv.Client().AgentRename(context.Background(), "starting", ptr("other"))
	var he *socket.Error
	if !errors.As(err, &he) || he.Code != "agent_not_found" || he.Message != "agent target does not currently host an agent" {
		t.Fatalf("rename of a name without an agent label: %v", err)
	}
}
