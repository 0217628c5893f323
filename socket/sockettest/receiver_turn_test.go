package sockettest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// TestReceiverTurn: a submission moves the agent to working and bumps
// state_change_seq once; the turn ends after the turn time (idle: the pane
// is in the active tab, so Herdr counts the completion seen), bumping it
// once more. Text waits in the
// composer until Enter, 300 ms after agent.prompt answered.
func TestReceiverTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := receiverWorld(t, `{"kind":"codex","name":"a","status":"idle","turn_ms":2000,"submit_ms":100}`)
		start := time.Now()
		a0, _ := w.Agent("a")
		info, err := w.Prompt("a", "hello")
		if err != nil {
			t.Fatalf("prompt: %v", err)
		}
		if info.AgentStatus != schema.AgentStatusIdle || info.StateChangeSeq != a0.StateChangeSeq {
			t.Fatalf("prompt answered %s at seq %d, want idle at seq %d", info.AgentStatus, info.StateChangeSeq, a0.StateChangeSeq)
		}
		if comp, _ := w.Composer("w1:p2"); comp != "hello" {
			t.Fatalf("composer %q before Enter", comp)
		}
		time.Sleep(299 * time.Millisecond)
		synctest.Wait()
		if in := w.Inputs("w1:p2"); len(in) != 1 {
			t.Fatalf("Enter before 300 ms: %q", in)
		}
		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		if in := w.Inputs("w1:p2"); len(in) != 2 || in[1] != "\r" {
			t.Fatalf("inputs at 301 ms: %q", in)
		}
		if a, _ := w.Agent("a"); a.AgentStatus != schema.AgentStatusIdle {
			t.Fatalf("status before the submit latency = %s, want idle", a.AgentStatus)
		}
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		subs := w.Submissions("w1:p2")
		a1, _ := w.Agent("a")
		if diff := cmp.Diff([]sockettest.Submission{{At: start.Add(400 * time.Millisecond), Text: "hello"}}, subs); diff != "" {
			t.Fatalf("submissions mismatch (-want +got):\n%s", diff)
		}
		if a1.AgentStatus != schema.AgentStatusWorking || a1.StateChangeSeq != a0.StateChangeSeq+1 || a1.Revision != a0.Revision {
			t.Fatalf("after submission: %s, seq %d, revision %d; want working, seq %d, revision %d",
				a1.AgentStatus, a1.StateChangeSeq, a1.Revision, a0.StateChangeSeq+1, a0.Revision)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		a2, _ := w.Agent("a")
		if a2.AgentStatus != schema.AgentStatusIdle || a2.StateChangeSeq != a1.StateChangeSeq+1 || a2.Revision != a0.Revision {
			t.Fatalf("after the turn: %s, seq %d, revision %d; want idle, seq %d, revision %d",
				a2.AgentStatus, a2.StateChangeSeq, a2.Revision, a1.StateChangeSeq+1, a0.Revision)
		}
	})
}

// TestReceiverSetStatusEndsTurn: a turn ended by World.SetStatus releases
// what was queued during it, as one turn; setting the same status again
// changes nothing (no seq bump).
func TestReceiverSetStatusEndsTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := receiverWorld(t, `{"kind":"claude","name":"a","status":"working"}`)
		a0, _ := w.Agent("a")
		if err := w.SetStatus("w1:p2", "working"); err != nil {
			t.Fatal(err)
		}
		if a, _ := w.Agent("a"); a.StateChangeSeq != a0.StateChangeSeq {
			t.Fatalf("working → working bumped state_change_seq: %d → %d", a0.StateChangeSeq, a.StateChangeSeq)
		}
		_, _ = w.Prompt("a", "one")
		time.Sleep(time.Second)
		_, _ = w.Prompt("a", "two")
		time.Sleep(time.Hour)
		synctest.Wait()
		if subs := w.Submissions("w1:p2"); len(subs) != 0 {
			t.Fatalf("submitted during a turn: %q", texts(subs))
		}
		if !strings.Contains(w.Read("w1:p2"), "⎿ Queued · ctrl+x ctrl+s to send now") {
			t.Errorf("screen while queued:\n%s", w.Read("w1:p2"))
		}
		_ = w.SetStatus("w1:p2", "idle")
		time.Sleep(199 * time.Millisecond)
		synctest.Wait()
		if subs := w.Submissions("w1:p2"); len(subs) != 0 {
			t.Fatalf("queued input sent before 0.2 s: %q", texts(subs))
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		want := claudeTag(1, "one") + "\n\n" + claudeTag(2, "two")
		if got := texts(w.Submissions("w1:p2")); len(got) != 1 || got[0] != want {
			t.Fatalf("after the turn: %q, want %q", got, want)
		}
	})
}

