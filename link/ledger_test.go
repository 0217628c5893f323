package link_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// ledgerLink is a courier-test link with a short reply grace.
func (e courierEnv) ledgerLink(t *testing.T, pane string) *link.Link {
	l := e.link(t, pane)
	l = relink(t, l, func(c *link.Config) { c.ReplyGrace = 200 * time.Millisecond })
	return l
}

// texts lists the turns' texts for a failure message.
func texts(subs []sockettest.Submission) []string {
	out := make([]string, len(subs))
	for i, s := range subs {
		out[i] = s.Text
	}
	return out
}

func notices(e courierEnv, pane string) []link.Notice {
	var out []link.Notice
	for _, s := range e.w.Submissions(pane) {
		out = append(out, link.ExtractNotices(s.Text)...)
	}
	return out
}

// A request answered through the recipient's own herdr-link ends replied:
// no notice; the sender's peers list it as awaited until then.
func TestRequestReplied(t *testing.T) { synctest.Test(t, testRequestReplied) }

func testRequestReplied(t *testing.T) {
	e := newCourierEnv(t)
	brain, quick := e.ledgerLink(t, "w1:p1"), e.ledgerLink(t, "w1:p6")
	run(t, brain)
	run(t, quick)
	// quick is on it until it answers.
	if err := e.w.SetBehaviour("w1:p6", sockettest.Behaviour{TurnTime: -1}); err != nil {
		t.Fatal(err)
	}
	req := mustSend(t, brain, link.SendRequest{To: "quick", Message: "what is 2+2?"})
	r, err := brain.Peers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Peers {
		if want := p.Name == "quick"; want != (len(p.AwaitingReply) == 1 && p.AwaitingReply[0] == req.ID) {
			t.Errorf("peer %s awaiting %v", p.Name, p.AwaitingReply)
		}
	}
	eventually(t, "typed", func() bool { return len(e.w.Submissions("w1:p6")) == 1 })
	rep := mustSend(t, quick, link.SendRequest{To: "brain", Message: "4", ReplyTo: req.ID})
	if rep.Delivery == "" {
		t.Fatal(rep)
	}
	w, err := brain.WaitReply(t.Context(), req.ID, 5*time.Second, nil)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	if diff := cmp.Diff(link.WaitResult{ID: req.ID, Peer: "quick", State: outbox.OutcomeReplied}, w); diff != "" {
		t.Fatalf("wait mismatch (-want +got):\n%s", diff)
	}
	time.Sleep(500 * time.Millisecond) // past the grace: still no notice
	if n := notices(e, "w1:p1"); len(n) != 0 {
		t.Fatalf("%d notices for a replied request, want none", len(n))
	}
	// The answer expected no reply: nothing tracks it.
	if _, err := quick.WaitReply(t.Context(), rep.ID, time.Millisecond, nil); !errors.Is(err, link.ErrInvalidArgument) {
		t.Errorf("wait on an answer: %v", err)
	}
}

// A request whose recipient's turn ends without a reply: one notice turn
// in the sender's pane, handled; waiting on it returns handled.
func TestRequestHandledNotice(t *testing.T) { synctest.Test(t, testRequestHandledNotice) }

func testRequestHandledNotice(t *testing.T) {
	e := newCourierEnv(t)
	brain := e.ledgerLink(t, "w1:p1")
	run(t, brain)
	req := mustSend(t, brain, link.SendRequest{To: "quick", Message: "fyi, no answer needed"})
	start := time.Now()
	w, err := brain.WaitReply(t.Context(), req.ID, 5*time.Second, nil)
	if err != nil || w.State != outbox.OutcomeHandled {
		t.Fatalf("wait = %s, %v; want %s", w.State, err, outbox.OutcomeHandled)
	}
	eventually(t, "a notice turn", func() bool { return len(notices(e, "w1:p1")) == 1 })
	if took := time.Since(start); took > brain.Config().ReplyGrace+2*time.Second+link.DefaultCourierPoll {
		t.Errorf("notice after %v", took)
	}
	n := notices(e, "w1:p1")[0]
	if diff := cmp.Diff(link.Notice{Protocol: link.Protocol, Notice: "handled", About: req.ID, Peer: "quick"}, n); diff != "" {
		t.Errorf("notice mismatch (-want +got):\n%s", diff)
	}
	if subs := e.w.Submissions("w1:p1"); len(subs) != 1 || len(link.ExtractAll(subs[0].Text)) != 0 {
		t.Errorf("sender's turns %q, want only the notice", texts(subs))
	}
	time.Sleep(300 * time.Millisecond)
	if len(notices(e, "w1:p1")) != 1 {
		t.Error("a second notice")
	}
}

