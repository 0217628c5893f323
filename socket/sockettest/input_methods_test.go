package sockettest_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// TestInputMethods: what each input method writes to the terminal (one
// write per key for pane.send_keys, one write in all for agent.send_keys
// and pane.send_input), and Herdr's refusals, in its order: nothing is
// written when any key is unknown.
func TestInputMethods(t *testing.T) {
	srv := simtest.New(t, nil) // the built-in world
	c := srv.Client()
	ctx := t.Context()
	tests := []struct {
		name   string
		call   func() error
		pane   string
		writes []string // what the call added to the pane's terminal
		code   string
		msg    string
	}{
		{"send_text raw", func() error { return c.PaneSendText(ctx, "w1:p4", "ls\n-l\r") }, "w1:p4", []string{"ls\n-l\r"}, "", ""},
		{"send_text empty", func() error { return c.PaneSendText(ctx, "w1:p4", "") }, "w1:p4", nil, "", ""},
		{"send_text to an agent: no brackets", func() error { return c.PaneSendText(ctx, "w1:p2", "draft") }, "w1:p2", []string{"draft"}, "", ""},
		{"send_keys one write each", func() error { return c.PaneSendKeys(ctx, "w1:p4", "ctrl+u", "Escape", "Enter", "C-c") }, "w1:p4",
			[]string{"\x15", "\x1b", "\r", "\x03"}, "", ""},
		{"send_keys unknown key", func() error { return c.PaneSendKeys(ctx, "w1:p4", "ctrl+h", "C-u") }, "w1:p4", nil,
			"invalid_key", "unsupported key C-u"},
		{"send_keys untrimmed key in message", func() error { return c.PaneSendKeys(ctx, "w1:p4", " prefix+h ") }, "w1:p4", nil,
			"invalid_key", "unsupported key  prefix+h "},
		{"send_keys no keys", func() error { return c.PaneSendKeys(ctx, "w1:p4") }, "w1:p4", nil, "", ""},
		{"send_keys pane_not_found", func() error { return c.PaneSendKeys(ctx, "w9:p9", "Enter") }, "w1:p4", nil,
			"pane_not_found", "pane w9:p9 not found"},
		{"send_input bracketed with keys", func() error { return c.PaneSendInput(ctx, "w1:p2", "A != B", "Enter") }, "w1:p2",
			[]string{"\x1b[200~A != B\x1b[201~\r"}, "", ""},
		{"send_input raw to a shell", func() error { return c.PaneSendInput(ctx, "w1:p4", "make", "Enter") }, "w1:p4", []string{"make\r"}, "", ""},
		{"send_input unknown key", func() error { return c.PaneSendInput(ctx, "w1:p4", "hello", "ctrl+h", "prefix+h") }, "w1:p4", nil,
			"invalid_key", "unsupported key prefix+h"},
		{"agent.send_keys one write", func() error { return c.AgentSendKeys(ctx, "reviewer", "ctrl+u", "Enter") }, "w1:p2", []string{"\x15\r"}, "", ""},
		{"agent.send_keys to a blocked agent", func() error { return c.AgentSendKeys(ctx, "ops", "Enter") }, "w2:p1", []string{"\r"}, "", ""},
		{"agent.send_keys to a shell", func() error { return c.AgentSendKeys(ctx, "w1:p4", "Enter") }, "w1:p4", nil,
			"agent_not_found", "agent target w1:p4 not found"},
		{"agent.send_keys unknown key", func() error { return c.AgentSendKeys(ctx, "reviewer", "Enter", "Delete") }, "w1:p2", nil,
			"invalid_key", "unsupported key Delete"},
	}
	for _, tt := range tests {
		before := len(srv.World.Inputs(tt.pane))
		err := tt.call()
		if got := socket.CodeOf(err); got != tt.code || (err != nil && !strings.Contains(err.Error(), tt.msg)) {
			t.Errorf("%s: %v, want %s %q", tt.name, err, tt.code, tt.msg)
		}
		if got := srv.World.Inputs(tt.pane)[before:]; strings.Join(got, "|") != strings.Join(tt.writes, "|") {
			t.Errorf("%s: wrote %q, want %q", tt.name, got, tt.writes)
		}
	}
}

