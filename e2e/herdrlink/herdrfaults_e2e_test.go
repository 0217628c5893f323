//go:build unix

package herdrlink

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/internal/panelock"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// Process tests of the Herdr bugs the simulator models as fault modes
// (a flapping state, a picker that reads idle, a name still bound after
// its agent exits, a stream that loses events): a herdr-link process
// sends to faultTrials targets, each one trial, and no message is typed
// where it must not be, none is lost, none is typed twice.

// faultTrials is how many targets (trials) each fault mode gets.
const faultTrials = 20

// faultWorld is one sender s1 and faultTrials targets t1…tN of spec.
func faultWorld(t *testing.T, spec func(i int) string) (*sockettest.World, []string) {
	t.Helper()
	var specs [][2]string
	var names []string
	for i := 1; i <= faultTrials; i++ {
		names = append(names, fmt.Sprintf("t%d", i))
		specs = append(specs, [2]string{names[i-1], spec(i)})
	}
	return holdWorld(t, 1, specs), names
}

// sendToEach sends one message to each target from p and returns them, each
// wanted held.
func sendToEach(t *testing.T, p hlProc, names []string) map[string]sentMsg {
	t.Helper()
	out := map[string]sentMsg{}
	for i, to := range names {
		r := send(t, p.session, to, fmt.Sprintf("message %d of s1 to %s\nsecond line", 0, to))
		if r.isErr || r.delivery != link.DeliveryHeld {
			t.Fatalf("send %d to %s: %v, want held", i, to, r)
		}
		out[to] = sentMsg{0, 0, r}
	}
	return out
}

// checkNothingTyped fails if any target received a prompt or the
// simulator recorded a misdelivery into it.
func checkNothingTyped(t *testing.T, w *sockettest.World, names []string) {
	t.Helper()
	for _, to := range names {
		pane := paneOf(w, to)
		if n := len(w.Prompts(pane)); n != 0 {
			t.Errorf("%s: %d prompts typed while it could not take them", to, n)
		}
		if m := w.Misdelivered(pane); len(m) != 0 {
			t.Errorf("%s: misdelivered %q", to, m)
		}
	}
}

// checkEachOnce waits for every target's message and checks it arrived
// once, alone in its turn, with nothing misdelivered.
func checkEachOnce(t *testing.T, w *sockettest.World, names []string, sent map[string]sentMsg) {
	t.Helper()
	var wg sync.WaitGroup
	for _, to := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pane := paneOf(w, to)
			subs := waitEnvelopes(w, pane, 1, hangBound)
			checkTurns(t, w, pane, []sentMsg{sent[to]}, subs)
			if m := w.Misdelivered(pane); len(m) != 0 {
				t.Errorf("%s: misdelivered %q", to, m)
			}
		}()
	}
	wg.Wait()
}

// A working Claude Code whose state flaps to idle for 40 ms every 120 ms
// (herdrdev/herdr #5004 and kin): a held message is never typed during a
// flap; once the turn really ends it is typed, once.
func TestHeldThroughIdleFlaps(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	w, names := faultWorld(t, func(int) string { return `"kind":"claude","status":"working",` + holdTurn })
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = deliveryEnterDelay })
	ob := newOutboxEnv(t)
	p := ob.start(t, srv, paneOf(w, "s1"))
	sent := sendToEach(t, p, names)
	for _, to := range names {
		if err := w.SetIdleFlaps(paneOf(w, to), 120*time.Millisecond, 40*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2 * time.Second) // about 12 flaps per target
	checkNothingTyped(t, w, names)
	for _, to := range names {
		pane := paneOf(w, to)
		if err := w.SetIdleFlaps(pane, 0, 0); err != nil {
			t.Fatal(err)
		}
		if err := w.SetStatus(pane, "idle"); err != nil { // the turn really ends
			t.Fatal(err)
		}
	}
	checkEachOnce(t, w, names, sent)
	checkOutboxEmpty(t, ob.store(t, srv))
}