// Blocked while on the request, or its pane closed: one notice each.
func TestRequestBlockedAndGone(t *testing.T) { synctest.Test(t, testRequestBlockedAndGone) }

func testRequestBlockedAndGone(t *testing.T) {
	e := newCourierEnv(t)
	brain := e.ledgerLink(t, "w1:p1")
	run(t, brain)
	if err := e.w.SetBehaviour("w1:p6", sockettest.Behaviour{TurnTime: -1}); err != nil {
		t.Fatal(err)
	}
	blocked := mustSend(t, brain, link.SendRequest{To: "quick", Message: "needs a permission"})
	eventually(t, "typed", func() bool { return len(e.w.Submissions("w1:p6")) == 1 })
	if err := e.w.SetStatus("w1:p6", "blocked"); err != nil {
		t.Fatal(err)
	}
	gone := mustSend(t, brain, link.SendRequest{To: "busy", Message: "are you there?"})
	if gone.Delivery != link.DeliveryHeld {
		t.Fatalf("send to busy = %s, want %s", gone.Delivery, link.DeliveryHeld)
	}
	if err := e.w.Close("w1:p3"); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{blocked.ID: "blocked", gone.ID: "gone"} {
		if w, err := brain.WaitReply(t.Context(), id, 10*time.Second, nil); err != nil || w.State != want {
			t.Errorf("wait %s = %s, %v; want %s", id, w.State, err, want)
		}
	}
	eventually(t, "two notices", func() bool { return len(notices(e, "w1:p1")) == 2 })
	got := map[string]string{}
	for _, n := range notices(e, "w1:p1") {
		got[n.About] = n.Notice
	}
	if got[blocked.ID] != "blocked" || got[gone.ID] != "gone" {
		t.Errorf("notices %v", got)
	}
}

// Several senders, several recipients at once: each sender gets exactly
// its own notices, and several due at once are one turn.
func TestNoticesGoToTheirSenders(t *testing.T) { synctest.Test(t, testNoticesGoToTheirSenders) }

func testNoticesGoToTheirSenders(t *testing.T) {
	e := newCourierEnv(t)
	senders := map[string]*link.Link{"w1:p1": e.ledgerLink(t, "w1:p1"), "w1:p2": e.ledgerLink(t, "w1:p2")}
	for _, l := range senders {
		run(t, l)
	}
	want := map[string]map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	i := 0
	for pane, l := range senders {
		want[pane] = map[string]bool{}
		for _, to := range []string{"quick", "coder", "busy"} {
			wg.Add(1)
			go func(l *link.Link, pane, to string, i int) {
				defer wg.Done()
				r := mustSend(t, l, link.SendRequest{To: to, Message: fmt.Sprint("job ", i)})
				mu.Lock()
				want[pane][r.ID] = true
				mu.Unlock()
			}(l, pane, to, i)
			i++
		}
	}
	wg.Wait()
	for _, p := range []string{"w1:p3", "w1:p4"} {
		if err := e.w.SetStatus(p, "idle"); err != nil {
			t.Fatal(err)
		}
	}
	for pane, ids := range want {
		eventually(t, "every notice of "+pane, func() bool { return len(notices(e, pane)) >= len(ids) })
	}
	time.Sleep(300 * time.Millisecond)
	for pane, ids := range want {
		ns := notices(e, pane)
		if len(ns) != len(ids) {
			t.Errorf("%s: %d notices, want %d", pane, len(ns), len(ids))
		}
		for _, n := range ns {
			if !ids[n.About] || n.Notice != "handled" {
				t.Errorf("%s got notice %s about %s, want handled about one of its requests", pane, n.Notice, n.About)
			}
		}
		if turns := len(e.w.Submissions(pane)); turns >= len(ns) && len(ns) > 1 && turns == len(ns) {
			t.Logf("%s: %d notices in %d turns", pane, len(ns), turns)
		}
	}
}

// wait: pending at its timeout, INVALID_ARGUMENT for ids that are not the
// caller's requests (another sender's look the same as unknown ones), and
// it ends at once when its context is cancelled.
func TestWaitBounds(t *testing.T) { synctest.Test(t, testWaitBounds) }

