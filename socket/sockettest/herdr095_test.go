package sockettest_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// TestHerdrPatches holds one case per socket behaviour a 0.9 patch after
// 0.9.1 changed: each must hold from its patch on and not before. The
// sources are in docs/herdr-versions.md and beside each field of
// herdrstate.Patch095.
func TestHerdrPatches(t *testing.T) {
	cases := []struct {
		name  string
		since string // the first patch that has it
		holds func(t *testing.T, s *sockettest.Server) bool
	}{
		// Release notes 0.9.2; herdrdev/herdr #4178, #4225.
		{"a subscription whose cursor left the history gets events_lost", "0.9.2", eventsLostOnOverrun},
		{"LoseEvents ends a subscription with events_lost", "0.9.2", eventsLostForced},
		// Release notes 0.9.2.
		{"pane.graphics.* are gone", "0.9.2", graphicsGone},
		{"a managed launch's first task reads done", "0.9.2", firstTaskDone},
		// v0.9.3 socket API docs.
		{"AgentInfo carries completion_seq", "0.9.3", completionSeq},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range []string{"0.9.1", "0.9.2", "0.9.3", sockettest.NewestModelled} {
				want := v >= tc.since // one-digit patches compare as strings
				synctest.Test(t, func(t *testing.T) {
					if got := tc.holds(t, releaseServer(t, v)); got != want {
						t.Errorf("Herdr %s: property holds = %v, want %v", v, got, want)
					}
				})
			}
		})
	}
}

