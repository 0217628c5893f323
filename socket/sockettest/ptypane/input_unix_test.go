//go:build unix

package ptypane_test

import (
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/schema"
)

// TestInputBytes: a real program in a pane receives what pane.send_text,
// pane.send_keys and agent.send_keys write, in its key encoding: text as
// it is (never in paste brackets), keys legacy or, once the program asked
// for the kitty protocol with "report all keys", as CSI u.
func TestInputBytes(t *testing.T) {
	for _, tc := range []struct {
		mode, want string
	}{
		{"echo", "half typed draft" + "\x15\r" + "\x1b"},
		{"raw", "half typed draft" + "\x15\r" + "\x1b"},
		{"kitty", "half typed draft" + "\x1b[117;5u\x1b[13u" + "\x1b[27u"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			srv, pane := start(t, tc.mode)
			c := srv.Client()
			ctx := ctxT(t, 10*time.Second)
			if err := c.PaneSendText(ctx, paneID, "half typed draft"); err != nil {
				t.Fatal(err)
			}
			if err := c.PaneSendKeys(ctx, paneID, "ctrl+u", "Enter"); err != nil {
				t.Fatal(err)
			}
			if err := c.AgentSendKeys(ctx, "reviewer", "Escape"); err != nil {
				t.Fatal(err)
			}
			waitReceived(t, pane, tc.want)
			if in := srv.World.Inputs(paneID); len(in) != 4 {
				t.Fatalf("writes %q: want the text, one per key, then agent.send_keys's one", in)
			}
		})
	}
}

// TestReportDrivesARealProgram: the status of a real program in a pane
// follows what its integration reports with pane.report_agent, as in
// Herdr (the simulator detects nothing from a real program's screen).
func TestReportDrivesARealProgram(t *testing.T) {
	srv, _ := start(t, "echo")
	c := srv.Client()
	ctx := ctxT(t, 10*time.Second)
	for _, st := range []schema.PaneAgentState{schema.PaneAgentStateWorking, schema.PaneAgentStateBlocked, schema.PaneAgentStateIdle} {
		if err := c.PaneReportAgent(ctx, schema.PaneReportAgentParams{PaneID: paneID, Source: "herdr:claude", Agent: "claude", State: st}); err != nil {
			t.Fatal(err)
		}
		a, err := c.AgentGet(ctx, "reviewer")
		if err != nil || string(a.AgentStatus) != string(st) {
			t.Fatalf("after reporting %s: agent.get = %s, %v; want %s", st, a.AgentStatus, err, st)
		}
	}
	// Blocked refuses agent.prompt as for a detected dialog.
	_ = c.PaneReportAgent(ctx, schema.PaneReportAgentParams{PaneID: paneID, Source: "herdr:claude", Agent: "claude", State: schema.PaneAgentStateBlocked})
	if _, err := c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "reviewer", Text: "x"}); err == nil {
		t.Fatal("agent.prompt to a reported-blocked agent succeeded")
	}
}
