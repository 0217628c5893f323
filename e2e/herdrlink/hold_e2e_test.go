//go:build unix

package herdrlink

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// Process tests of messages that wait their turn: separate herdr-link
// processes (the built binary) send with the default, when "idle", to
// targets that are idle, working, blocked or hold a user's draft; a
// message that cannot be typed now is held and typed by a courier when
// the target is ready, one turn each, in order, never interrupting.

// holdTurn is the turn a held message starts in the simulator (ms): short,
// so that many deliveries fit a test, long enough that the next one
// visibly waits for it.
const holdTurn = `"turn_ms":40,"submit_ms":20`

// holdWorld holds the senders s1…sN (idle claudes) and the agents specs
// names, each "name": spec (the JSON of an agent spec's fields).
func holdWorld(t *testing.T, nSenders int, specs [][2]string) *sockettest.World {
	t.Helper()
	var panes []string
	for i := 1; i <= nSenders; i++ {
		panes = append(panes, fmt.Sprintf(`{"agent":{"kind":"claude","name":"s%d","status":"idle"}}`, i))
	}
	for _, s := range specs {
		panes = append(panes, fmt.Sprintf(`{"agent":{"name":%q,%s}}`, s[0], s[1]))
	}
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[` + strings.Join(panes, ",") + `]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// outboxEnv is a lock and outbox directory of a test's own: the
// HERDR_LINK_E2E_LOCK_ROOTS of herdr-link built with -tags herdrlink_e2e
// (rootsBinary), and the same roots for the test's own look at it. The
// system's directory is keyed by the socket's inode, which a later test's
// simulator may get again: messages a test's processes left would be
// another's.
type outboxEnv struct {
	bin   string
	env   string
	roots *panelock.Roots
}

func newOutboxEnv(t *testing.T) outboxEnv {
	t.Helper()
	base := t.TempDir()
	home := filepath.Join(base, "home")
	mkdirMode(t, home, 0o700)
	env := "HERDR_LINK_E2E_LOCK_ROOTS=" + filepath.Join(base, "run") + "|" + home + "|" + filepath.Join(base, "tmp")
	return outboxEnv{bin: rootsBinary(t), env: env, roots: &panelock.Roots{UID: os.Getuid(), Run: filepath.Join(base, "run"), Tmp: filepath.Join(base, "tmp"),
		Home: func(int) (string, error) { return home, nil }}}
}

// start starts a herdr-link process for pane with the test's directory.
func (o outboxEnv) start(t *testing.T, srv *sockettest.Server, pane string, env ...string) hlProc {
	t.Helper()
	return startProc(t, o.bin, srv, pane, deliveryFlags, append([]string{o.env}, env...)...)
}

// procs starts n herdr-link processes, for the panes s1…sn, at once.
func (o outboxEnv) procs(t *testing.T, srv *sockettest.Server, w *sockettest.World, n int) []hlProc {
	t.Helper()
	ps := make([]hlProc, n)
	var wg sync.WaitGroup
	for i := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ps[i] = o.start(t, srv, paneOf(w, fmt.Sprintf("s%d", i+1)))
		}()
	}
	wg.Wait()
	return ps
}