// subscribeClosed subscribes to pane_closed events.
func subscribeClosed(t *testing.T, s *sockettest.Server) *socket.Subscription {
	t.Helper()
	sub, err := s.Client().Subscribe(t.Context(), schema.EventsSubscribeParams{Subscriptions: []schema.Subscription{{PaneClosed: &schema.SubscriptionPaneClosed{}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Close() })
	return sub
}

// lostWithin reports whether sub ends with events_lost within d.
func lostWithin(t *testing.T, sub *socket.Subscription, d time.Duration) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	for {
		_, err := sub.Next(ctx)
		switch {
		case err == nil:
			continue
		case errors.Is(err, socket.ErrEventsLost):
			return true
		case ctx.Err() != nil:
			return false
		default:
			t.Fatalf("stream ended otherwise: %v", err)
		}
	}
}

func eventsLostOnOverrun(t *testing.T, s *sockettest.Server) bool {
	sub := subscribeClosed(t, s)
	// 600 renames: 600 pane_updated events, more than the 512 retained,
	// while the subscription waits for a pane_closed.
	for i := range 600 {
		if err := s.World.Rename("w1:p2", fmt.Sprintf("r%03d", i)); err != nil {
			t.Fatal(err)
		}
	}
	return lostWithin(t, sub, time.Second)
}

func eventsLostForced(t *testing.T, s *sockettest.Server) bool {
	sub := subscribeClosed(t, s)
	s.World.LoseEvents()
	return lostWithin(t, sub, time.Second)
}

func graphicsGone(t *testing.T, s *sockettest.Server) bool {
	err := s.Client().Call(t.Context(), schema.MethodPaneGraphicsInfo, map[string]any{"pane_id": "w1:p2"}, nil)
	var se *socket.Error
	if !errors.As(err, &se) {
		t.Fatalf("pane.graphics.info: %v", err)
	}
	return se.Code == "invalid_request" && strings.Contains(se.Message, "unknown variant")
}

func firstTaskDone(t *testing.T, s *sockettest.Server) bool {
	// fresh is a managed launch started with a prompt, in its first task;
	// the focused pane is in another tab, so a finish there is not seen.
	w, err := sockettest.ParseWorld([]byte(`{"focused":"w1:p2","workspaces":[{"id":"w1","tabs":[` +
		`{"id":"w1:t1","panes":[{"id":"w1:p1","agent":{"kind":"claude","name":"fresh","status":"working","launch_pending":true}}]},` +
		`{"id":"w1:t2","panes":[{"id":"w1:p2"}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	w.SetRelease(mustRelease(t, s.Release().Version))
	if err := w.SetStatus("w1:p1", "idle"); err != nil {
		t.Fatal(err)
	}
	a, _ := w.Agent("w1:p1")
	return a.AgentStatus == schema.AgentStatusDone
}

func mustRelease(t *testing.T, v string) sockettest.Release {
	t.Helper()
	r, err := sockettest.HerdrRelease(v)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// same fails unless got equals want.
func same(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: got %#v, want %#v", what, got, want)
	}
}

func completionSeq(t *testing.T, s *sockettest.Server) bool {
	get := func() map[string]any {
		var raw jsonx.RawMessage
		if err := s.Client().Call(t.Context(), schema.MethodAgentGet, schema.AgentTarget{Target: "brain"}, &raw); err != nil {
			t.Fatal(err)
		}
		var res struct {
			Agent map[string]any `json:"agent"`
		}
		if err := jsonx.Unmarshal(raw, &res); err != nil {
			t.Fatal(err)
		}
		return res.Agent
	}
	before, ok := get()["completion_seq"]
	if !ok {
		return false
	}
	// A task ends (working → idle): it steps; startup readiness does not.
	if err := s.World.SetStatus("w1:p1", "idle"); err != nil {
		t.Fatal(err)
	}
	after := get()["completion_seq"]
	if err := s.World.Detect("w1:p3", "pi"); err != nil {
		t.Fatal(err)
	}
	if err := s.World.SetStatus("w1:p3", "idle"); err != nil { // unknown → idle
		t.Fatal(err)
	}
	same(t, "completion_seq before and after a task, of a fresh agent", []any{before, after, s.World.CompletionSeq("w1:p3")}, []any{0.0, 1.0, uint64(0)})
	return true
}

// TestFaultModes: each fault mode does what its Herdr bug report says,
// and is off by default. Long: one world serves every mode in turn, each
// checked against the same pane.
func TestFaultModes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := releaseServer(t, sockettest.NewestModelled)
		w := s.World
		// Off: a prompt to reviewer is typed and submitted.
		if _, err := s.Client().AgentPrompt(t.Context(), schema.AgentPromptParams{Target: "reviewer", Text: "plain"}); err != nil {
			t.Fatal(err)
		}
		if got := w.Typed("w1:p2"); !strings.Contains(got, "plain\n") {
			t.Errorf("fault modes off: typed %q", got)
		}

		// Paste never submitted: answered, the text stays, no Enter.
		if err := w.SetPasteNeverSubmitted("w1:p2", true); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Client().AgentPrompt(t.Context(), schema.AgentPromptParams{Target: "reviewer", Text: "stays"}); err != nil {
			t.Fatal(err)
		}
		if got := w.Typed("w1:p2"); !strings.HasSuffix(got, "stays") {
			t.Errorf("paste never submitted: typed %q, want the text without Enter", got)
		}
		_ = w.SetPasteNeverSubmitted("w1:p2", false)

		// Unattached: answered, nothing arrives.
		if err := w.SetUnattached("w1:p3", true); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Prompt("w1:p3", "lost"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if got := w.Typed("w1:p3"); got != "" {
			t.Errorf("unattached pane received %q", got)
		}

		// Picker: reads idle, the screen shows it, a prompt answers it.
		if err := w.SetPickerOpen("w1:p2", true); err != nil {
			t.Fatal(err)
		}
		a, _ := w.Agent("w1:p2")
		var read schema.ResultPaneRead
		if err := s.Client().Call(t.Context(), schema.MethodPaneRead, schema.PaneReadParams{PaneID: "w1:p2", Source: schema.ReadSourceVisible}, &read); err != nil {
			t.Fatal(err)
		}
		if a.AgentStatus != schema.AgentStatusIdle || !strings.Contains(read.Read.Text, "Select Model") {
			t.Errorf("picker open: status %s, screen %q", a.AgentStatus, read.Read.Text)
		}
		if _, err := w.Prompt("reviewer", "into the picker"); err != nil {
			t.Fatal(err)
		}
		same(t, "misdelivered", w.Misdelivered("w1:p2"), []string{"picker: into the picker"})

		// Idle flaps: a working agent reads idle for 40 ms every 120 ms;
		// a prompt typed then is misdelivered.
		if err := w.SetIdleFlaps("w1:p1", 120*time.Millisecond, 40*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		seq0 := mustAgent(t, w, "brain").StateChangeSeq
		time.Sleep(130 * time.Millisecond)
		if st := mustAgent(t, w, "brain").AgentStatus; st != schema.AgentStatusIdle && st != schema.AgentStatusDone {
			t.Errorf("inside a flap: %s", st)
		}
		if _, err := w.Prompt("brain", "during the flap"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		if a := mustAgent(t, w, "brain"); a.AgentStatus != schema.AgentStatusWorking || a.StateChangeSeq <= seq0 {
			t.Errorf("after a flap: %s seq %d, want working, seq past %d", a.AgentStatus, a.StateChangeSeq, seq0)
		}
		same(t, "misdelivered", w.Misdelivered("w1:p1"), []string{"flap: during the flap"})
		_ = w.SetIdleFlaps("w1:p1", 0, 0)

		// A name still bound after its agent exits: the next occupant
		// answers to it, in another session.
		w.SetNameLinger(10 * time.Second)
		if err := w.Replace("w1:p1", "claude", "next-session"); err != nil {
			t.Fatal(err)
		}
		a = mustAgent(t, w, "brain")
		if a.AgentSession == nil {
			t.Errorf("lingering name: agent in %s has no session, want w1:p1 in next-session", a.PaneID)
		} else if a.PaneID != "w1:p1" || a.AgentSession.Value != "next-session" {
			t.Errorf("lingering name: agent in %s, session %q; want w1:p1, next-session", a.PaneID, a.AgentSession.Value)
		}
		time.Sleep(11 * time.Second)
		if _, ok := w.Agent("brain"); ok {
			t.Error("the name is still bound after the linger time")
		}
	})
}

func mustAgent(t *testing.T, w *sockettest.World, target string) schema.AgentInfo {
	t.Helper()
	a, ok := w.Agent(target)
	if !ok {
		t.Fatalf("no agent %s", target)
	}
	return a
}