// TestReceiverScreens: pane.read's text per kind, with the screen signs
// of hosts-and-delivery §2.
func TestReceiverScreens(t *testing.T) {
	big := strings.Repeat("y", 1200)
	multi := "l1\nl2\nl3"
	tests := []struct {
		agent, text string
		wait        time.Duration // after the prompt
		want        []string      // substrings of the screen
		notWant     []string
	}{
		{`{"kind":"claude","name":"a","status":"idle","stuck":true}`, multi, time.Second, []string{"❯\u00a0[Pasted text #1 +2 lines]"}, []string{"l1"}},
		{`{"kind":"claude","name":"a","status":"idle"}`, "", 0, []string{"─\n❯\u00a0\n─"}, nil},
		{`{"kind":"claude","name":"a","status":"working"}`, multi, time.Second, []string{"✻ Working", "❯ [Pasted text #1 +2 lines]\n  ⎿ Queued · ctrl+x ctrl+s to send now"}, nil},
		{`{"kind":"codex","name":"a","status":"idle"}`, "", 0, []string{"› Ask Codex to do anything"}, nil},
		{`{"kind":"codex","name":"a","status":"idle","stuck":true}`, big, time.Second, []string{"› [Pasted Content 1200 chars]"}, []string{"yyy"}},
		{`{"kind":"codex","name":"a","status":"idle","stuck":true}`, "short one", time.Second, []string{"› short one"}, nil},
		{`{"kind":"codex","name":"a","status":"working"}`, "", 0, []string{"• Working", "› Ask Codex to do anything"}, []string{"tab to queue message"}},
		{`{"kind":"codex","name":"a","status":"working","draft":"x"}`, "", 0, []string{"› x\n", "tab to queue message"}, nil},
		{`{"kind":"opencode","name":"a","status":"idle"}`, "", 0, []string{`Ask anything… "`}, nil},
		{`{"kind":"opencode","name":"a","status":"idle","stuck":true}`, multi, time.Second, []string{"[Pasted ~3 lines]"}, nil},
		{`{"kind":"opencode","name":"a","status":"working"}`, "go", time.Second, []string{"QUEUED go", "esc interrupt"}, nil},
		{`{"kind":"pi","name":"a","status":"idle"}`, "", 0, []string{"────\n\n────"}, nil},
		{`{"kind":"pi","name":"a","status":"idle","stuck":true}`, big, time.Second, []string{"[paste #1 1200 chars]"}, nil},
		{`{"kind":"pi","name":"a","status":"working"}`, "go", time.Second, []string{"Working...", "Steering: go", "Alt+Up to edit all queued messages"}, nil},
		// After a turn: the transcript holds what the model got.
		{`{"kind":"codex","name":"a","status":"idle"}`, "done deal", 5 * time.Second, []string{"done deal\n\n› Ask Codex to do anything"}, nil},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := receiverWorld(t, tt.agent)
				if tt.text != "" {
					if _, err := w.Prompt("a", tt.text); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(tt.wait)
				synctest.Wait()
				got := w.Read("w1:p2")
				for _, s := range tt.want {
					if !strings.Contains(got, s) {
						t.Errorf("screen lacks %q:\n%s", s, got)
					}
				}
				for _, s := range tt.notWant {
					if strings.Contains(got, s) {
						t.Errorf("screen shows %q:\n%s", s, got)
					}
				}
			})
		})
	}
}

