package link_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/link"
)

// script steps: at each offset from the prompt, change the target.
type step struct {
	at time.Duration
	do func(a *link.Agent)
}

func status(s string) func(a *link.Agent) {
	return func(a *link.Agent) { a.Status, a.Seq = s, a.Seq+1 }
}

func steps(ss ...step) func(*fakeHerdr) {
	return func(f *fakeHerdr) {
		var at time.Duration
		for _, s := range ss {
			time.Sleep(s.at - at)
			at = s.at
			f.mu.Lock()
			s.do(&f.target)
			f.mu.Unlock()
		}
	}
}

// What a send to a scripted target reports and how long its lock is held.
func TestDeliveryOutcomes(t *testing.T) {
	kindChange := func(a *link.Agent) { a.Kind, a.Status, a.Seq = "codex", "unknown", a.Seq+1 }
	for _, tc := range []struct {
		name   string
		seq    uint64
		hold   time.Duration
		script func(*fakeHerdr)
		want   string
		took   time.Duration
	}{
		// A detection flap right after the prompt (working, idle again
		// before Herdr's Enter at 300 ms) is not the submission; the turn
		// that starts after the Enter is.
		{"flap then the turn", 7, 0, steps(step{0, status("working")}, step{100 * time.Millisecond, status("idle")}, step{700 * time.Millisecond, status("working")}), link.DeliverySubmitted, 750 * time.Millisecond},
		{"flap and nothing else", 7, 0, steps(step{0, status("working")}, step{100 * time.Millisecond, status("idle")}), link.DeliveryUnconfirmed, link.ConfirmBudget(600)},
		// Busy since before the Enter and still busy after it: a turn
		// is running (a simulator's quick Enter and a long turn).
		{"busy before the Enter, still after it", 7, 0, steps(step{100 * time.Millisecond, status("working")}), link.DeliverySubmitted, 350 * time.Millisecond},
		{"a short turn before the Enter moment", 7, 0, steps(step{100 * time.Millisecond, status("working")}, step{150 * time.Millisecond, status("idle")}), link.DeliveryUnconfirmed, link.ConfirmBudget(600)},
		// Another agent kind in the same terminal is another occupant
		// (its detection: unknown, then idle), never a submission.
		{"another kind in the terminal", 7, 0, steps(step{360 * time.Millisecond, kindChange}, step{370 * time.Millisecond, status("idle")}), link.DeliveryUnconfirmed, 400 * time.Millisecond},
		// state_change_seq near 2^64: one change to rest is one change.
		{"one change to rest at the wrap", math.MaxUint64 - 1, 0, steps(step{350 * time.Millisecond, status("idle")}), link.DeliveryUnconfirmed, link.ConfirmBudget(600)},
		{"a turn across the wrap", math.MaxUint64, 0, steps(step{350 * time.Millisecond, status("working")}), link.DeliverySubmitted, 400 * time.Millisecond},
		{"a short turn across the wrap", math.MaxUint64, 0, steps(step{350 * time.Millisecond, status("working")}, step{360 * time.Millisecond, status("idle")}), link.DeliverySubmitted, 400 * time.Millisecond},
		// A submission seen before the hold ends keeps the lock until it
		// ends (a simulator's short hold: Enter after 50 ms).
		{"submitted before the hold", 7, 600 * time.Millisecond, steps(step{510 * time.Millisecond, status("working")}), link.DeliverySubmitted, 550 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				defer time.Sleep(5 * time.Second) // the script ends
				f := newFake("claude", "idle")
				f.target.Seq = tc.seq
				f.script = tc.script
				lk := newLocker()
				l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1", Delivery: link.DeliveryConfirm, Locker: lk, SubmitHold: tc.hold,
					ConfirmBudget: func(int) time.Duration { return link.ConfirmBudget(600) }})
				start := time.Now()
				res, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "x", When: link.WhenNow})
				took := time.Since(start)
				if err != nil || res.Delivery != tc.want || took < tc.took-50*time.Millisecond || took > tc.took+60*time.Millisecond {
					t.Fatalf("send = %s, %v after %v; want %s after %v (-50ms, +60ms)", res.Delivery, err, took, tc.want, tc.took)
				}
				hold := tc.hold
				if hold == 0 {
					hold = link.SubmitHold
				}
				if took < hold && !lk.isHeld() {
					t.Fatalf("lock released after %v, before the hold (%v)", took, hold)
				}
				time.Sleep(hold - took + time.Millisecond)
				if lk.isHeld() {
					t.Fatal("lock held past the hold")
				}
			})
		})
	}
}