// TestAgentSendKeysNotReady: a custom label an integration reported is
// not a built-in agent kind, and a pane whose foreground process is not
// the agent is not ready; both are refused before the keys are parsed.
func TestAgentSendKeysNotReady(t *testing.T) {
	srv := simtest.New(t, nil)
	c := srv.Client()
	ctx := t.Context()
	if err := c.PaneReportAgent(ctx, schema.PaneReportAgentParams{PaneID: "w1:p4", Source: "custom:mine", Agent: "mybot", State: schema.PaneAgentStateIdle}); err != nil {
		t.Fatal(err)
	}
	err := c.AgentSendKeys(ctx, "w1:p4", "bogus-key")
	if socket.CodeOf(err) != "agent_not_ready" || !strings.Contains(err.Error(), "agent w1:p4 is not an active named agent") {
		t.Fatalf("custom label: %v", err)
	}
}

// TestReportAgent: pane.report_agent, as Herdr merges a report with screen
// detection.
func TestReportAgent(t *testing.T) { synctest.Test(t, testReportAgent) }

func testReportAgent(t *testing.T) {
	srv := simtest.New(t, nil, sockettest.InMemory)
	c := srv.Client()
	ctx := t.Context()
	sub, err := c.Subscribe(ctx, schema.EventsSubscribeParams{Subscriptions: []schema.Subscription{
		{PaneAgentDetected: &schema.SubscriptionPaneAgentDetected{}},
		{PaneAgentStatusChanged: &schema.SubscriptionPaneAgentStatusChanged{PaneID: "w1:p4"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	events := func(n int) []string { t.Helper(); return nextEvents(t, sub, n) }
	report := func(pane, source, agent string, state schema.PaneAgentState, seq *uint64) {
		t.Helper()
		if err := c.PaneReportAgent(ctx, schema.PaneReportAgentParams{PaneID: pane, Source: source, Agent: agent, State: state, Seq: seq}); err != nil {
			t.Fatal(err)
		}
	}
	status := func(target string) (schema.AgentStatus, uint64) {
		t.Helper()
		a, err := c.AgentGet(ctx, target)
		if err != nil {
			t.Fatal(err)
		}
		return a.AgentStatus, a.StateChangeSeq
	}
	// A shell becomes an agent (the alias normalised), working.
	report("w1:p4", "herdr:claude", " claude-code ", schema.PaneAgentStateWorking, nil)
	st, seq0 := status("w1:p4")
	if a, _ := c.AgentGet(ctx, "w1:p4"); st != schema.AgentStatusWorking || a.Agent == nil || *a.Agent != "claude" {
		t.Fatalf("after the report: %s, agent %s; want working, claude", st, deref(a.Agent))
	}
	if got := strings.Join(events(2), " "); got != "pane_agent_detected:claude pane.agent_status_changed:working" {
		t.Fatalf("events %s", got)
	}
	// Without seq: ignored once the source sent one; an older seq too.
	report("w1:p4", "herdr:claude", "claude", schema.PaneAgentStateIdle, ptr(uint64(5)))
	report("w1:p4", "herdr:claude", "claude", schema.PaneAgentStateWorking, ptr(uint64(5)))
	report("w1:p4", "herdr:claude", "claude", schema.PaneAgentStateWorking, nil)
	if st, seq := status("w1:p4"); st != schema.AgentStatusIdle || seq != seq0+1 {
		t.Fatalf("after stale reports: %s seq %d (was %d)", st, seq, seq0)
	}
	if got := strings.Join(events(1), " "); got != "pane.agent_status_changed:idle" {
		t.Fatalf("events %s", got)
	}
	// A report of the same state changes nothing; another source is
	// sequenced on its own (its first report, without seq, counts).
	report("w1:p4", "other", "claude", schema.PaneAgentStateIdle, nil)
	report("w1:p4", "other", "claude", schema.PaneAgentStateBlocked, nil)
	if got := strings.Join(events(1), " "); got != "pane.agent_status_changed:blocked" {
		t.Fatalf("events %s (the same-state report emitted one?)", got)
	}
	// Refusals.
	err = c.PaneReportAgent(ctx, schema.PaneReportAgentParams{PaneID: "w1:p4", Source: "s", Agent: "  ", State: schema.PaneAgentStateIdle})
	if socket.CodeOf(err) != "invalid_agent" || !strings.Contains(err.Error(), "agent label must not be empty") {
		t.Fatalf("empty agent: %v", err)
	}
	err = c.PaneReportAgent(ctx, schema.PaneReportAgentParams{PaneID: "w9:p9", Source: "s", Agent: "a", State: schema.PaneAgentStateIdle})
	if socket.CodeOf(err) != "pane_not_found" {
		t.Fatalf("unknown pane: %v", err)
	}
}

// TestReportOverridesDetection: a report holds against screen detection
// (the modelled turn), except that a dialog detection sees afterwards
// (blocked) shows through for an ordinary integration; a full-lifecycle
// one (herdr:pi for pi) ignores detection entirely; a report naming a
// different built-in agent than the detected one, or from a session-only
// integration, is ignored.
func TestReportOverridesDetection(t *testing.T) {
	tests := []struct {
		name, kind, source, agent string
		steps                     []string // "r:<state>" a report, "d:<status>" detection
		want                      []schema.AgentStatus
	}{
		{"claude hooks", "claude", "herdr:claude", "claude",
			[]string{"r:working", "d:idle", "d:blocked", "r:working", "d:idle"},
			[]schema.AgentStatus{schema.AgentStatusWorking, schema.AgentStatusWorking, schema.AgentStatusBlocked, schema.AgentStatusWorking, schema.AgentStatusWorking}},
		{"pi full lifecycle", "pi", "herdr:pi", "pi",
			[]string{"r:working", "d:blocked", "d:idle", "r:idle"},
			[]schema.AgentStatus{schema.AgentStatusWorking, schema.AgentStatusWorking, schema.AgentStatusWorking, schema.AgentStatusIdle}},
		{"another agent's report", "claude", "herdr:codex", "codex",
			[]string{"r:working", "d:blocked"},
			[]schema.AgentStatus{schema.AgentStatusIdle, schema.AgentStatusBlocked}},
		{"session-only integration", "qwen", "herdr:qwen", "qwen",
			[]string{"r:working"},
			[]schema.AgentStatus{schema.AgentStatusIdle}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := receiverWorld(t, `{"kind":"`+tt.kind+`","name":"a","status":"idle"}`)
			for i, step := range tt.steps {
				kind, arg, _ := strings.Cut(step, ":")
				var err error
				if kind == "r" {
					err = w.ReportAgent(schema.PaneReportAgentParams{PaneID: "w1:p2", Source: tt.source, Agent: tt.agent, State: schema.PaneAgentState(arg)})
				} else {
					err = w.SetStatus("w1:p2", arg)
				}
				if err != nil {
					t.Fatal(err)
				}
				if a, _ := w.Agent("a"); a.AgentStatus != tt.want[i] {
					t.Fatalf("after %v: %s, want %s", tt.steps[:i+1], a.AgentStatus, tt.want[i])
				}
			}
		})
	}
}

// TestReportDrivesQueue: an agent an integration reports working holds
// what is typed into it only as the program itself does: the modelled
// Claude Code is idle on its own screen, so a user's Enter submits at
// once, while Herdr (and a sender) sees working until the next report.
func TestReportDrivesQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := receiverWorld(t, `{"kind":"claude","name":"a","status":"idle","turn_ms":1000}`)
		if err := w.ReportAgent(schema.PaneReportAgentParams{PaneID: "w1:p2", Source: "herdr:claude", Agent: "claude", State: schema.PaneAgentStateWorking}); err != nil {
			t.Fatal(err)
		}
		if err := w.TypeDraft("w1:p2", "go on"); err != nil {
			t.Fatal(err)
		}
		if err := w.PressKeys("w1:p2", "Enter"); err != nil {
			t.Fatal(err)
		}
		settle(5 * time.Second)
		if subs := texts(w.Submissions("w1:p2")); len(subs) != 1 || subs[0] != "go on" {
			t.Fatalf("turns %q", subs)
		}
		if a, _ := w.Agent("a"); a.AgentStatus != schema.AgentStatusWorking {
			t.Fatalf("status %s: the report holds until the next one", a.AgentStatus)
		}
		if err := w.PressKeys("w1:p2", "C-u"); socket.CodeOf(err) != "invalid_key" {
			t.Fatalf("PressKeys C-u: %v", err)
		}
	})
}

// nextEvents reads the next n events of sub, each as event[:status or
// agent] (a timed-out Next ends a subscription, so the count is exact).
func nextEvents(t *testing.T, sub *socket.Subscription, n int) []string {
	t.Helper()
	var out []string
	for range n {
		nctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		ev, err := sub.Next(nctx)
		cancel()
		if err != nil {
			t.Fatalf("after %q: %v", out, err)
		}
		if sc, ok, _ := ev.AgentStatusChanged(); ok {
			out = append(out, ev.Event+":"+string(sc.AgentStatus))
			continue
		}
		d, _ := ev.Plain()
		if d.PaneAgentDetected != nil && d.PaneAgentDetected.Agent != nil {
			out = append(out, ev.Event+":"+*d.PaneAgentDetected.Agent)
			continue
		}
		out = append(out, ev.Event)
	}
	return out
}
