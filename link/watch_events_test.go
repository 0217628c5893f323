package link_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/link"
)

// at returns a script that sets each status at its time after the prompt.
func at(steps ...any) func(*fakeHerdr) {
	return func(f *fakeHerdr) {
		start := time.Now()
		for i := 0; i+1 < len(steps); i += 2 {
			switch s := steps[i+1].(type) {
			case string:
				time.Sleep(time.Until(start.Add(steps[i].(time.Duration))))
				f.set(s)
			case func(*fakeHerdr):
				time.Sleep(time.Until(start.Add(steps[i].(time.Duration))))
				s(f)
			}
		}
	}
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// The confirmation watch driven by the target's status stream: the same
// answers as the polling watch, as soon as the change is seen instead of
// at the next 50 ms probe. Herdr's Enter comes 300 ms after its answer
// (the default 400 ms hold).
func TestEventWatch(t *testing.T) {
	end := (*fakeHerdr).endStreams
	tests := []struct {
		name    string
		kind    string
		status  string
		events  bool
		after   bool // Herdr answers after its Enter (0.9)
		script  func(*fakeHerdr)
		want    string
		took    time.Duration // virtual time of Send, exactly
		watches int           // subscriptions asked for
	}{
		{"idle target submits 6 ms after Enter", "claude", "idle", true, false, at(ms(306), "working"), link.DeliverySubmitted, ms(306), 1},
		{"without events: the next probe (2, 4, 8… ms after Enter)", "claude", "idle", false, false, at(ms(305), "working"), link.DeliverySubmitted, ms(306), 1},
		{"without events, a later turn", "claude", "idle", false, false, at(ms(340), "working"), link.DeliverySubmitted, ms(362), 1},
		{"a short turn, over before the probe", "codex", "idle", true, false, at(ms(306), "working", ms(307), "idle"), link.DeliverySubmitted, ms(306), 1},
		{"blocked at once", "claude", "idle", true, false, at(ms(306), "blocked"), link.DeliverySubmitted, ms(306), 1},
		{"flap before Enter, then the turn", "claude", "idle", true, false, at(ms(100), "working", ms(110), "idle", ms(320), "working"), link.DeliverySubmitted, ms(320), 1},
		{"flap before Enter only", "claude", "idle", true, false, at(ms(100), "working", ms(110), "idle"), link.DeliveryUnconfirmed, link.ConfirmBudget(600), 1},
		{"busy since before Enter: decided at the Enter", "claude", "idle", true, false, at(ms(100), "working"), link.DeliverySubmitted, ms(300), 1},
		{"working unknown kind: turn ends, a new one", "kimi", "working", true, false, at(ms(500), "idle", ms(510), "working"), link.DeliverySubmitted, ms(510), 1},
		{"working unknown kind: turn ends, nothing follows", "kimi", "working", true, false, at(ms(500), "idle"), link.DeliveryUnconfirmed, link.ConfirmBudget(600), 1},
		{"working unknown kind stays working", "kimi", "working", true, false, nil, link.DeliveryUnconfirmed, link.ConfirmBudget(600), 1},
		{"working claude queues: no subscription", "claude", "working", true, false, nil, link.DeliveryQueued, 0, 0},
		{"working codex interrupts: no subscription", "codex", "working", true, false, nil, link.DeliveryInterrupting, 0, 0},
		{"stream ends mid-watch: the probes go on", "claude", "idle", true, false, at(ms(100), end, ms(340), "working"), link.DeliverySubmitted, ms(362), 1},
		{"stream ends at the change: the probes go on", "claude", "idle", true, false, at(ms(340), end, ms(340), "working"), link.DeliverySubmitted, ms(362), 1},
		{"0.9: turn under way at the answer", "claude", "idle", true, true, at(ms(0), "working"), link.DeliverySubmitted, 0, 1},
		{"0.9: the turn starts after the answer", "claude", "idle", true, true, at(ms(6), "working"), link.DeliverySubmitted, ms(6), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFake(tt.kind, tt.status)
				f.events = tt.events
				f.script = tt.script
				l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1", Delivery: link.DeliveryConfirm, Locker: newLocker(),
					ConfirmBudget: func(int) time.Duration { return link.ConfirmBudget(600) }})
				if tt.after {
					l = relink(t, l, func(c *link.Config) { c.Capabilities = &link.Capabilities{PromptAfterEnter: true} })
				}
				start := time.Now()
				res, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "please review", When: link.WhenNow})
				took := time.Since(start)
				if err != nil {
					t.Fatal(err)
				}
				if res.Delivery != tt.want || took != tt.took {
					t.Fatalf("delivery %s after %v, want %s after %v", res.Delivery, took, tt.want, tt.took)
				}
				// The script and the lock's hold end.
				time.Sleep(time.Second)
				synctest.Wait()
				f.mu.Lock()
				defer f.mu.Unlock()
				if f.watches != tt.watches {
					t.Fatalf("%d subscriptions, want %d", f.watches, tt.watches)
				}
				if tt.events && tt.watches > 0 && !f.openAtPut[0] {
					t.Fatal("the stream was not open when the prompt was typed")
				}
				for _, s := range f.streams {
					if !s.closed {
						t.Fatal("stream left open after the send")
					}
				}
			})
		})
	}
}

// A Herdr that refuses the subscription (or fails it) gets today's
// polling watch: the send neither fails nor waits longer.
func TestEventWatchRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake("claude", "idle")
		f.watchErr = errors.New("invalid request: unknown variant `events.subscribe`")
		f.script = at(ms(340), "working")
		l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1", Delivery: link.DeliveryConfirm, Locker: newLocker()})
		start := time.Now()
		res, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "x"})
		if err != nil || res.Delivery != link.DeliverySubmitted || time.Since(start) != ms(362) {
			t.Fatalf("send = %s, %v after %v; want %s after 362ms", res.Delivery, err, time.Since(start), link.DeliverySubmitted)
		}
		time.Sleep(time.Second)
		// Fast mode subscribes to nothing.
		f2 := newFake("claude", "idle")
		f2.events = true
		l2 := mustLink(t, link.Config{Herdr: f2, PaneID: "w1:p1", Locker: newLocker()})
		if _, err := l2.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "x"}); err != nil || f2.watches != 0 {
			t.Fatalf("fast mode: %v, %d subscriptions", err, f2.watches)
		}
	})
}