// An idle Codex with its /model picker open (herdrdev/herdr #4647): a
// message is held with the reason shown, never typed into the picker, and
// typed once the picker closes.
func TestHeldWhilePickerOpen(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	w, names := faultWorld(t, func(int) string { return `"kind":"codex","status":"idle",` + holdTurn })
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = deliveryEnterDelay })
	for _, to := range names {
		if err := w.SetPickerOpen(paneOf(w, to), true); err != nil {
			t.Fatal(err)
		}
	}
	ob := newOutboxEnv(t)
	p := ob.start(t, srv, paneOf(w, "s1"))
	sent := sendToEach(t, p, names)
	st := ob.store(t, srv)
	for to, s := range sent {
		e, err := st.Find(s.out.id)
		if err != nil {
			t.Fatalf("%s: %v", to, err)
		}
		m, err := st.Read(e)
		if err != nil {
			t.Fatal(err)
		}
		if m.Reason != "picker open" {
			t.Errorf("%s: held for %q, want %q", to, m.Reason, "picker open")
		}
	}
	time.Sleep(1500 * time.Millisecond) // the courier looks again: still open
	checkNothingTyped(t, w, names)
	for _, to := range names {
		if err := w.SetPickerOpen(paneOf(w, to), false); err != nil {
			t.Fatal(err)
		}
	}
	checkEachOnce(t, w, names, sent)
	checkOutboxEmpty(t, st)
}

// The agent a message was held for exits and another starts in the same
// terminal while the old name is still bound (herdrdev/herdr #4764): the
// message is never typed into the next occupant; it ends as gone.
func TestHeldNotTypedIntoNextOccupant(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	w, names := faultWorld(t, func(i int) string {
		return fmt.Sprintf(`"kind":"claude","status":"working","session":"sess-old-%d",`, i) + holdTurn
	})
	w.SetNameLinger(time.Minute)
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = deliveryEnterDelay })
	ob := newOutboxEnv(t)
	p := ob.start(t, srv, paneOf(w, "s1"))
	sent := sendToEach(t, p, names)
	for i, to := range names {
		if err := w.Replace(paneOf(w, to), "claude", fmt.Sprintf("sess-new-%d", i+1)); err != nil {
			t.Fatal(err)
		}
		if a, ok := w.Agent(to); !ok || a.AgentSession == nil || a.AgentSession.Value != fmt.Sprintf("sess-new-%d", i+1) {
			session := "<none>"
			if a.AgentSession != nil {
				session = a.AgentSession.Value
			}
			t.Fatalf("%s: found %v, in session %s; want the next occupant, sess-new-%d, under the old name", to, ok, session, i+1)
		}
	}
	st := ob.store(t, srv)
	for to, s := range sent {
		for deadline := time.Now().Add(hangBound); ; time.Sleep(50 * time.Millisecond) {
			e, err := st.Find(s.out.id)
			if err != nil {
				t.Fatalf("%s: %v", to, err)
			}
			if e.State == outbox.StateEnded {
				m, err := st.Read(e)
				if err != nil {
					t.Fatal(err)
				}
				if m.End != outbox.EndGone {
					t.Errorf("%s: ended %q, want %q", to, m.End, outbox.EndGone)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: still %c", to, e.State)
			}
		}
	}
	checkNothingTyped(t, w, names)
}

// A send with when "now" whose target's agent exits, and the next one
// starts under the old name, between the name's lookup and the typing
// (while the send waits for the target's delivery lock, held by another
// delivery): the check right before typing finds the other session, and
// nothing is typed.
func TestNowNotTypedIntoNextOccupant(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	w, names := faultWorld(t, func(i int) string {
		return fmt.Sprintf(`"kind":"claude","status":"idle","session":"sess-old-%d",`, i) + holdTurn
	})
	w.SetNameLinger(time.Minute)
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = deliveryEnterDelay })
	ob := newOutboxEnv(t)
	p := ob.start(t, srv, paneOf(w, "s1"))
	locks := &panelock.Locker{Scope: srv.Path(), Roots: ob.roots}
	for i, to := range names {
		a, ok := w.Agent(paneOf(w, to))
		if !ok {
			t.Fatalf("%s: no agent", to)
		}
		held, err := locks.Lock(t.Context(), a.TerminalID, time.Minute) // another delivery's
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan sendOutcome, 1)
		go func() { done <- sendWhen(t, p.session, to, "now, to whoever is there", "now") }()
		time.Sleep(150 * time.Millisecond) // the send's agent.list is answered, it waits for the lock
		if err := w.Replace(paneOf(w, to), "claude", fmt.Sprintf("sess-new-%d", i+1)); err != nil {
			t.Fatal(err)
		}
		held.Unlock()
		r := <-done
		if !r.isErr || !strings.Contains(r.text, "PEER_NOT_FOUND") {
			t.Errorf("%s: %v, want PEER_NOT_FOUND (nothing typed)", to, r)
		}
	}
	checkNothingTyped(t, w, names)
}