func testWaitBounds(t *testing.T) {
	e := newCourierEnv(t)
	brain, writer := e.ledgerLink(t, "w1:p1"), e.ledgerLink(t, "w1:p2")
	req := mustSend(t, brain, link.SendRequest{To: "busy", Message: "long job"})
	if w, err := brain.WaitReply(t.Context(), req.ID, 50*time.Millisecond, nil); err != nil || w.State != link.RequestPending || w.Peer != "busy" {
		t.Fatalf("short wait = %s from %q, %v; want %s from busy", w.State, w.Peer, err, link.RequestPending)
	}
	var texts []string
	for _, c := range []struct {
		l  *link.Link
		id string
	}{{writer, req.ID}, {brain, "hl_zzz_000"}, {brain, "nope"}} {
		_, err := c.l.WaitReply(t.Context(), c.id, time.Millisecond, nil)
		if !errors.Is(err, link.ErrInvalidArgument) {
			t.Fatalf("wait %s: %v", c.id, err)
		}
		texts = append(texts, err.Error())
	}
	if texts[0] != texts[1] {
		t.Errorf("another sender's request reads %q, an unknown one %q", texts[0], texts[1])
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := brain.WaitReply(ctx, req.ID, 40*time.Second, nil)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("cancelled wait returned no error")
		}
	case <-time.After(time.Second):
		t.Fatal("cancelled wait did not end")
	}
	if strings.Contains(strings.Join(texts, "|"), "w1") {
		t.Errorf("an id in %q", texts)
	}
}

// A held answer (not a request) that ends untyped still reaches its
// sender as a notice, once.
func TestHeldAnswerExpiredNotice(t *testing.T) { synctest.Test(t, testHeldAnswerExpiredNotice) }

func testHeldAnswerExpiredNotice(t *testing.T) {
	e := newCourierEnv(t)
	brain := e.ledgerLink(t, "w1:p1")
	brain = relink(t, brain, func(c *link.Config) { c.HoldFor = 50 * time.Millisecond })
	r := mustSend(t, brain, link.SendRequest{To: "busy", Message: "late answer", ReplyTo: "hl_aa_bb"})
	if r.Delivery != link.DeliveryHeld {
		t.Fatalf("send to busy = %s, want %s", r.Delivery, link.DeliveryHeld)
	}
	time.Sleep(60 * time.Millisecond)
	run(t, brain)
	eventually(t, "an expired notice", func() bool { return len(notices(e, "w1:p1")) == 1 })
	if n := notices(e, "w1:p1")[0]; n.Notice != "expired" || n.About != r.ID || n.Peer != "busy" {
		t.Errorf("notice %s about %s from %s, want expired about %s from busy", n.Notice, n.About, n.Peer, r.ID)
	}
	time.Sleep(300 * time.Millisecond)
	if len(notices(e, "w1:p1")) != 1 || len(e.w.Inputs("w1:p3")) != 0 {
		t.Errorf("notices %d, typed into busy %q", len(notices(e, "w1:p1")), e.w.Inputs("w1:p3"))
	}
}

// A request's record is written while its delivery lock is taken: a send
// that cannot have the lock leaves none, one that typed leaves it pending
// and typed (recorded in the background, done once Wait returns).
func TestRequestRecordAroundTheLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := outbox.Open(t.TempDir(), "sim")
		if err != nil {
			t.Fatal(err)
		}
		lk := newLocker()
		held, _ := lk.Lock(t.Context(), "term_2", 0)
		l := mustLink(t, link.Config{Herdr: newFake("codex", "idle"), PaneID: "w1:p1", Locker: lk, Outbox: st, LockWait: time.Second})
		ctx := t.Context()
		if _, err := l.Send(ctx, link.SendRequest{To: "reviewer", Message: "x", When: link.WhenNow}); !errors.Is(err, link.ErrSendFailed) {
			t.Fatalf("send with the lock taken: %v, want SEND_FAILED", err)
		}
		if ents, _ := st.List(); len(ents) != 0 {
			t.Fatalf("a send that typed nothing left %d records (first %s), want none", len(ents), ents[0].ID)
		}
		held.Unlock()
		r, err := l.Send(ctx, link.SendRequest{To: "reviewer", Message: "x", When: link.WhenNow})
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		e, err := st.FindRequest(r.ID)
		if err != nil {
			t.Fatalf("the typed request's record: %v", err)
		}
		rec, err := st.Request(e)
		if err != nil || rec.State != outbox.StatePending || rec.Typed.IsZero() {
			t.Fatalf("record state %c, typed at %v, %v; want %c and a typed time", rec.State, rec.Typed, err, outbox.StatePending)
		}
	})
}
