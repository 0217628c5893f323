//go:build unix

package herdrlink

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// Crash tests of held messages: the process that accepted a held message
// is killed (SIGKILL), or kills itself at a step of typing it; another
// herdr-link process serving the same Herdr (the same socket, the same
// lock and outbox directory: one of the test's own, see outboxEnv) delivers it exactly once, or, once its typing
// may have begun, never types it again.

// crashWorld holds acceptors a1…an, a rescuer r (idle claudes) and one
// working claude target per trial, target-1…target-n.
func crashWorld(t *testing.T, n int) *sockettest.World {
	t.Helper()
	var specs [][2]string
	for i := 1; i <= n; i++ {
		specs = append(specs, [2]string{fmt.Sprintf("a%d", i), `"kind":"claude","status":"idle"`})
	}
	specs = append(specs, [2]string{"r", `"kind":"claude","status":"idle"`})
	for i := 1; i <= n; i++ {
		specs = append(specs, [2]string{fmt.Sprintf("target-%d", i), `"kind":"claude","status":"working",` + holdTurn})
	}
	return holdWorld(t, 0, specs)
}

// waitGone waits until no process owns a message of the outbox (the
// owners' flocks are released when a process dies).
func waitGone(t *testing.T, st *outbox.Store) {
	t.Helper()
	for deadline := time.Now().Add(hangBound); ; time.Sleep(5 * time.Millisecond) {
		ents, err := st.List()
		if err != nil {
			t.Fatal(err)
		}
		alive := 0
		for _, e := range ents {
			if e.State != outbox.StateEnded && st.OwnerAlive(e.Owner) {
				alive++
			}
		}
		if alive == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d held messages still owned by a live process", alive)
		}
	}
}

// kill -9 of the accepting server while its message is held: another
// server delivers it exactly once (20 trials at once: 0 lost, 0
// duplicated), found by the rescuer's scans of the outbox. How soon is
// link's TestOrphanFoundAtTheNextScan, exactly, on a fake clock (one 2 s
// scan period); here, 22 processes on a possibly loaded machine take about
// 3.5 s unloaded, and the bound only catches an orphan left for good.
func TestKilledAcceptorsMessageDeliveredOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	w := crashWorld(t, trials)
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = deliveryEnterDelay })
	ob := newOutboxEnv(t)
	st := ob.store(t, srv)
	ob.start(t, srv, paneOf(w, "r")) // the rescuer
	acceptors, ids := acceptHeld(t, ob, srv, w, trials)
	for _, a := range acceptors {
		if err := a.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	killed := time.Now()
	waitGone(t, st)
	for _, to := range targets(trials) {
		if err := w.SetStatus(paneOf(w, to), "idle"); err != nil { // the turns end
			t.Fatal(err)
		}
	}
	var lost, doubled int
	var slowest time.Duration
	for i, to := range targets(trials) {
		pane := paneOf(w, to)
		subs := waitEnvelopes(w, pane, 1, hangBound)
		n := 0
		for _, s := range subs {
			for _, e := range link.ExtractAll(s.Text) {
				if e.ID == ids[i] {
					n++
					slowest = max(slowest, s.At.Sub(killed))
				}
			}
		}
		switch {
		case n == 0:
			lost++
		case n > 1 || len(w.Prompts(pane)) != 1:
			doubled++
		}
	}
	time.Sleep(500 * time.Millisecond)
	checkOutboxEmpty(t, st)
	t.Logf("%d trials: %d lost, %d duplicated; the last delivered %v after the kill", trials, lost, doubled, slowest.Round(time.Millisecond))
	if lost+doubled > 0 {
		t.Errorf("%d lost, %d duplicated", lost, doubled)
	}
	if slowest > 30*time.Second {
		t.Errorf("the last orphan was delivered %v after the kill, want it found by one of the scans (2 s apart)", slowest)
	}
}

// A crash injected at each step of a held delivery (the claim on disk;
// the text typed, not yet recorded) never types the message twice: the
// rescuer finds it claimed by a typer that is gone and ends it as may
// have been delivered. The acceptor is herdr-link built with -tags
// herdrlink_e2e, killing itself at the step HERDR_LINK_E2E_CRASH_AT names.
func TestCrashAtEachStepNeverTypesTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const n = 5 // trials per step
	for _, tc := range []struct {
		step    string
		prompts int // what the target got typed
	}{
		{"claimed", 0},
		{"typed", 1},
	} {
		t.Run(tc.step, func(t *testing.T) {
			t.Parallel()
			w := crashWorld(t, n)
			srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = deliveryEnterDelay })
			ob := newOutboxEnv(t)
			st := ob.store(t, srv)
			ob.start(t, srv, paneOf(w, "r"))
			ids := make([]string, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					a := ob.start(t, srv, paneOf(w, fmt.Sprintf("a%d", i+1)), "HERDR_LINK_E2E_CRASH_AT="+tc.step)
					r := send(t, a.session, fmt.Sprintf("target-%d", i+1), "typed once at most")
					if r.isErr || r.delivery != link.DeliveryHeld {
						t.Errorf("a%d: %v, want held", i+1, r)
					}
					ids[i] = r.id
				}()
			}
			wg.Wait()
			for _, to := range targets(n) {
				if err := w.SetStatus(paneOf(w, to), "idle"); err != nil {
					t.Fatal(err)
				}
			}
			// Each acceptor's courier claims its message and dies at the
			// step; the rescuer ends the claimed message.
			ended := map[string]string{}
			for deadline := time.Now().Add(10 * time.Second); len(ended) < n && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				ents, err := st.List()
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range ents {
					if e.State == outbox.StateEnded {
						if m, err := st.Read(e); err == nil {
							ended[e.ID] = m.End
						}
					}
				}
			}
			time.Sleep(time.Second) // nothing more is typed
			for i, to := range targets(n) {
				pane := paneOf(w, to)
				if got := len(w.Prompts(pane)); got != tc.prompts {
					t.Errorf("%s: typed %d times, want %d:\n%s", to, got, tc.prompts, dumpSubs(w.Submissions(pane)))
				}
				if e := ended[ids[i]]; e != outbox.EndMaybeDelivered {
					t.Errorf("%s: message ended %q, want %q", to, e, outbox.EndMaybeDelivered)
				}
			}
		})
	}
}