// Under Herdr 0.9.5 the courier's event stream loses events (events_lost,
// as a reader that fell behind): every time a target's turn ends, the
// stream is told it lost events before it could write the change. Every
// held message is still typed, once.
func TestHeldThroughEventsLost(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	w, names := faultWorld(t, func(int) string { return `"kind":"claude","status":"working",` + holdTurn })
	srv := simtest.New(t, w, func(s *sockettest.Server) {
		s.SubmitDelay = deliveryEnterDelay
		if err := s.UseHerdr(sockettest.NewestModelled); err != nil {
			t.Fatal(err)
		}
	})
	ob := newOutboxEnv(t)
	p := ob.start(t, srv, paneOf(w, "s1"))
	sent := sendToEach(t, p, names)
	time.Sleep(500 * time.Millisecond) // the courier follows every target
	subscribes := func() int {
		n := 0
		for _, r := range srv.Requests() {
			if r.Method == schema.MethodEventsSubscribe {
				n++
			}
		}
		return n
	}
	before := subscribes()
	for _, to := range names {
		if err := w.SetStatus(paneOf(w, to), "idle"); err != nil {
			t.Fatal(err)
		}
		w.LoseEvents()
		time.Sleep(30 * time.Millisecond)
	}
	checkEachOnce(t, w, names, sent)
	if after := subscribes(); after <= before {
		t.Errorf("events.subscribe requests %d before the losses, %d after: no stream was renewed", before, after)
	}
	checkOutboxEmpty(t, ob.store(t, srv))
}

// Herdr answers agent_prompted but the paste is never submitted
// (herdrdev/herdr #4990): the send is reported "not_submitted" (its text
// still in the composer), never delivered, and the next message to that target waits behind the
// text left in its composer instead of merging with it.
func TestPasteNeverSubmittedReported(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	w, names := faultWorld(t, func(int) string { return `"kind":"claude","status":"idle",` + holdTurn })
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = deliveryEnterDelay })
	for _, to := range names {
		if err := w.SetPasteNeverSubmitted(paneOf(w, to), true); err != nil {
			t.Fatal(err)
		}
	}
	ob := newOutboxEnv(t)
	p := ob.start(t, srv, paneOf(w, "s1"))
	out := sendAtOnce(t, p.session, names, "typed, never submitted")
	for i, to := range names {
		switch r := out[i]; {
		case r.isErr:
			// An error is allowed only if it does not say "not delivered".
			if strings.Contains(r.text, "not delivered") {
				t.Errorf("%s: %s", to, r.text)
			}
		case r.delivery != link.DeliveryNotSubmitted:
			t.Errorf("%s: got delivery %q, want %q (the text is still in the composer)", to, r.delivery, link.DeliveryNotSubmitted)
		}
		if subs := w.Submissions(paneOf(w, to)); len(subs) != 0 {
			t.Errorf("%s: %d turns, want none", to, len(subs))
		}
		if n := len(w.Prompts(paneOf(w, to))); n != 1 {
			t.Errorf("%s: typed %d times, want once (never retyped)", to, n)
		}
	}
	for _, to := range names[:3] {
		if r := send(t, p.session, to, "the next one"); r.isErr || r.delivery != link.DeliveryHeld {
			t.Errorf("%s: next send %v, want held behind the text in the composer", to, r)
		}
	}
}

// Herdr answers agent_prompted for an unattached pane that never receives
// (herdrdev/herdr #4537): the send is never reported delivered, and
// nothing is typed again.
func TestUnattachedNotDelivered(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	w, names := faultWorld(t, func(int) string { return `"kind":"claude","status":"idle",` + holdTurn })
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = deliveryEnterDelay })
	for _, to := range names {
		if err := w.SetUnattached(paneOf(w, to), true); err != nil {
			t.Fatal(err)
		}
	}
	ob := newOutboxEnv(t)
	p := ob.start(t, srv, paneOf(w, "s1"))
	out := sendAtOnce(t, p.session, names, "never arrives")
	time.Sleep(time.Second) // nothing is typed again
	for i, to := range names {
		if r := out[i]; r.delivery == link.DeliverySubmitted || r.delivery == link.DeliveryQueued {
			t.Errorf("%s: reported %q, but nothing arrived", to, r.delivery)
		}
		if got := w.Typed(paneOf(w, to)); got != "" {
			t.Errorf("%s: received %q", to, got)
		}
	}
	for _, e := range mustList(t, ob.store(t, srv)) {
		if e.Held() {
			t.Errorf("message %s held again (state %c): never retyped", e.ID, e.State)
		}
	}
}

// sendAtOnce sends msg from s to each of names at once.
func sendAtOnce(t *testing.T, s session, names []string, msg string) []sendOutcome {
	out := make([]sendOutcome, len(names))
	var wg sync.WaitGroup
	for i, to := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = send(t, s, to, msg)
		}()
	}
	wg.Wait()
	return out
}

func mustList(t *testing.T, st *outbox.Store) []outbox.Entry {
	t.Helper()
	ents, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	return ents
}