// store is the outbox the test's herdr-link processes serving srv share.
func (o outboxEnv) store(t *testing.T, srv *sockettest.Server) *outbox.Store {
	t.Helper()
	pl := &panelock.Locker{Scope: srv.Path(), Roots: o.roots}
	dir, err := pl.DirPath()
	if err != nil {
		t.Fatal(err)
	}
	st, err := outbox.Open(dir, pl.ScopeID())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// checkOutboxEmpty fails on any message left in the outbox: held, being
// typed (after a while: a typer may still be watching its submission), or
// ended (an ended record is a message reported lost or maybe delivered).
// Request records (pending or answered) and the notices that tell their
// senders of them (ids n_…) are the senders' and are left alone.
func checkOutboxEmpty(t *testing.T, st *outbox.Store) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ents, err := st.List()
		if err != nil {
			t.Fatal(err)
		}
		var left []outbox.Entry
		for _, e := range ents {
			if e.State != outbox.StatePending && e.State != outbox.StateAnswered && !strings.HasPrefix(e.ID, "n_") {
				left = append(left, e)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().Before(deadline) && !slices.ContainsFunc(left, func(e outbox.Entry) bool { return e.State == outbox.StateEnded }) {
			continue
		}
		for _, e := range left {
			m, err := st.Read(e)
			t.Errorf("outbox: message %s left in state %c (end %q, read error %v)", e.ID, e.State, m.End, err)
		}
		return
	}
}

// sentMsg is one send of a sender, in the order its sends were answered.
type sentMsg struct {
	sender, n int
	out       sendOutcome
}

// sendSeries makes each of ps send k messages to to, one after the other
// (each sender's sends in order, the senders at once), and returns them
// all.
func sendSeries(t *testing.T, ps []hlProc, to string, k int) []sentMsg {
	var mu sync.Mutex
	var out []sentMsg
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for j := range k {
				r := send(t, p.session, to, fmt.Sprintf("message %d of s%d to %s\nsecond line", j, i+1, to))
				mu.Lock()
				out = append(out, sentMsg{i, j, r})
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// waitEnvelopes waits until pane's turns hold at least n envelopes (or
// the deadline), then a little longer, and returns the turns.
func waitEnvelopes(w *sockettest.World, pane string, n int, d time.Duration) []sockettest.Submission {
	count := func() int {
		c := 0
		for _, s := range w.Submissions(pane) {
			c += len(link.ExtractAll(s.Text))
		}
		return c
	}
	for deadline := time.Now().Add(d); count() < n && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
	}
	time.Sleep(300 * time.Millisecond) // nothing more arrives
	return w.Submissions(pane)
}

// checkTurns fails unless pane's turns are the sent messages, each alone
// in a turn of its own, each once, each sender's in the order its sends
// were answered, and no turn of the agent was interrupted. other turns
// (a user's own) are allowed when they hold no envelope.
func checkTurns(t *testing.T, w *sockettest.World, pane string, sent []sentMsg, subs []sockettest.Submission) {
	t.Helper()
	byID := map[string]sentMsg{}
	for _, s := range sent {
		byID[s.out.id] = s
	}
	next := map[int]int{} // sender → the next message number it may deliver
	seen := map[string]bool{}
	for _, s := range subs {
		envs := link.ExtractAll(s.Text)
		switch {
		case len(envs) == 0:
			continue
		case len(envs) > 1:
			t.Errorf("a turn holds %d envelopes:\n%s", len(envs), s.Text)
			continue
		}
		e := envs[0]
		m, ok := byID[e.ID]
		switch {
		case !ok:
			t.Errorf("a turn holds an unknown message %s", e.ID)
		case seen[e.ID]:
			t.Errorf("message %s typed twice", e.ID)
		case m.n < next[m.sender]:
			t.Errorf("s%d's message %d arrived after its message %d", m.sender+1, m.n, next[m.sender]-1)
		case e.Message != fmt.Sprintf("message %d of s%d to %s\nsecond line", m.n, m.sender+1, e.To):
			t.Errorf("envelope %s with %q, want message %d of s%d to %s", e.ID, e.Message, m.n, m.sender+1, e.To)
		}
		seen[e.ID] = true
		next[m.sender] = max(next[m.sender], m.n+1)
	}
	for id := range byID {
		if !seen[id] {
			t.Errorf("message %s never arrived", id)
		}
	}
	if n := w.Interrupts(pane); n != 0 {
		t.Errorf("%d turns interrupted", n)
	}
	if c, q := w.Composer(pane); c != "" || q != "" {
		t.Errorf("left unsent: composer %q, queued %q", c, q)
	}
	if t.Failed() {
		t.Logf("turns:\n%s", dumpSubs(subs))
	}
}

// Many senders (separate processes) to one target, idle or working (a
// Claude Code, which would queue typed input, or a Codex, which would be
// interrupted by it): every send succeeds, submitted or held (to the idle
// target the first may be typed at once, or held behind a message another
// sender held while it looked); every
// message arrives as a turn of its own, once, in each sender's order; no
// turn is interrupted. One simulator and 32 processes serve every size:
// each size has targets of its own, and they run at once.
func TestHeldManySenders(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const k = 2 // messages per sender, one after the other
	sizes := []int{2, 4, 8, 16, 32}
	kinds := []struct{ name, spec string }{
		{"idle-claude", `"kind":"claude","status":"idle",` + holdTurn},
		{"working-claude", `"kind":"claude","status":"working",` + holdTurn},
		{"working-codex", `"kind":"codex","status":"working",` + holdTurn},
	}
	var specs [][2]string
	for _, n := range sizes {
		for _, kd := range kinds {
			specs = append(specs, [2]string{fmt.Sprintf("%s-%d", kd.name, n), kd.spec})
		}
	}
	w := holdWorld(t, slices.Max(sizes), specs)
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = deliveryEnterDelay })
	ob := newOutboxEnv(t)
	ps := ob.procs(t, srv, w, slices.Max(sizes))
	start := time.Now()
	// Every target at once (subtests' t.Parallel would run only
	// GOMAXPROCS of them at a time).
	var wg sync.WaitGroup
	for _, n := range sizes {
		for _, kd := range kinds {
			to := fmt.Sprintf("%s-%d", kd.name, n)
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.Run(to, func(t *testing.T) {
					pane := paneOf(w, to)
					sent := sendSeries(t, ps[:n], to, k)
					held := 0
					for _, s := range sent {
						switch {
						case s.out.isErr || !link.ValidMessageID(s.out.id):
							t.Fatalf("s%d's send %d: %s", s.sender+1, s.n, s.out.text)
						case s.out.delivery == link.DeliveryHeld:
							held++
						case kd.name != "idle-claude" || s.out.delivery != link.DeliverySubmitted:
							t.Errorf("s%d's send %d to %s: delivery %q", s.sender+1, s.n, to, s.out.delivery)
						}
					}
					if kd.name != "idle-claude" {
						if got := len(w.Submissions(pane)); got != 0 {
							t.Fatalf("%d turns typed into the working target", got)
						}
						if err := w.SetStatus(pane, "idle"); err != nil { // its turn ends
							t.Fatal(err)
						}
					}
					subs := waitEnvelopes(w, pane, len(sent), hangBound)
					checkTurns(t, w, pane, sent, subs)
					t.Logf("%d senders × %d: %d held, delivered in %v", n, k, held, time.Since(start).Round(time.Millisecond))
				})
			}()
		}
	}
	wg.Wait()
	checkOutboxEmpty(t, ob.store(t, srv))
}

