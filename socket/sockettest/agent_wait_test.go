package sockettest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

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

// onceWaiting runs f as soon as srv has a request blocked in a wait (one
// that has seen the world not yet as it wants it), so a test changes the
// world during the wait without guessing how long the wait takes to start.
func onceWaiting(t *testing.T, srv *sockettest.Server, f func()) {
	t.Helper()
	go func() {
		deadline := time.Now().Add(5 * time.Second)
		for srv.Waiting() == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		f()
	}()
}

func TestAgentPromptWait(t *testing.T) { synctest.Test(t, testAgentPromptWait) }

func testAgentPromptWait(t *testing.T) {
	srv := simtest.New(t, newWorld(t), sockettest.InMemory, func(s *sockettest.Server) {
		s.Tick = 5 * time.Millisecond
		s.SubmitDelay = time.Millisecond
		s.EffectTimeout = 100 * time.Millisecond
	})
	c := srv.Client()
	ctx := t.Context()
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
	onceWaiting(t, srv, func() {
		_ = srv.World.SetStatus("w1:pA", "working")
		_ = srv.World.SetStatus("w1:pA", "done")
	})
	info, err := c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "finished", Text: "go", Wait: wait([]schema.AgentStatus{schema.AgentStatusDone}, 5000)})
	if err != nil || info.AgentStatus != schema.AgentStatusDone {
		t.Fatalf("prompt waiting for done = %s, %v; want done", info.AgentStatus, err)
	}
	// The pane closes mid-wait: agent_not_running.
	onceWaiting(t, srv, func() {
		_ = srv.World.SetStatus("w1:p1", "working")
		_ = srv.World.Close("w1:p1")
	})
	_, err = c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "brain", Text: "go", Wait: wait(nil, 5000)})
	if codeOf(err) != "agent_not_running" || !strings.Contains(err.Error(), "agent is no longer running in the target pane") {
		t.Errorf("closed mid-wait: %v", err)
	}
}

func TestAgentWait(t *testing.T) { synctest.Test(t, testAgentWait) }

func testAgentWait(t *testing.T) {
	srv := simtest.New(t, newWorld(t), sockettest.InMemory, func(s *sockettest.Server) { s.Tick = 5 * time.Millisecond })
	c := srv.Client()
	ctx := t.Context()
	ms := uint64(50)
	var r schema.ResultAgentInfo
	// Already in the default until set: immediate.
	if err := c.Call(ctx, schema.MethodAgentWait, schema.AgentWaitParams{Target: "finished"}, &r); err != nil || r.Agent.AgentStatus != schema.AgentStatusDone {
		t.Fatalf("agent.wait finished = %s, %v; want done at once", r.Agent.AgentStatus, err)
	}
	err := c.Call(ctx, schema.MethodAgentWait, schema.AgentWaitParams{Target: "brain", Until: []schema.AgentStatus{schema.AgentStatusIdle}, TimeoutMS: &ms}, &r)
	if codeOf(err) != "timeout" || !strings.Contains(err.Error(), "timed out waiting for agent status") {
		t.Fatalf("timeout: %v", err)
	}
	onceWaiting(t, srv, func() { _ = srv.World.SetStatus("w1:p1", "idle") })
	if err := c.Call(ctx, schema.MethodAgentWait, schema.AgentWaitParams{Target: "brain"}, &r); err != nil || r.Agent.AgentStatus != schema.AgentStatusIdle {
		t.Fatalf("agent.wait brain = %s, %v; want idle", r.Agent.AgentStatus, err)
	}
	// A client that leaves abandons the wait: nothing is written.
	cctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if err := c.Call(cctx, schema.MethodAgentWait, schema.AgentWaitParams{Target: "far", Until: []schema.AgentStatus{schema.AgentStatusBlocked}}, &r); !errors.Is(err, socket.ErrTimeout) {
		t.Fatalf("client-side deadline: %v", err)
	}
}

// TestAgentLifecycle covers the state model of the facts sheet's
// checklist: seq bumps, detection, seen/unseen, managed launches, and what
// clears a name.
func TestAgentLifecycle(t *testing.T) { synctest.Test(t, testAgentLifecycle) }

func testAgentLifecycle(t *testing.T) {
	srv := simtest.New(t, newWorld(t), sockettest.InMemory, func(s *sockettest.Server) { s.Tick = 5 * time.Millisecond })
	c := srv.Client()
	ctx := t.Context()
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
	if d := get("w1:p3"); d.AgentStatus != schema.AgentStatusUnknown || d.Name != nil || deref(d.Agent) != "claude" {
		t.Errorf("detected: status %s, name %s, agent %s; want unknown, <nil>, claude", d.AgentStatus, deref(d.Name), deref(d.Agent))
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
		t.Errorf("blocked launch: pending %v, status %s; want true, blocked", p.LaunchPending, p.AgentStatus)
	}
	if _, err := c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "pending", Text: "x"}); codeOf(err) != "agent_blocked" {
		t.Errorf("prompt during blocked launch: %v", err)
	}
	if _, err := c.AgentRename(ctx, "pending", ptr("other")); codeOf(err) != "agent_launch_pending" {
		t.Errorf("rename during blocked launch: %v", err)
	}
	_ = w.SetStatus("w1:p6", "idle")
	if p := get("pending"); p.LaunchPending || !p.InteractiveReady || p.AgentStatus != schema.AgentStatusIdle {
		t.Errorf("active launch: pending %v, ready %v, status %s; want false, true, idle", p.LaunchPending, p.InteractiveReady, p.AgentStatus)
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
	onceWaiting(t, srv, func() { _, _ = w.Move("w1:p8", "w2") })
	var r schema.ResultAgentInfo
	err := c.Call(ctx, schema.MethodAgentWait, schema.AgentWaitParams{Target: "pilot", Until: []schema.AgentStatus{schema.AgentStatusBlocked}}, &r)
	if codeOf(err) != "agent_not_running" {
		t.Errorf("wait across a move: %v", err)
	}
}

// Waiting counts requests blocked in a wait, from when they have seen the
// world not as they want it until they return.
func TestServerWaiting(t *testing.T) { synctest.Test(t, testServerWaiting) }

func testServerWaiting(t *testing.T) {
	srv := simtest.New(t, newWorld(t), sockettest.InMemory, func(s *sockettest.Server) { s.Tick = 5 * time.Millisecond })
	if n := srv.Waiting(); n != 0 {
		t.Fatalf("Waiting() = %d before any wait", n)
	}
	_ = srv.World.SetStatus("w1:p1", "working")
	done := make(chan error, 1)
	go func() {
		var r schema.ResultAgentInfo
		done <- srv.Client().Call(t.Context(), schema.MethodAgentWait, schema.AgentWaitParams{Target: "brain"}, &r)
	}()
	waitFor(t, func() bool { return srv.Waiting() == 1 })
	select {
	case err := <-done:
		t.Fatalf("the wait returned while counted as waiting: %v", err)
	default:
	}
	_ = srv.World.SetStatus("w1:p1", "idle")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return srv.Waiting() == 0 })
}
