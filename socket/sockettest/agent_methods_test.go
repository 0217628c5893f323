package sockettest_test

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

func TestAgentListAndGet(t *testing.T) {
	srv := simtest.New(t, newWorld(t))
	c := srv.Client()
	ctx := t.Context()
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

func TestAgentPrompt(t *testing.T) { synctest.Test(t, testAgentPrompt) }

func testAgentPrompt(t *testing.T) {
	srv := simtest.New(t, newWorld(t), sockettest.InMemory, func(s *sockettest.Server) { s.SubmitDelay = 20 * time.Millisecond })
	c := srv.Client()
	ctx := t.Context()
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
		t.Errorf("prompt answered revision %d, %s; want the pre-submission record: revision %d, done", info.Revision, info.AgentStatus, before.Revision)
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
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Text, "hello\n\n") || !strings.HasSuffix(r.Text, "\n> ") || r.Revision != 0 {
		t.Fatalf("pane.read = %q at revision %d, want \"hello\\n\\n…\\n> \" at 0", r.Text, r.Revision)
	}
	var ar schema.ResultPaneRead
	if err := c.Call(ctx, schema.MethodAgentRead, schema.AgentReadParams{Target: "pilot", Source: schema.ReadSourceRecent}, &ar); err != nil {
		t.Fatal(err)
	}
	if ar.Read.Text != r.Text {
		t.Fatalf("agent.read = %q, want pane.read's %q", ar.Read.Text, r.Text)
	}
}

func TestAgentRename(t *testing.T) {
	srv := simtest.New(t, newWorld(t))
	c := srv.Client()
	ctx := t.Context()
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
		t.Fatalf("rename to null = %s, %v; want no name", deref(info.Name), err)
	}
	if _, err := c.AgentGet(ctx, "brain"); codeOf(err) != "agent_not_found" {
		t.Fatalf("cleared name still resolves: %v", err)
	}
}

func TestRenameWithoutLabel(t *testing.T) {
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"tabs":[{"panes":[{"id":"w1:p1","agent":{"name":"starting","status":"unknown"}}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w)
	_, err = srv.Client().AgentRename(t.Context(), "starting", ptr("other"))
	var he *socket.Error
	if !errors.As(err, &he) || he.Code != "agent_not_found" || he.Message != "agent target does not currently host an agent" {
		t.Fatalf("rename of a name without an agent label: %v", err)
	}
}
