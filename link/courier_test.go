package link_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/internal/panelock"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// The world of the courier tests: two senders, a working claude whose
// turns are short once it is idle, a working codex, a blocked claude.
const courierWorld = `{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[
 {"id":"w1:p1","agent":{"kind":"claude","name":"brain","status":"idle"}},
 {"id":"w1:p2","agent":{"kind":"claude","name":"writer","status":"idle"}},
 {"id":"w1:p3","agent":{"kind":"claude","name":"busy","status":"working","turn_ms":40,"submit_ms":10}},
 {"id":"w1:p4","agent":{"kind":"codex","name":"coder","status":"working","turn_ms":40}},
 {"id":"w1:p5","agent":{"kind":"claude","name":"stuck","status":"blocked","turn_ms":40}},
 {"id":"w1:p6","agent":{"kind":"claude","name":"quick","status":"idle","turn_ms":40,"submit_ms":10}}
]}]}]}`

type courierEnv struct {
	srv  *sockettest.Server
	w    *sockettest.World
	box  string // the outbox's directory
	lock string // the lock directory
}

func newCourierEnv(t *testing.T) courierEnv {
	t.Helper()
	w, err := sockettest.ParseWorld([]byte(courierWorld))
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w, sockettest.InMemory, func(s *sockettest.Server) { s.SubmitDelay = 20 * time.Millisecond })
	return courierEnv{srv: srv, w: w, box: t.TempDir(), lock: privateDir(t)}
}

// privateDir is a temporary directory of mode 0700, as a lock directory
// must be.
func privateDir(t *testing.T) string {
	d := t.TempDir()
	if err := os.Chmod(d, 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}

// link is one herdr-link process of pane: its own outbox handle (owner)
// on the shared directory, and the shared locks.
func (e courierEnv) link(t *testing.T, pane string) *link.Link {
	t.Helper()
	st, err := outbox.Open(e.box, "sim")
	if err != nil {
		t.Fatal(err)
	}
	c := e.srv.Client()
	c.Timeout = 2 * time.Second
	return mustLink(t, link.Config{Herdr: link.SocketHerdr{Client: c}, PaneID: pane, CallTimeout: c.Timeout, Delivery: link.DeliveryConfirm,
		SubmitHold: 60 * time.Millisecond, ConfirmBudget: func(int) time.Duration { return 500 * time.Millisecond },
		Locker: link.FileLocks(&panelock.Locker{Scope: "sim", Dir: e.lock}), Outbox: st, CourierPoll: 100 * time.Millisecond})
}

// run runs l's courier until the test ends.
func run(t *testing.T, l *link.Link) {
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = l.Deliver(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// eventually polls cond for up to 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func held(t *testing.T, l *link.Link, peer string) int {
	t.Helper()
	p, ok := peerOf(t, l, peer)
	if !ok {
		t.Fatalf("no peer %s", peer)
	}
	return p.Held
}

// peerOf is peer as l's herdr_link_peers lists it; false when it is not
// listed.
func peerOf(t *testing.T, l *link.Link, peer string) (link.Peer, bool) {
	t.Helper()
	r, err := l.Peers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Peers {
		if p.Name == peer {
			return p, true
		}
	}
	return link.Peer{}, false
}

// envelopeIDs lists the envelopes' ids for a failure message.
func envelopeIDs(envs []link.Envelope) []string {
	ids := make([]string, len(envs))
	for i, e := range envs {
		ids[i] = e.ID
	}
	return ids
}

func mustSend(t *testing.T, l *link.Link, req link.SendRequest) link.SendResult {
	t.Helper()
	r, err := l.Send(t.Context(), req)
	if err != nil {
		t.Fatalf("send to %s: %v", req.To, err)
	}
	return r
}

// A message for a working agent is held, then typed as its own turn once
// the running turn ended; messages held for one target go in the order
// they were accepted, one per turn, across senders.
func TestHeldUntilTheTurnEnds(t *testing.T) {
	for _, target := range []struct{ name, pane string }{{"busy", "w1:p3"}, {"coder", "w1:p4"}} {
		t.Run(target.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newCourierEnv(t)
				brain, writer := e.link(t, "w1:p1"), e.link(t, "w1:p2")
				var ids []string
				for i, l := range []*link.Link{brain, writer, brain} {
					r := mustSend(t, l, link.SendRequest{To: target.name, Message: fmt.Sprint("message ", i)})
					if r.Delivery != link.DeliveryHeld {
						t.Fatalf("send %d to a working agent = %s, want held", i, r.Delivery)
					}
					ids = append(ids, r.ID)
				}
				if n := held(t, brain, target.name); n != 2 {
					t.Errorf("brain sees %d held, want 2", n)
				}
				if n := held(t, writer, target.name); n != 1 {
					t.Errorf("writer sees %d held, want 1", n)
				}
				run(t, brain)
				run(t, writer)
				if len(e.w.Inputs(target.pane)) != 0 {
					t.Fatal("typed into a working agent")
				}
				if e.w.Interrupts(target.pane) != 0 {
					t.Fatal("a working turn was interrupted")
				}
				if err := e.w.SetStatus(target.pane, "idle"); err != nil {
					t.Fatal(err)
				}
				eventually(t, "three turns", func() bool { return len(e.w.Submissions(target.pane)) == 3 })
				for i, s := range e.w.Submissions(target.pane) {
					envs := link.ExtractAll(s.Text)
					if len(envs) != 1 || envs[0].ID != ids[i] {
						t.Fatalf("turn %d holds %q, want only %s", i, envelopeIDs(envs), ids[i])
					}
				}
				eventually(t, "nothing held", func() bool { return held(t, brain, target.name) == 0 && held(t, writer, target.name) == 0 })
			})
		})
	}
}

