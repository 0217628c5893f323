package link_test

import (
	"errors"
	"testing"
	"testing/synctest"

	"github.com/herdr-link/herdr-link/link"
)

// One pass types the orphaned message for the pane it serves once its
// target can take it, and nothing else: not while the target works, not
// a message whose sender still runs, not for another pane; later passes
// follow the gone sender's request and type nothing more. Nothing due:
// not one socket request.
func TestDeliverOnce(t *testing.T) { synctest.Test(t, testDeliverOnce) }

func testDeliverOnce(t *testing.T) {
	e := newCourierEnv(t)
	brain, writer := e.link(t, "w1:p1"), e.link(t, "w1:p2")
	orphan := mustSend(t, brain, link.SendRequest{To: "busy", Message: "survive me"})
	live := mustSend(t, writer, link.SendRequest{To: "coder", Message: "still mine"})
	if orphan.Delivery != link.DeliveryHeld || live.Delivery != link.DeliveryHeld {
		t.Fatalf("sends = %s, %s; want both held", orphan.Delivery, live.Delivery)
	}
	brain.Config().Outbox.Release() // brain's process is gone; writer's runs
	pass := func(pane string) link.OnceReport {
		t.Helper()
		hook := e.link(t, "")
		rep, err := hook.DeliverOnce(t.Context(), pane)
		if err != nil {
			t.Fatalf("DeliverOnce(%q): %v", pane, err)
		}
		if err := hook.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		hook.Config().Outbox.Release()
		return rep
	}
	requests := func() int { return len(e.srv.Requests()) }
	for _, c := range []struct {
		name, pane string
		want       link.OnceReport
		calls      bool
	}{
		{"another pane", "w1:p6", link.OnceReport{}, false},
		{"the writer's target (its sender runs)", "w1:p4", link.OnceReport{}, false},
		{"the target still works", "w1:p3", link.OnceReport{Due: 1}, true},
	} {
		before := requests()
		if got := pass(c.pane); got != c.want {
			t.Errorf("%s: report due %d, typed %d; want due %d, typed %d", c.name, got.Due, got.Typed, c.want.Due, c.want.Typed)
		}
		if made := requests() - before; (made > 0) != c.calls {
			t.Errorf("%s: %d socket requests, want some: %v", c.name, made, c.calls)
		}
	}
	if err := e.w.SetStatus("w1:p3", "idle"); err != nil {
		t.Fatal(err)
	}
	if got := pass("w1:p3"); got != (link.OnceReport{Due: 1, Typed: 1}) {
		t.Errorf("target ready: report due %d, typed %d; want due 1, typed 1", got.Due, got.Typed)
	}
	subs := e.w.Submissions("w1:p3")
	if len(subs) != 1 {
		t.Fatalf("%d turns of busy, want 1", len(subs))
	}
	if env, ok := link.Extract(subs[0].Text); !ok || env.ID != orphan.ID {
		t.Errorf("turn %q, want the orphan %s", subs[0].Text, orphan.ID)
	}
	// What still waits of the gone sender is its request to busy (typed,
	// awaiting its turn and a reply): a pass follows it, types nothing.
	before := requests()
	if got := pass("w1:p6"); got != (link.OnceReport{}) || requests() != before {
		t.Errorf("another pane, nothing due: report due %d, typed %d, %d socket requests; want nothing", got.Due, got.Typed, requests()-before)
	}
	if got := pass(""); got.Typed != 0 || got.Due == 0 {
		t.Errorf("every pane: report due %d, typed %d; want the gone sender's request followed (due > 0), nothing typed", got.Due, got.Typed)
	}
	if n := len(e.w.Submissions("w1:p3")); n != 1 {
		t.Errorf("%d turns of busy after the last pass, want still 1", n)
	}
	if len(e.w.Prompts("w1:p4")) != 0 {
		t.Errorf("the running sender's message was typed by the pass")
	}
}

func TestDeliverOnceWithoutOutbox(t *testing.T) {
	var l link.Link
	if _, err := l.DeliverOnce(t.Context(), ""); !errors.Is(err, link.ErrNoOutbox) {
		t.Errorf("got %v, want %v", err, link.ErrNoOutbox)
	}
}
