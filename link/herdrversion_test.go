package link_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// herdrWorlds runs f once per simulated Herdr release herdr-link supports:
// the matrix helper of the delivery tests (0.8.2, and the newest 0.9.x).
func herdrWorlds(t *testing.T, f func(t *testing.T, v string, opt func(*sockettest.Server))) {
	for _, v := range []string{"0.8.2", sockettest.NewestHerdr} {
		t.Run("herdr-"+v, func(t *testing.T) {
			f(t, v, func(s *sockettest.Server) {
				if err := s.UseHerdr(v); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

func TestCapabilitiesFor(t *testing.T) {
	for _, tc := range []struct {
		v     string
		after bool
	}{
		{"0.8.2", false}, {"0.8.0", false}, {"0.8.2-preview.1", false}, {"", false}, {"garbage", false},
		{"0.9.0", true}, {"0.9.1", true}, {"0.9.5", true}, {"0.9.1-preview.3", true},
		// Unknown future releases get the newest known behaviour.
		{"0.10.0", true}, {"1.0.0", true},
	} {
		c := link.CapabilitiesFor(tc.v)
		if c.PromptAfterEnter != tc.after || c.LiveEvents != tc.after || c.Version != tc.v {
			t.Errorf("CapabilitiesFor(%q) = version %q, prompt after Enter %v, live events %v; want %q, %v, %v",
				tc.v, c.Version, c.PromptAfterEnter, c.LiveEvents, tc.v, tc.after, tc.after)
		}
	}
}

// TestHoldFollowsHerdr: 0.8.2 answers agent.prompt 300 ms before its Enter,
// so a delivery keeps the target's lock after the answer; 0.9.x answers
// after the Enter (zubo334/herdr 5e1016e4 src/app/api/agents.rs; CHANGELOG
// 0.9.0), so the lock goes with the answer.
func TestHoldFollowsHerdr(t *testing.T) {
	herdrWorlds(t, func(t *testing.T, v string, opt func(*sockettest.Server)) {
		synctest.Test(t, func(t *testing.T) {
			e := setup(t, opt)
			l := e.link("w1:p1")
			l = relink(t, l, func(c *link.Config) { c.Delivery = link.DeliveryFast })
			started := time.Now()
			if _, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "hello"}); err != nil {
				t.Fatal(err)
			}
			took := time.Since(started)
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
			defer cancel()
			held := l.Wait(ctx) != nil
			if want := v == "0.8.2"; held != want {
				t.Errorf("Herdr %s: lock held after the answer = %v, want %v (send took %v)", v, held, want, took)
			}
			if v != "0.8.2" && took < 300*time.Millisecond {
				t.Errorf("Herdr %s answered in %v, before its Enter", v, took)
			}
		})
	})
}

// TestTerminalClosedDuringSubmission: a 0.9 submission pending when the
// target's terminal goes answers agent_prompt_failed "pty actor closed"
// (zubo334/herdr 5e1016e4, the pty_io actor's pty_actor_closed; CHANGELOG
// 0.9.0 "Pending submissions fail cleanly if the terminal exits"). The
// text may have been typed: SEND_FAILED "may have been delivered", never
// a plain refusal or PEER_NOT_FOUND.
func TestTerminalClosedDuringSubmission(t *testing.T) {
	synctest.Test(t, testTerminalClosedDuringSubmission)
}

func testTerminalClosedDuringSubmission(t *testing.T) {
	e := setup(t, func(s *sockettest.Server) { _ = s.UseHerdr(sockettest.NewestHerdr) })
	l := e.link("w1:p1")
	l = relink(t, l, func(c *link.Config) { c.CallTimeout = 3 * time.Second })
	if err := e.w.StallInput("w1:p2", true); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "hello"})
		errc <- err
	}()
	synctest.Wait() // the send is queued behind the stalled input
	if e.w.Queued("w1:p2") == 0 {
		t.Fatal("the prompt is not queued")
	}
	if err := e.w.Close("w1:p2"); err != nil {
		t.Fatal(err)
	}
	err := <-errc
	var le *link.Error
	if !errors.As(err, &le) || le.Code != link.SendFailed || le.Detail == "Herdr did not accept the message" {
		t.Fatalf("send = %v, want SEND_FAILED that says it may have been delivered", err)
	}
}

// TestTurnStartedBeforeAnswer: a Herdr that answers after Enter answers
// with the agent as it was before the submission (zubo334/herdr 5e1016e4
// src/app/api/agents.rs: queue_agent_prompt reads agent_info before
// queueing), and the turn may have started by the time the answer
// arrives: the watch probes at once instead of one poll later. The
// answer's state stays the reference — a target working in the answer
// was working before this delivery (another sender's turn), so "queued".
func TestTurnStartedBeforeAnswer(t *testing.T) {
	for _, tc := range []struct {
		caps link.Capabilities
		took time.Duration
	}{
		{link.CapabilitiesFor("0.9.1"), 0},
		// 0.8.2 types Enter 300 ms after its answer: a change seen
		// before then is no turn yet (a detection flap, §11.3), so it
		// counts once the agent is still busy after the Enter.
		{link.CapabilitiesFor("0.8.2"), 300 * time.Millisecond},
	} {
		synctest.Test(t, func(t *testing.T) {
			f := startsBeforeAnswer{newFake("claude", "idle")}
			c := tc.caps
			l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1", Delivery: link.DeliveryConfirm, Capabilities: &c})
			start := time.Now()
			r, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "hi"})
			if err != nil || r.Delivery != link.DeliverySubmitted || time.Since(start) != tc.took {
				t.Errorf("Herdr %s: delivery %q, %v after %v; want submitted after %v", c.Version, r.Delivery, err, time.Since(start), tc.took)
			}
			_ = l.Wait(t.Context())
		})
	}
	// Working in the answer: queued, on either release.
	c := link.CapabilitiesFor("0.9.1")
	l := mustLink(t, link.Config{Herdr: newFake("claude", "working"), PaneID: "w1:p1", Delivery: link.DeliveryConfirm, Capabilities: &c})
	if r, err := l.Send(context.Background(), link.SendRequest{To: "reviewer", Message: "hi", When: link.WhenNow}); err != nil || r.Delivery != link.DeliveryQueued {
		t.Errorf("working target: %q, %v", r.Delivery, err)
	}
}

// startsBeforeAnswer is a Herdr whose prompt answer shows the target as
// it was before the submission while its turn has already begun.
type startsBeforeAnswer struct{ *fakeHerdr }

func (a startsBeforeAnswer) Prompt(ctx context.Context, target, text string) (link.Agent, error) {
	got, err := a.fakeHerdr.Prompt(ctx, target, text)
	a.set("working")
	return got, err
}