// The wait for the lock follows the call's deadline, however long.
func TestLockWaitFollowsTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lk := newLocker()
		held, _ := lk.Lock(t.Context(), "term_2", 0)
		defer held.Unlock()
		f := newFake("codex", "idle")
		l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1", Locker: lk, CallTimeout: 30 * time.Second})
		start := time.Now()
		_, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "x", When: link.WhenNow})
		if el := time.Since(start); !errors.Is(err, link.ErrSendFailed) || el != 29*time.Second || f.prompts != 0 {
			t.Fatalf("%v after %v, %d prompts", err, el, f.prompts)
		}
	})
}

// A lock that cannot be had (an unsafe directory) fails the send, nothing
// typed: never a delivery without serialization.
func TestUnusableLockFailsClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake("claude", "idle")
		l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1", Locker: brokenLocker{}})
		_, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "x", When: link.WhenNow})
		want := "SEND_FAILED: the delivery lock is unavailable: herdr-link found no directory private to this user (another user may have made the one it must use); nothing was delivered. The operator can see which directory failed which check with 'herdr-link outbox' and fix it (remove a directory another user made, or give this user a private /run/user directory or a home directory)"
		if err == nil || err.Error() != want || f.prompts != 0 {
			t.Fatalf("%v, %d prompts", err, f.prompts)
		}
	})
}

// A lease lost while the process was stopped: nothing is typed.
func TestLostLeaseTypesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake("claude", "idle")
		l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1", Locker: lostLocker{}})
		_, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "x", When: link.WhenNow})
		if !errors.Is(err, link.ErrSendFailed) || f.prompts != 0 {
			t.Fatalf("%v, %d prompts", err, f.prompts)
		}
	})
}

type lostLocker struct{}

func (lostLocker) Lock(context.Context, string, time.Duration) (link.Lease, error) {
	return &fakeLease{lost: true, unlock: func() {}}, nil
}

// A target that is not ready (a just-detected agent, status unknown; a
// managed launch still pending) is waited for within the call, then
// delivered to; one that stays so fails clearly, nothing typed.
func TestNotReadyTarget(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  string
		pending bool
		readyAt time.Duration // 0: never
		want    string        // "" delivered
	}{
		{"unknown, ready at 1 s", "unknown", false, time.Second, ""},
		{"launch pending, ready at 2 s", "idle", true, 2 * time.Second, ""},
		{"unknown for good", "unknown", false, 0, "SEND_FAILED: the target agent is still starting up and cannot take a message yet; nothing was delivered, try again in a few seconds"},
		{"pending for good", "blocked", true, 0, "SEND_FAILED: the target agent is still starting up and cannot take a message yet; nothing was delivered, try again in a few seconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFake("codex", tc.status)
				f.target.LaunchPending = tc.pending
				if tc.readyAt > 0 {
					go steps(step{tc.readyAt, func(a *link.Agent) { a.Status, a.LaunchPending, a.Seq = "idle", false, a.Seq+1 }})(f)
				}
				f.script = after(300*time.Millisecond, "working")
				l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1", Delivery: link.DeliveryConfirm, Locker: newLocker(), CallTimeout: 5 * time.Second})
				start := time.Now()
				res, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "x", When: link.WhenNow})
				el := time.Since(start)
				if tc.want != "" {
					if err == nil || err.Error() != tc.want || f.prompts != 0 || el != 4*time.Second {
						t.Fatalf("send = %s, %v after %v, %d prompts; want %q after 4s, no prompt", res.Delivery, err, el, f.prompts, tc.want)
					}
					return
				}
				if err != nil || f.prompts != 1 || res.Delivery != link.DeliverySubmitted || el < tc.readyAt || el > tc.readyAt+time.Second {
					t.Fatalf("send = %s, %v after %v, %d prompts; want %s after %v..%v, one prompt",
						res.Delivery, err, el, f.prompts, link.DeliverySubmitted, tc.readyAt, tc.readyAt+time.Second)
				}
				time.Sleep(time.Second)
			})
		})
	}
}