// sendHeldNothingTyped sends from p to to (expecting held), then checks for a
// while that nothing is typed into pane.
func sendHeldNothingTyped(t *testing.T, w *sockettest.World, p hlProc, to, msg string) sentMsg {
	t.Helper()
	pane := paneOf(w, to)
	before := len(w.Prompts(pane))
	r := send(t, p.session, to, msg)
	if r.isErr || r.delivery != link.DeliveryHeld {
		t.Fatalf("send to %s: %v, want held", to, r)
	}
	time.Sleep(time.Second) // the courier probes, events come: still not typed
	if n := len(w.Prompts(pane)); n != before {
		t.Fatalf("%s: typed while it could not take the message", to)
	}
	return sentMsg{0, 0, r}
}

// A blocked target (waiting at its user's permission prompt, as
// detection or the agent's integration reports it) gets a held message
// once it is unblocked, as a turn of its own.
func TestHeldWhileBlocked(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	w := holdWorld(t, 1, [][2]string{
		{"detected", `"kind":"claude","status":"idle",` + holdTurn},
		{"reported", `"kind":"codex","status":"idle",` + holdTurn},
	})
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = deliveryEnterDelay })
	ob := newOutboxEnv(t)
	p := ob.procs(t, srv, w, 1)[0]
	c := srv.Client()
	report := func(to string, st schema.PaneAgentState) error {
		return c.PaneReportAgent(t.Context(), schema.PaneReportAgentParams{PaneID: paneOf(w, to), Source: "herdr:codex", Agent: "codex", State: st})
	}
	for _, tc := range []struct {
		to             string
		block, unblock func() error
	}{
		{"detected", func() error { return w.SetStatus(paneOf(w, "detected"), "blocked") }, func() error { return w.SetStatus(paneOf(w, "detected"), "idle") }},
		{"reported", func() error { return report("reported", schema.PaneAgentStateBlocked) }, func() error { return report("reported", schema.PaneAgentStateIdle) }},
	} {
		t.Run(tc.to, func(t *testing.T) {
			if err := tc.block(); err != nil {
				t.Fatal(err)
			}
			m := sendHeldNothingTyped(t, w, p, tc.to, fmt.Sprintf("message 0 of s1 to %s\nsecond line", tc.to))
			unblocked := time.Now()
			if err := tc.unblock(); err != nil {
				t.Fatal(err)
			}
			subs := waitEnvelopes(w, paneOf(w, tc.to), 1, hangBound)
			checkTurns(t, w, paneOf(w, tc.to), []sentMsg{m}, subs)
			if len(subs) == 1 {
				t.Logf("delivered %v after the unblock", subs[0].At.Sub(unblocked).Round(time.Millisecond))
			}
		})
	}
	checkOutboxEmpty(t, ob.store(t, srv))
}