// TestSubmissionsExact: what the agent received survives byte for byte —
// every character below U+0800 but ESC and CR, multi-line and large text —
// verbatim or with exactly the kind's additions.
func TestSubmissionsExact(t *testing.T) {
	var all strings.Builder
	for r := rune(1); r < 0x800; r++ {
		if r == 0x1b || r == '\r' {
			continue // ESC[201~ would end the paste; CR is Enter outside one
		}
		all.WriteRune(r)
	}
	all.WriteString("\U0001F600 emoji, \u202e bidi, tab\tend\n")
	cases := []string{all.String(), strings.Repeat("line\n", 20000), " leading and trailing spaces ", `{"protocol":"herdr-link/1"}`}
	kinds := []struct {
		kind string
		want func(string) string
	}{
		{"codex", func(s string) string { return s }},
		{"pi", func(s string) string { return s }},
		{"kimi", func(s string) string { return s }}, // a kind with no model of its own
		{"opencode", func(s string) string { return s + " " }},
		{"claude", func(s string) string { return claudeTag(1, s) }},
	}
	for _, k := range kinds {
		for i, text := range cases {
			t.Run(fmt.Sprint(k.kind, i), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					w := receiverWorld(t, `{"kind":"`+k.kind+`","name":"a","status":"idle"}`)
					if _, err := w.Prompt("a", text); err != nil {
						t.Fatal(err)
					}
					time.Sleep(time.Minute)
					synctest.Wait()
					subs := w.Submissions("w1:p2")
					if len(subs) != 1 || subs[0].Text != k.want(text) {
						t.Fatalf("received %d submissions; first differs from the %d bytes sent", len(subs), len(text))
					}
					// And through JSON, as herdr-sim turns prints it.
					b, err := jsonx.Marshal(subs[0])
					if err != nil {
						t.Fatal(err)
					}
					var back sockettest.Submission
					if err := jsonx.Unmarshal(b, &back); err != nil || back.Text != subs[0].Text || !back.At.Equal(subs[0].At) {
						t.Fatalf("JSON round trip differs: %v", err)
					}
				})
			})
		}
	}
}

// TestFakeClockOverSocket: with a FakeClock the agents' time moves only
// by hand, so a test that talks to the server over its socket (where
// synctest cannot help) sees each step of a delivery.
func TestFakeClockOverSocket(t *testing.T) {
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	fc := sockettest.NewFakeClock(start)
	var spec sockettest.WorldSpec
	if err := jsonx.Unmarshal([]byte(`{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[
		{"id":"w1:p1"},
		{"id":"w1:p2","agent":{"kind":"claude","name":"a","status":"idle","turn_ms":5000}}]}]}]}`), &spec); err != nil {
		t.Fatal(err)
	}
	w, err := sockettest.NewWorldClock(spec, fc)
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w)
	c := srv.Client()
	ctx := t.Context()
	if _, err := c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "a", Text: "one"}); err != nil {
		t.Fatal(err)
	}
	fc.Advance(299 * time.Millisecond)
	if comp, _ := w.Composer("w1:p2"); comp != claudeTag(1, "one") || len(w.Inputs("w1:p2")) != 1 {
		t.Fatalf("before Enter: composer %q, inputs %q", comp, w.Inputs("w1:p2"))
	}
	fc.Advance(time.Millisecond) // Enter
	if comp, _ := w.Composer("w1:p2"); comp != "" || len(srv.Submissions("w1:p2")) != 0 {
		t.Fatalf("at Enter: composer %q, turns %v", comp, srv.Submissions("w1:p2"))
	}
	fc.Advance(time.Second) // Claude's latency
	subs := srv.Submissions("w1:p2")
	if len(subs) != 1 {
		t.Fatalf("got %d turns, want 1", len(subs))
	}
	if at := subs[0].At.Sub(start); subs[0].Text != claudeTag(1, "one") || at < 700*time.Millisecond || at > time.Second {
		t.Fatalf("turn %q at %v, want %q at 700ms..1s", subs[0].Text, at, claudeTag(1, "one"))
	}
	if a, _ := c.AgentGet(ctx, "a"); a.AgentStatus != schema.AgentStatusWorking {
		t.Fatalf("status %s", a.AgentStatus)
	}
	// A second prompt while working is queued, then submitted after the turn.
	if _, err := c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "a", Text: "two"}); err != nil {
		t.Fatal(err)
	}
	fc.Advance(4 * time.Second)
	if _, q := w.Composer("w1:p2"); q != claudeTag(2, "two") || len(srv.Submissions("w1:p2")) != 1 {
		t.Fatalf("queued %q, turns %d", q, len(srv.Submissions("w1:p2")))
	}
	fc.Advance(time.Second)
	if got := texts(srv.Submissions("w1:p2")); len(got) != 2 || got[1] != claudeTag(2, "two") {
		t.Fatalf("after the turn: %q", got)
	}
}