// An idle target with nothing held before takes the message at once; with
// "now" a working target gets it at once too.
func TestWhenIdleAndNow(t *testing.T) { synctest.Test(t, testWhenIdleAndNow) }

func testWhenIdleAndNow(t *testing.T) {
	e := newCourierEnv(t)
	brain := e.link(t, "w1:p1")
	if r := mustSend(t, brain, link.SendRequest{To: "quick", Message: "hi"}); r.Delivery != link.DeliverySubmitted {
		t.Errorf("to an idle agent = %s, want %s", r.Delivery, link.DeliverySubmitted)
	}
	if r := mustSend(t, brain, link.SendRequest{To: "busy", Message: "stop", When: link.WhenNow}); r.Delivery != link.DeliveryQueued {
		t.Errorf("now, to a working claude = %s, want %s", r.Delivery, link.DeliveryQueued)
	}
	if r := mustSend(t, brain, link.SendRequest{To: "coder", Message: "stop", When: link.WhenNow}); r.Delivery != link.DeliveryInterrupting {
		t.Errorf("now, to a working codex = %s, want %s", r.Delivery, link.DeliveryInterrupting)
	}
	if _, err := brain.Send(t.Context(), link.SendRequest{To: "stuck", Message: "x", When: link.WhenNow}); code(err) != link.SendFailed {
		t.Errorf("now, to a blocked agent: %v", err)
	}
}

// A blocked target gets the message once it is unblocked and idle.
func TestHeldWhileBlocked(t *testing.T) { synctest.Test(t, testHeldWhileBlocked) }

func testHeldWhileBlocked(t *testing.T) {
	e := newCourierEnv(t)
	brain := e.link(t, "w1:p1")
	r := mustSend(t, brain, link.SendRequest{To: "stuck", Message: "when you can"})
	if r.Delivery != link.DeliveryHeld {
		t.Fatalf("delivery %s, want %s", r.Delivery, link.DeliveryHeld)
	}
	run(t, brain)
	if err := e.w.SetStatus("w1:p5", "working"); err != nil {
		t.Fatal(err)
	}
	if err := e.w.SetStatus("w1:p5", "idle"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "delivered", func() bool { return len(e.w.Submissions("w1:p5")) == 1 })
	if env, ok := link.Extract(e.w.Submissions("w1:p5")[0].Text); !ok || env.ID != r.ID {
		t.Fatalf("turn %q", e.w.Submissions("w1:p5")[0].Text)
	}
}

// The accepting process gone (its owner lock released, as a crash
// does), another process serving the same Herdr delivers its message,
// once.
func TestOrphanDeliveredByAnother(t *testing.T) { synctest.Test(t, testOrphanDeliveredByAnother) }

