package link_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket"
)

// fakeLocker is an in-process Locker that records its holder.
type fakeLocker struct {
	mu   sync.Mutex
	held bool
	ch   chan struct{}
	keys []string
}

func newLocker() *fakeLocker { return &fakeLocker{ch: make(chan struct{}, 1)} }

func (l *fakeLocker) Lock(ctx context.Context, term string, _ time.Duration) (link.Lease, error) {
	select {
	case l.ch <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	l.mu.Lock()
	l.held = true
	l.keys = append(l.keys, term)
	l.mu.Unlock()
	fl := &fakeLease{}
	fl.unlock = func() {
		fl.once.Do(func() {
			l.mu.Lock()
			l.held = false
			l.mu.Unlock()
			<-l.ch
		})
	}
	return fl, nil
}

// fakeLease is a lease of fakeLocker; lost makes Begin fail.
type fakeLease struct {
	once   sync.Once
	unlock func()
	lost   bool
}

func (f *fakeLease) Begin(time.Duration) error {
	if f.lost {
		return errors.New("lease lost")
	}
	return nil
}
func (f *fakeLease) Extend(time.Duration) {}
func (f *fakeLease) Unlock()              { f.unlock() }

func (l *fakeLocker) isHeld() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held
}

func TestDeliveryLock(t *testing.T) {
	t.Run("held across the prompt", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newFake("codex", "working")
			lk := newLocker()
			f.locked = lk.isHeld
			l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1", Delivery: link.DeliveryConfirm, Locker: lk})
			if _, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "x", When: link.WhenNow}); err != nil {
				t.Fatal(err)
			}
			if len(f.lockedAt) != 1 || !f.lockedAt[0] || len(lk.keys) != 1 || lk.keys[0] != "term_2" {
				t.Fatalf("lock held at prompt: %v, keys %v", f.lockedAt, lk.keys)
			}
			time.Sleep(link.SubmitHold)
			// Without a terminal id, the pane id keys the lock.
			f.target.TerminalID = ""
			if _, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "x", When: link.WhenNow}); err != nil || lk.keys[1] != "pane:w1:p2" {
				t.Fatalf("%v, keys %v", err, lk.keys)
			}
			time.Sleep(link.SubmitHold)
		})
	})
	t.Run("waiting is bounded by the call's deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newFake("codex", "idle")
			lk := newLocker()
			held, _ := lk.Lock(t.Context(), "term_2", 0) // another sender
			defer held.Unlock()
			l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1", Delivery: link.DeliveryConfirm, Locker: lk})
			ctx, cancel := context.WithTimeout(t.Context(), 4*time.Second)
			defer cancel()
			start := time.Now()
			_, err := l.Send(ctx, link.SendRequest{To: "reviewer", Message: "x", When: link.WhenNow})
			if !errors.Is(err, link.ErrSendFailed) || err.Error() != "SEND_FAILED: other deliveries to this agent took the time this call had; nothing was delivered: send it again without \"when\":\"now\" to have it wait its turn, or try again in a few seconds" {
				t.Fatalf("err = %v", err)
			}
			// One second of the deadline stays for the prompt.
			if el := time.Since(start); el != 3*time.Second {
				t.Fatalf("waited %v", el)
			}
			if f.prompts != 0 {
				t.Fatal("prompted without the lock")
			}
		})
	})
	t.Run("the call's deadline, not LockWait, bounds the wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			lk := newLocker()
			held, _ := lk.Lock(t.Context(), "term_2", 0)
			defer held.Unlock()
			l := mustLink(t, link.Config{Herdr: newFake("codex", "idle"), PaneID: "w1:p1", Locker: lk, LockWait: 2 * time.Second})
			start := time.Now()
			if _, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "x", When: link.WhenNow}); !errors.Is(err, link.ErrSendFailed) || time.Since(start) != 4*time.Second {
				t.Fatalf("err = %v after %v", err, time.Since(start))
			}
		})
	})
	t.Run("a failure before the write releases at once, after it past the Enter", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newFake("claude", "idle")
			lk := newLocker()
			l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1", Locker: lk})
			f.promptFn = func() error { return &socket.Error{Code: "agent_prompt_failed", Message: "no capacity"} }
			if _, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "x", When: link.WhenNow}); !errors.Is(err, link.ErrSendFailed) || lk.isHeld() {
				t.Fatalf("refused: %v, held %v", err, lk.isHeld())
			}
			f.promptFn = func() error { return socket.AfterWrite(socket.ErrTimeout) }
			_, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "x", When: link.WhenNow})
			if !errors.Is(err, link.ErrSendFailed) || !lk.isHeld() {
				t.Fatalf("after the write: %v, held %v", err, lk.isHeld())
			}
			time.Sleep(link.SubmitHold + time.Millisecond)
			if lk.isHeld() {
				t.Fatal("still held")
			}
		})
	})
}

// Wait returns once the background holds are released, and no sooner.
func TestWaitForHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lk := newLocker()
		l := mustLink(t, link.Config{Herdr: newFake("claude", "idle"), PaneID: "w1:p1", Locker: lk}) // fast mode
		if err := l.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "x", When: link.WhenNow}); err != nil || !lk.isHeld() {
			t.Fatalf("%v, held %v", err, lk.isHeld())
		}
		ctx, cancel := context.WithTimeout(t.Context(), link.SubmitHold/2)
		defer cancel()
		if err := l.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait before the hold ended: %v", err)
		}
		if err := l.Wait(t.Context()); err != nil || time.Since(start) != link.SubmitHold || lk.isHeld() {
			t.Fatalf("Wait: %v after %v, held %v", err, time.Since(start), lk.isHeld())
		}
		if l.LongestHold() != link.SubmitHold {
			t.Fatal(l.LongestHold())
		}
	})
}

// A queued delivery keeps the lock past Herdr's Enter only, not through
// the running turn: a second sender joins the queued turn.
func TestQueuedDeliveryHoldsPastTheEnterOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		defer time.Sleep(3 * time.Second) // the scripts end, even after a failure
		f := newFake("claude", "working")
		f.script = slow(time.Second, "idle", "working") // turn ends at 1 s, the queued one starts at 2 s
		lk := newLocker()
		l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1", Delivery: link.DeliveryConfirm, Locker: lk})
		start := time.Now()
		res, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "x", When: link.WhenNow})
		if err != nil || res.Delivery != link.DeliveryQueued || time.Since(start) != 0 {
			t.Fatalf("send now = %s, %v after %v; want %s at once", res.Delivery, err, time.Since(start), link.DeliveryQueued)
		}
		// A second sender joins the queued turn once Herdr's Enter is
		// past, not after the running turn.
		l2 := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1", Delivery: link.DeliveryConfirm, Locker: lk})
		res, err = l2.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "y", When: link.WhenNow})
		if el := time.Since(start); err != nil || el < link.SubmitHold || el > link.SubmitHold+50*time.Millisecond || res.Delivery != link.DeliveryQueued {
			t.Fatalf("second send = %s, %v after %v; want %s after %v (+50ms)", res.Delivery, err, el, link.DeliveryQueued, link.SubmitHold)
		}
		time.Sleep(link.SubmitHold + time.Millisecond)
		if lk.isHeld() {
			t.Fatal("still held")
		}
	})
}
