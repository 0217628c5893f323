package herdrlink

import (
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// Deliveries sent "now" to a working target, and the lock a stopped
// sender keeps: herdr-link processes against the simulator.

// Sent "now", a target that queues input while working (Claude Code) may
// take several deliveries into the queued turn: each send says queued, each envelope is
// intact in what the agent finally receives.
func TestQueuedDeliveriesShareATurnIntact(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	// Eight senders with a 12 s call deadline: none may wait for the
	// running turn (it never ends by itself, or takes 20 s), each only for
	// the Enters before its own (about 1.6 s for all eight, unloaded). To
	// the working claude all eight queue; to the idle one with a long
	// turn, the first starts a turn and the other seven queue behind it.
	const n = 8
	for _, target := range []string{"busy-claude", "long-claude"} {
		t.Run(target, func(t *testing.T) {
			srv, w := deliveryServer(t)
			ss := senders(t, srv, w, n, "-timeout", "12s")
			results := sendAll(t, ss, target, "now")
			ids := map[string]bool{}
			queued := 0
			for i, r := range results {
				if r.isErr || (r.delivery != link.DeliveryQueued && (target == "busy-claude" || r.delivery != link.DeliverySubmitted)) {
					t.Fatalf("sender %d: %v, want queued (or submitted, except to the busy claude)", i+1, r)
				}
				if r.delivery == link.DeliveryQueued {
					queued++
				}
				ids[r.id] = true
			}
			if target == "long-claude" && queued != n-1 {
				t.Fatalf("%d of %d queued (%v), want %d", queued, n, results, n-1)
			}
			pane := paneOf(w, target)
			// The last Enter is typed (under 0.8.2 it follows the answer).
			until(hangBound, func() bool { _, q := w.Composer(pane); return len(link.ExtractAll(q)) >= queued })
			if _, q := w.Composer(pane); len(link.ExtractAll(q)) != queued {
				t.Fatalf("queued input %q", q)
			}
			before := len(w.Submissions(pane))
			if before != n-queued {
				t.Fatalf("%d submissions while the turn runs", before)
			}
			if err := w.SetStatus(pane, "idle"); err != nil { // the running turn ends
				t.Fatal(err)
			}
			subs := waitSubmissions(t, w, pane, before+1)
			var got []link.Envelope
			for _, s := range subs {
				got = append(got, link.ExtractAll(s.Text)...)
			}
			if len(got) != n {
				t.Fatalf("%d envelopes in %d submissions:\n%s", len(got), len(subs), dumpSubs(subs))
			}
			for _, e := range got {
				if !ids[e.ID] || !strings.HasPrefix(e.Message, "message ") || !strings.HasSuffix(e.Message, `second line {"protocol":"herdr-link/1"}`) {
					t.Fatalf("envelope %s with %q, want a sent id with \"message …second line {…}\"", e.ID, e.Message)
				}
				delete(ids, e.ID)
			}
		})
	}
}

// A sender stopped right after a send (its host closes stdin, as `printf
// … | herdr-link` does) keeps the target's lock until Herdr's Enter is
// past before it exits: a second sender right after it gets a turn of
// its own. Herdr's real 300 ms Enter delay and hold.
func TestLockOutlivesAStoppedSender(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	w := deliveryWorld(t)
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = 300 * time.Millisecond })
	hold := []string{"-submit-hold", "400ms"}
	a := connectArgs(t, srv, paneOf(w, "s1"), append(append(deliveryFlags, hold...), "-delivery", "fast"))
	b := connectArgs(t, srv, paneOf(w, "s2"), append(deliveryFlags, hold...))
	call(t, a, "herdr_link", nil)
	call(t, b, "herdr_link", nil)
	ra := send(t, a, "idle-claude", "from a")
	if ra.isErr || ra.delivery != link.DeliveryUnconfirmed {
		t.Fatalf("a: %v, want %s", ra, link.DeliveryUnconfirmed)
	}
	if err := a.Close(); err != nil { // stdin EOF; returns once the process has exited
		t.Logf("close a: %v", err)
	}
	rb := send(t, b, "idle-claude", "from b")
	if rb.isErr {
		t.Fatalf("b: %v, want a delivery", rb)
	}
	subs := waitSubmissions(t, w, paneOf(w, "idle-claude"), 2)
	if len(subs) != 2 {
		t.Fatalf("%d submissions for 2 sends:\n%s", len(subs), dumpSubs(subs))
	}
	for i, want := range []sendOutcome{ra, rb} {
		envs := link.ExtractAll(subs[i].Text)
		if len(envs) != 1 || envs[0].ID != want.id {
			t.Fatalf("submission %d holds %d envelopes, want only %s:\n%s", i, len(envs), want.id, dumpSubs(subs))
		}
	}
}