func testOrphanDeliveredByAnother(t *testing.T) {
	e := newCourierEnv(t)
	brain, writer := e.link(t, "w1:p1"), e.link(t, "w1:p2")
	r := mustSend(t, brain, link.SendRequest{To: "busy", Message: "survive me"})
	if r.Delivery != link.DeliveryHeld {
		t.Fatalf("delivery %s, want %s", r.Delivery, link.DeliveryHeld)
	}
	brain.Config().Outbox.Release() // brain's process is gone
	run(t, writer)
	if err := e.w.SetStatus("w1:p3", "idle"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "delivered by writer", func() bool { return len(e.w.Submissions("w1:p3")) == 1 })
	if env, ok := link.Extract(e.w.Submissions("w1:p3")[0].Text); !ok || env.ID != r.ID || env.From != "brain" {
		t.Fatalf("turn %q", e.w.Submissions("w1:p3")[0].Text)
	}
}

// An orphan appearing while the other process's courier runs is found
// at its next scan of the outbox: delivered at most one scan period after
// its process went, plus its typing. (The bubble's clock makes this
// exact; the end-to-end crash test, on real processes, bounds only a
// hang.)
func TestOrphanFoundAtTheNextScan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newCourierEnv(t)
		brain, writer := e.link(t, "w1:p1"), e.link(t, "w1:p2")
		if err := e.w.SetStatus("w1:p3", "idle"); err != nil {
			t.Fatal(err)
		}
		run(t, writer)
		time.Sleep(time.Second) // past the courier's first scan
		if err := e.w.SetStatus("w1:p3", "working"); err != nil {
			t.Fatal(err)
		}
		r := mustSend(t, brain, link.SendRequest{To: "busy", Message: "survive me"})
		if r.Delivery != link.DeliveryHeld {
			t.Fatalf("delivery %s, want %s", r.Delivery, link.DeliveryHeld)
		}
		if err := e.w.SetStatus("w1:p3", "idle"); err != nil {
			t.Fatal(err)
		}
		brain.Config().Outbox.Release() // brain's process is gone
		gone := time.Now()
		eventually(t, "delivered by writer", func() bool { return len(e.w.Submissions("w1:p3")) == 1 })
		// The scans are 2 s apart; the typing is the 20 ms Enter, the
		// 10 ms submission and the probes that see it.
		if took := time.Since(gone); took > 2*time.Second+100*time.Millisecond {
			t.Fatalf("the orphan was delivered %v after its process went, want within one 2 s scan period", took)
		}
	})
}

// A message claimed by a typer that died is never typed again; an expired
// message is never typed; a target that is gone ends its messages.
func TestEndsWithoutTyping(t *testing.T) { synctest.Test(t, testEndsWithoutTyping) }

func testEndsWithoutTyping(t *testing.T) {
	e := newCourierEnv(t)
	brain, writer := e.link(t, "w1:p1"), e.link(t, "w1:p2")
	claimed := mustSend(t, brain, link.SendRequest{To: "busy", Message: "claimed then crashed"})
	st := brain.Config().Outbox
	ent, err := st.Find(claimed.ID)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.Read(ent)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Claim(&m); err != nil {
		t.Fatal(err)
	}
	st.Release()
	writer = relink(t, writer, func(c *link.Config) { c.HoldFor = time.Millisecond })
	expired := mustSend(t, writer, link.SendRequest{To: "coder", Message: "too late"})
	gone := mustSend(t, e.link(t, "w1:p1"), link.SendRequest{To: "stuck", Message: "nobody home"})
	for _, r := range []link.SendResult{claimed, expired, gone} {
		if r.Delivery != link.DeliveryHeld {
			t.Fatalf("delivery %s, want %s", r.Delivery, link.DeliveryHeld)
		}
	}
	if err := e.w.Close("w1:p5"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // past the 1 ms hold
	run(t, writer)
	for _, p := range []string{"w1:p3", "w1:p4"} {
		if err := e.w.SetStatus(p, "idle"); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{claimed.ID: outbox.EndMaybeDelivered, expired.ID: outbox.EndExpired, gone.ID: outbox.EndGone}
	eventually(t, "all three ended", func() bool {
		for id, why := range want {
			ent, err := writer.Config().Outbox.Find(id)
			if err != nil || ent.State != outbox.StateEnded {
				return false
			}
			m, err := writer.Config().Outbox.Read(ent)
			if err != nil || m.End != why {
				return false
			}
		}
		return true
	})
	for _, p := range []string{"w1:p3", "w1:p4"} {
		if in := e.w.Inputs(p); len(in) != 0 {
			t.Errorf("%s was typed into: %q", p, strings.Join(in, "|"))
		}
	}
}