// A user's draft in the target's composer (typed with pane.send_text, as
// a user types) holds the message until the user sends the draft (Enter,
// pane.send_keys) or clears it (ctrl+c): the user's turn is theirs alone,
// with no envelope, and the message is a turn of its own after it.
func TestHeldBehindADraft(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	var specs [][2]string
	for _, kind := range []string{"claude", "codex"} {
		for _, how := range []string{"enter", "clear"} {
			specs = append(specs, [2]string{kind + "-" + how, `"kind":"` + kind + `","status":"idle",` + holdTurn})
		}
	}
	w := holdWorld(t, 1, specs)
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = deliveryEnterDelay })
	ob := newOutboxEnv(t)
	p := ob.procs(t, srv, w, 1)[0]
	c := srv.Client()
	ctx := t.Context()
	const draft = "my own half-written question"
	for _, s := range specs {
		to := s[0]
		t.Run(to, func(t *testing.T) {
			pane := paneOf(w, to)
			if err := c.PaneSendText(ctx, pane, draft); err != nil {
				t.Fatal(err)
			}
			// The TUI has read it: the draft is in its composer.
			if !until(hangBound, func() bool { c, _ := w.Composer(pane); return strings.Contains(c, draft) }) {
				t.Fatal("the draft never reached the composer")
			}
			m := sendHeldNothingTyped(t, w, p, to, fmt.Sprintf("message 0 of s1 to %s\nsecond line", to))
			key := "Enter"
			if strings.HasSuffix(to, "-clear") {
				key = "ctrl+c"
			}
			if err := c.PaneSendKeys(ctx, pane, key); err != nil {
				t.Fatal(err)
			}
			subs := waitEnvelopes(w, pane, 1, hangBound)
			checkTurns(t, w, pane, []sentMsg{m}, subs)
			wantTurns := 1
			if key == "Enter" {
				wantTurns = 2
				if len(subs) < 1 || strings.TrimSpace(subs[0].Text) != draft {
					t.Errorf("the user's turn is not their draft alone:\n%s", dumpSubs(subs))
				}
			}
			if len(subs) != wantTurns {
				t.Errorf("%d turns, want %d:\n%s", len(subs), wantTurns, dumpSubs(subs))
			}
			for _, s := range subs {
				if key != "Enter" && strings.Contains(s.Text, draft) {
					t.Errorf("the cleared draft was sent:\n%s", s.Text)
				}
			}
		})
	}
	checkOutboxEmpty(t, ob.store(t, srv))
}
