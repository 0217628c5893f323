package sockettest_test

import (
	"bufio"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// TestStateChangeSeqOnlyOnChange: state_change_seq moves
// only when the underlying state changes — not on the same status again,
// not on seen/unseen — so a prompt with wait to an agent whose state never
// changes answers agent_prompt_stalled even while detection keeps
// reporting the same status.
func TestStateChangeSeqOnlyOnChange(t *testing.T) { synctest.Test(t, testStateChangeSeqOnlyOnChange) }

func testStateChangeSeqOnlyOnChange(t *testing.T) {
	srv := simtest.New(t, newWorld(t), sockettest.InMemory, func(s *sockettest.Server) {
		s.Tick = 5 * time.Millisecond
		s.EffectTimeout = 200 * time.Millisecond
	})
	w := srv.World
	seq := func(target string) uint64 {
		a, _ := w.Agent(target)
		return a.StateChangeSeq
	}
	tests := []struct {
		status string
		bumps  bool
	}{
		{"idle", true},     // done (idle, unseen) → idle (seen): same state, but first the change below
		{"idle", false},    // idle → idle
		{"done", false},    // idle seen → idle unseen: seen only
		{"working", true},  // a real change
		{"working", false}, // the same again
		{"blocked", true},
		{"blocked", false},
		{"unknown", true},
	}
	_ = w.SetStatus("w1:pA", "working") // finished: done → working
	for _, tt := range tests {
		before := seq("finished")
		if err := w.SetStatus("w1:pA", tt.status); err != nil {
			t.Fatal(err)
		}
		if after := seq("finished"); (after != before) != tt.bumps {
			t.Errorf("SetStatus %s: seq %d → %d, bump want %v", tt.status, before, after, tt.bumps)
		}
	}
	// The effect gate: the composer never submits, detection repeats
	// idle; Herdr answers agent_prompt_stalled.
	_ = w.SetStatus("w1:pA", "idle")
	if err := w.SetBehaviour("w1:pA", sockettest.Behaviour{Stuck: true}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				_ = w.SetStatus("w1:pA", "idle")
			}
		}
	}()
	ms := uint64(10000)
	_, err := srv.Client().AgentPrompt(t.Context(), schema.AgentPromptParams{Target: "finished", Text: "x",
		Wait: &schema.AgentPromptWaitOptions{TimeoutMS: &ms}})
	if codeOf(err) != "agent_prompt_stalled" || !strings.Contains(err.Error(), "status is idle and state_change_seq remained") {
		t.Fatalf("prompt with wait to an agent that never changes: %v", err)
	}
}

// TestRevision: revision moves only on title or
// metadata changes (none of which a prompt, its Enter, a submission, a
// turn or a status change is), and pane.read always answers revision 0.
func TestRevision(t *testing.T) { synctest.Test(t, testRevision) }

func testRevision(t *testing.T) {
	srv := simtest.New(t, newWorld(t), sockettest.InMemory, func(s *sockettest.Server) { s.SubmitDelay = time.Millisecond })
	c := srv.Client()
	ctx := t.Context()
	w := srv.World
	if err := w.SetBehaviour("w2:p1", sockettest.Behaviour{TurnTime: 20 * time.Millisecond, SubmitLatency: new(time.Duration)}); err != nil {
		t.Fatal(err)
	}
	a0, _ := c.AgentGet(ctx, "far")
	p0, _ := c.PaneGet(ctx, "w2:p1")
	if _, err := c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "far", Text: "one"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { a, _ := w.Agent("far"); return a.AgentStatus == schema.AgentStatusDone })
	_ = w.SetStatus("w2:p1", "working")
	_ = w.SetStatus("w2:p1", "idle")
	a1, _ := c.AgentGet(ctx, "far")
	p1, _ := c.PaneGet(ctx, "w2:p1")
	if len(w.Submissions("w2:p1")) != 1 || a1.StateChangeSeq == a0.StateChangeSeq {
		t.Fatalf("after the prompt: %d submissions, seq %d; want 1 and a seq past %d", len(w.Submissions("w2:p1")), a1.StateChangeSeq, a0.StateChangeSeq)
	}
	if a1.Revision != a0.Revision || p1.Revision != p0.Revision {
		t.Errorf("revision moved: agent %d → %d, pane %d → %d", a0.Revision, a1.Revision, p0.Revision, p1.Revision)
	}
	for _, id := range []string{"w2:p1", "w1:p1", "w1:p3"} {
		r, err := c.PaneRead(ctx, schema.PaneReadParams{PaneID: id, Source: schema.ReadSourceRecent})
		if err != nil || r.Revision != 0 {
			t.Errorf("pane.read %s: revision %d, %v", id, r.Revision, err)
		}
	}
	if p1.Revision == 0 {
		t.Error("the test needs an agent pane with a revision above 0")
	}
}

