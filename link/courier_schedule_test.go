package link_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/link"
)

// The courier's schedule: what wakes it, how often it probes a target,
// and a one-shot pass (DeliverDue).

// The courier wakes on Herdr's events, not on its probe: with the probe
// an hour apart, a held message is still typed once the turn ends.
func TestCourierWakesOnEvents(t *testing.T) { synctest.Test(t, testCourierWakesOnEvents) }

func testCourierWakesOnEvents(t *testing.T) {
	e := newCourierEnv(t)
	brain := e.link(t, "w1:p1")
	brain = relink(t, brain, func(c *link.Config) { c.CourierPoll = time.Hour })
	r := mustSend(t, brain, link.SendRequest{To: "busy", Message: "wake me", ExpectReply: new(false)})
	if r.Delivery != link.DeliveryHeld {
		t.Fatalf("delivery %s, want %s", r.Delivery, link.DeliveryHeld)
	}
	run(t, brain)
	time.Sleep(300 * time.Millisecond) // the courier has subscribed
	if err := e.w.SetStatus("w1:p3", "idle"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "typed on the event", func() bool { return len(e.w.Submissions("w1:p3")) == 1 })
}

// The courier's work is per target: requests and held messages waiting
// on one target cost one agent.get of it per round, however many wait.
func TestCourierProbesPerTarget(t *testing.T) { synctest.Test(t, testCourierProbesPerTarget) }

func testCourierProbesPerTarget(t *testing.T) {
	e := newCourierEnv(t)
	brain := e.link(t, "w1:p1")
	brain = relink(t, brain, func(c *link.Config) { c.ReplyGrace = time.Hour }) // every request stays pending
	const perTarget = 10
	targets := map[string]string{"busy": "w1:p3", "coder": "w1:p4"}
	for name := range targets {
		for i := range perTarget {
			r := mustSend(t, brain, link.SendRequest{To: name, Message: fmt.Sprint("request ", i), When: link.WhenNow})
			if r.Delivery == link.DeliveryHeld {
				t.Fatalf("send when now to %s = %s, want typed", name, r.Delivery)
			}
		}
	}
	for i := range 2 {
		if r := mustSend(t, brain, link.SendRequest{To: "busy", Message: fmt.Sprint("held ", i)}); r.Delivery != link.DeliveryHeld {
			t.Fatalf("send to a working agent = %s, want held", r.Delivery)
		}
	}
	run(t, brain)
	time.Sleep(time.Second) // the first scan, and the first rounds
	e.srv.ResetRequests()
	const rounds = 20
	time.Sleep(rounds * brain.Config().CourierPoll)
	gets := map[string]int{}
	for _, r := range e.srv.Requests() {
		if r.Method != "agent.get" {
			continue
		}
		for name, pane := range targets {
			if strings.Contains(string(r.Params), `"`+pane+`"`) {
				gets[name]++
			}
		}
	}
	for name := range targets {
		// One probe per round, and one more for a wake on an event.
		if got, most := gets[name], rounds+2; got == 0 || got > most {
			t.Errorf("agent.get of %s (%d requests waiting) over %d rounds: %d, want 1 to %d", name, perTarget, rounds, got, most)
		}
	}
	for name, want := range map[string]int{"busy": perTarget + 2, "coder": perTarget} {
		if got := awaiting(t, brain, name); got != want {
			t.Errorf("requests to %s awaiting a reply: %d, want %d", name, got, want)
		}
	}
}

// awaiting is the number of l's requests to peer awaiting a reply (0
// when peer is not listed).
func awaiting(t *testing.T, l *link.Link, peer string) int {
	t.Helper()
	p, _ := peerOf(t, l, peer)
	return len(p.AwaitingReply)
}

// DeliverDue serves one target once, whichever process accepted what is
// held for it: nothing while it works, its oldest message once it is
// idle.
func TestDeliverDue(t *testing.T) { synctest.Test(t, testDeliverDue) }

func testDeliverDue(t *testing.T) {
	e := newCourierEnv(t)
	brain := e.link(t, "w1:p1") // its courier does not run
	var ids []string
	for i := range 2 {
		r := mustSend(t, brain, link.SendRequest{To: "busy", Message: fmt.Sprint("held ", i), ExpectReply: new(false)})
		if r.Delivery != link.DeliveryHeld {
			t.Fatalf("send to a working agent = %s, want held", r.Delivery)
		}
		ids = append(ids, r.ID)
	}
	oneShot := e.link(t, "w1:p2")
	ctx := t.Context()
	waiting, err := oneShot.DeliverDue(ctx, "w1:p3")
	if err != nil || !waiting {
		t.Fatalf("DeliverDue while the target works: %v, %v; want true, nil", waiting, err)
	}
	if n := len(e.w.Inputs("w1:p3")); n != 0 {
		t.Fatalf("typed %d inputs into a working agent", n)
	}
	if err := e.w.SetStatus("w1:p3", "idle"); err != nil {
		t.Fatal(err)
	}
	waiting, err = oneShot.DeliverDue(ctx, "w1:p3")
	if err != nil || !waiting {
		t.Fatalf("DeliverDue with two held: %v, %v; want true (one left), nil", waiting, err)
	}
	subs := e.w.Submissions("w1:p3")
	if len(subs) != 1 {
		t.Fatalf("turns after one DeliverDue: %d, want 1", len(subs))
	}
	if envs := link.ExtractAll(subs[0].Text); len(envs) != 1 || envs[0].ID != ids[0] {
		t.Fatalf("the turn holds %q, want only the oldest, %s", envelopeIDs(envs), ids[0])
	}
	if waiting, err := oneShot.DeliverDue(ctx, "w1:p6"); err != nil || waiting {
		t.Fatalf("DeliverDue for a target nothing waits on: %v, %v; want false, nil", waiting, err)
	}
}
