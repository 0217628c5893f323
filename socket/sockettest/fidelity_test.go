package sockettest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
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

// Issue 10 item 2: the built-in agent kinds are Herdr 0.8.2's, aliases
// included (upstream src/detect/mod.rs).
func TestBuiltinAgentKinds(t *testing.T) {
	accepted := []string{"pi", "claude", "codex", "gemini", "cursor", "devin", "agy", "cline", "omp", "mastracode",
		"opencode", "copilot", "kimi", "kiro", "droid", "amp", "grok", "hermes", "kilo", "qodercli", "qwen", "maki",
		"claude-code", "antigravity", "kiro-cli", "github-copilot", "Claude", "codex.exe", "qoder"}
	refused := []string{"goose", "crush", "aider", "my-hook-bot", "claudex"}
	kinds := append(append([]string(nil), accepted...), refused...)
	srv := sockettest.New(t, worldOf(t, "idle", kinds...))
	c := srv.Client()
	for i, k := range kinds {
		_, err := c.AgentPrompt(context.Background(), schema.AgentPromptParams{Target: fmt.Sprintf("a%d", i), Text: "hello"})
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
	sub, err := srv.Client().Subscribe(context.Background(), schema.EventsSubscribeParams{Subscriptions: []schema.Subscription{
		{PaneAgentStatusChanged: &schema.SubscriptionPaneAgentStatusChanged{PaneID: paneID, AgentStatus: filter}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Close() })
	return func(d time.Duration) schema.AgentStatus {
		ctx, cancel := context.WithTimeout(context.Background(), d)
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

// Issue 10 item 3: a status subscription filtered on the status the pane
// already has gets that status as its first event.
func TestStatusSubscriptionInitialEvent(t *testing.T) {
	srv := sockettest.New(t, newWorld(t), func(s *sockettest.Server) { s.Tick = 5 * time.Millisecond })
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

// Issue 10 item 4: every status change reaches a subscriber, one per tick,
// even when several happen within one tick; agent.wait sees a status the
// agent only passed through.
func TestStatusChangesNotCoalesced(t *testing.T) {
	srv := sockettest.New(t, newWorld(t), func(s *sockettest.Server) { s.Tick = 20 * time.Millisecond })
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
	if fmt.Sprint(got) != "[working done working]" {
		t.Fatalf("events %v, want [working done working]", got)
	}
}

func TestAgentWaitSeesTransientStatus(t *testing.T) {
	srv := sockettest.New(t, newWorld(t), func(s *sockettest.Server) { s.Tick = 300 * time.Millisecond })
	type result struct {
		info schema.AgentInfo
		err  error
	}
	done := make(chan result, 1)
	go func() {
		var r schema.ResultAgentInfo
		err := srv.Client().Call(context.Background(), schema.MethodAgentWait,
			schema.AgentWaitParams{Target: "brain", Until: []schema.AgentStatus{schema.AgentStatusIdle}, TimeoutMS: ptr(uint64(3000))}, &r)
		done <- result{r.Agent, err}
	}()
	waitFor(t, func() bool {
		return len(srv.Methods()) > 0 && srv.Methods()[len(srv.Methods())-1] == schema.MethodAgentWait
	})
	time.Sleep(50 * time.Millisecond)           // the wait's first check (at once) is over; its next is a tick away
	_ = srv.World.SetStatus("w1:p1", "idle")    // brain (focused): working → idle
	_ = srv.World.SetStatus("w1:p1", "working") // and back before the next poll
	r := <-done
	if r.err != nil || r.info.AgentStatus != schema.AgentStatusIdle || r.info.PaneID != "w1:p1" {
		t.Fatalf("agent.wait: %+v %v, want the transient status", r.info, r.err)
	}
}