// TestReceiverWorldKnobs: the world file's receiving-end fields are
// checked.
func TestReceiverWorldKnobs(t *testing.T) {
	bad := map[string]string{
		`{"kind":"claude","name":"a","status":"idle","turn_ends_ms":100}`:   "turn_ends_ms needs status working",
		`{"kind":"claude","name":"a","status":"working","turn_ends_ms":-1}`: "turn_ends_ms -1 is negative",
		`{"kind":"claude","name":"a","status":"idle","submit_ms":-5}`:       "submit_ms -5 is negative",
		`{"kind":"claude","name":"a","status":"idle","stuck":"yes"}`:        "stuck",
		`{"kind":"claude","name":"a","status":"idle","draft_text":"x"}`:     "draft_text",
	}
	for agent, want := range bad {
		_, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"tabs":[{"panes":[{"agent":` + agent + `}]}]}]}`))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error about %s", agent, err, want)
		}
	}
	w := receiverWorld(t, `{"kind":"codex","name":"a","status":"idle","bracketed_paste":true,"submit_ms":0,"draft":"d"}`)
	if comp, _ := w.Composer("w1:p2"); comp != "d" {
		t.Errorf("draft %q", comp)
	}
	if err := w.SetBehaviour("w1:p1", sockettest.Behaviour{}); err == nil {
		t.Error("SetBehaviour on a shell succeeded")
	}
}

// TestReceiverEvents: a delivery shows in Herdr's own signals — a status
// subscription on the target sees working, then done, as a sender
// confirming the delivery would.
func TestReceiverEvents(t *testing.T) { synctest.Test(t, testReceiverEvents) }

func testReceiverEvents(t *testing.T) {
	w := receiverWorld(t, `{"kind":"pi","name":"a","status":"idle","submit_ms":0,"turn_ms":100}`)
	srv := simtest.New(t, w, sockettest.InMemory, func(s *sockettest.Server) { s.Tick = 5 * time.Millisecond; s.SubmitDelay = 10 * time.Millisecond })
	c := srv.Client()
	ctx := t.Context()
	sub, err := c.Subscribe(ctx, schema.EventsSubscribeParams{Subscriptions: []schema.Subscription{
		{PaneAgentStatusChanged: &schema.SubscriptionPaneAgentStatusChanged{PaneID: "w1:p2"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	before, _ := c.AgentGet(ctx, "a")
	if _, err := c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "a", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	var seen []schema.AgentStatus
	for len(seen) < 2 {
		nctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ev, err := sub.Next(nctx)
		cancel()
		if err != nil {
			t.Fatalf("after %v: %v", seen, err)
		}
		sc, ok, err := ev.AgentStatusChanged()
		if !ok || err != nil {
			t.Fatalf("event %s %s", ev.Event, ev.Data)
		}
		seen = append(seen, sc.AgentStatus)
	}
	// idle, not done: the pane is in the active tab.
	if seen[0] != schema.AgentStatusWorking || seen[1] != schema.AgentStatusIdle {
		t.Fatalf("statuses %v", seen)
	}
	after, _ := c.AgentGet(ctx, "a")
	if after.StateChangeSeq != before.StateChangeSeq+2 || len(srv.Submissions("w1:p2")) != 1 {
		t.Fatalf("seq %d → %d, turns %v", before.StateChangeSeq, after.StateChangeSeq, srv.Submissions("w1:p2"))
	}
}