// TestPromptWithoutWaitAlwaysReplies: an
// agent.prompt without wait is an ordinary request: a client that
// half-closes (or sends a stray byte) while Herdr is busy still gets the
// reply. With wait, the same makes Herdr abandon the request silently.
func TestPromptWithoutWaitAlwaysReplies(t *testing.T) {
	synctest.Test(t, testPromptWithoutWaitAlwaysReplies)
}

func testPromptWithoutWaitAlwaysReplies(t *testing.T) {
	srv := simtest.New(t, newWorld(t), sockettest.InMemory, func(s *sockettest.Server) { s.SubmitDelay = time.Millisecond })
	send := func(line string, stray bool) string {
		t.Helper()
		c, err := srv.Dial()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// Herdr is busy for a second after reading the request.
		srv.SetFault(schema.MethodAgentPrompt, sockettest.Fault{Latency: time.Second})
		defer srv.SetFault(schema.MethodAgentPrompt, sockettest.Fault{})
		if _, err := c.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
		if stray {
			// In memory a write waits for its reader, and Herdr may never
			// read the byte: it is written on the side.
			go func() { _, _ = c.Write([]byte(" ")) }()
		} else {
			_ = closeWrite(c)
		}
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		reply, _ := bufio.NewReader(c).ReadString('\n')
		return reply
	}
	for _, stray := range []bool{false, true} {
		got := send(`{"id":"p","method":"agent.prompt","params":{"target":"far","text":"hi"}}`, stray)
		if !strings.Contains(got, `"type":"agent_prompted"`) {
			t.Errorf("no-wait prompt (stray byte %v): reply %q", stray, got)
		}
		got = send(`{"id":"p","method":"agent.prompt","params":{"target":"far","text":"hi","wait":null}}`, stray)
		if !strings.Contains(got, `"type":"agent_prompted"`) {
			t.Errorf("wait:null prompt (stray byte %v): reply %q", stray, got)
		}
	}
	// Without a busy Herdr: 300 half-closed clients, 300 replies.
	for i := 0; i < 300; i++ {
		c, err := srv.Dial()
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write([]byte(`{"id":"p","method":"agent.prompt","params":{"target":"far","text":"hi"}}` + "\n"))
		_ = closeWrite(c)
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		reply, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if !strings.Contains(reply, `"type":"agent_prompted"`) {
			t.Fatalf("half-closed client %d: reply %q", i, reply)
		}
	}
	// (A stray byte after a waiting request is the fidelity work of the
	// same item; the half-close is enough here.)
	for _, stray := range []bool{false, true} {
		if got := send(`{"id":"p","method":"agent.prompt","params":{"target":"far","text":"hi","wait":{"timeout_ms":5000}}}`, stray); got != "" {
			t.Errorf("prompt with wait, stray byte %v: reply %q, want none", stray, got)
		}
	}
}

// TestPromptWaitThroughTheModel: a prompt with wait to an idle modelled
// agent passes the effect gate when the turn starts and answers when it
// ends; to a stuck one it stalls; a 256 KB prompt to codex starts its turn
// after the 5 s gate (the observed 14.8 s), so it stalls too.
func TestPromptWaitThroughTheModel(t *testing.T) { synctest.Test(t, testPromptWaitThroughTheModel) }

func testPromptWaitThroughTheModel(t *testing.T) {
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[
		{"id":"w1:p1"},
		{"id":"w1:p2","agent":{"kind":"codex","name":"quick","status":"idle","submit_ms":20,"turn_ms":50}},
		{"id":"w1:p3","agent":{"kind":"codex","name":"stuck","status":"idle","stuck":true}},
		{"id":"w1:p4","agent":{"kind":"codex","name":"slow","status":"idle","turn_ms":50}}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w, sockettest.InMemory, func(s *sockettest.Server) {
		s.Tick = 5 * time.Millisecond
		s.SubmitDelay = 10 * time.Millisecond
		s.EffectTimeout = 300 * time.Millisecond
	})
	c := srv.Client()
	ctx := t.Context()
	ms := uint64(10000)
	wait := &schema.AgentPromptWaitOptions{TimeoutMS: &ms}
	info, err := c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "quick", Text: "go", Wait: wait})
	// idle, not done: the pane is in the active tab.
	if err != nil || info.AgentStatus != schema.AgentStatusIdle || len(w.Submissions("w1:p2")) != 1 {
		t.Fatalf("prompt to an idle agent = %s, %v with %d submissions; want idle, 1", info.AgentStatus, err, len(w.Submissions("w1:p2")))
	}
	if _, err := c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "stuck", Text: "go", Wait: wait}); codeOf(err) != "agent_prompt_stalled" {
		t.Fatalf("stuck agent: %v", err)
	}
	// 256 KB: 0.1 s + 14.7 s × 1² of modelled latency, far beyond the gate.
	if _, err := c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "slow", Text: strings.Repeat("z", 256<<10), Wait: wait}); codeOf(err) != "agent_prompt_stalled" {
		t.Fatalf("256 KB to codex: %v", err)
	}
}
