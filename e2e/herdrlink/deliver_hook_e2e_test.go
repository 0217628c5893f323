//go:build unix

package herdrlink

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// Process tests of 'herdr-link deliver', the plugin's hook command: a
// message held for a busy agent whose accepting server has exited, with
// no herdr-link server running, is typed exactly once by the hook Herdr
// runs on pane.agent_status_changed (or by the startup hook), run as
// Herdr runs it: its own process, Herdr's hook environment, several at
// once for one pane.

// hookBound is the longest a hook run may take (Herdr does not supervise
// hooks; a hook that lingers is a leak).
const hookBound = 10 * time.Second

// hookLogLevel is the hooks' HERDR_LINK_LOG: warnings and errors show in
// a failure's stderr.
const hookLogLevel = "warn"

// hookEnv is the environment Herdr gives an event hook for event (nil:
// the startup hook), focused on pane focus (not necessarily the event's).
func hookEnv(t *testing.T, srv *sockettest.Server, focus string, event *schema.EventEnvelope) []string {
	t.Helper()
	root := t.TempDir()
	env := []string{"HERDR_ENV=1", "HERDR_SOCKET_PATH=" + srv.Path(), "HERDR_BIN_PATH=/nonexistent/herdr",
		"HERDR_PLUGIN_ID=herdr-link.herdr-link", "HERDR_PLUGIN_ROOT=" + root, "HERDR_PLUGIN_STATE_DIR=" + root,
		"HERDR_PLUGIN_CONFIG_DIR=" + root, `HERDR_PLUGIN_CONTEXT_JSON={"focused_pane_id":"` + focus + `"}`,
		"HERDR_PANE_ID=" + focus, "HERDR_LINK_LOG=" + hookLogLevel}
	if event == nil {
		return append(env, "HERDR_PLUGIN_EVENT=startup")
	}
	b, err := jsonx.Marshal(event)
	if err != nil {
		t.Fatal(err)
	}
	return append(env, "HERDR_PLUGIN_EVENT="+string(event.Event), "HERDR_PLUGIN_EVENT_JSON="+string(b))
}

// statusEvent is Herdr's pane.agent_status_changed envelope for pane.
func statusEvent(pane, status string) *schema.EventEnvelope {
	agent := "claude"
	return &schema.EventEnvelope{Event: "pane.agent_status_changed", Data: schema.EventData{
		PaneAgentStatusChanged: &schema.EventDataPaneAgentStatusChanged{
			PaneID: pane, WorkspaceID: "w1", AgentStatus: schema.AgentStatus(status), Agent: &agent}}}
}

// hookRun is one finished hook process.
type hookRun struct {
	took   time.Duration
	stderr string
	err    error
}

// runHook runs 'herdr-link deliver' as a hook with env (and args), with
// the test's lock directory, and waits for it, killing it past twice the
// bound.
func runHook(t *testing.T, ob outboxEnv, env []string, args ...string) hookRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*hookBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, ob.bin, append([]string{"deliver"}, args...)...)
	cmd.Env = append(append(os.Environ(), ob.env), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	err := cmd.Run()
	r := hookRun{took: time.Since(start), stderr: stderr.String(), err: err}
	// No process of the hook's group outlives it.
	if err := syscall.Kill(-cmd.Process.Pid, 0); err == nil {
		t.Errorf("a process of the hook's group is still running after it exited")
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	return r
}

// heldOrphans makes acceptor a<i> send one message to the working
// target-<i> for each trial (held), then ends every acceptor's session
// (a host that exits), and returns the message ids.
func heldOrphans(t *testing.T, ob outboxEnv, srv *sockettest.Server, w *sockettest.World, n int) []string {
	t.Helper()
	acceptors, ids := acceptHeld(t, ob, srv, w, n)
	for _, a := range acceptors {
		_ = a.session.Close() // the host exits: so does its server
	}
	return ids
}

// acceptHeld starts acceptor a<i> and makes it send one message to the
// working target-<i> for each of n trials, all at once; each must be
// held. It returns the acceptors and the message ids.
func acceptHeld(t *testing.T, ob outboxEnv, srv *sockettest.Server, w *sockettest.World, n int) ([]hlProc, []string) {
	t.Helper()
	ids := make([]string, n)
	acceptors := make([]hlProc, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			acceptors[i] = ob.start(t, srv, paneOf(w, fmt.Sprintf("a%d", i+1)))
			r := send(t, acceptors[i].session, fmt.Sprintf("target-%d", i+1), fmt.Sprintf("held by a%d", i+1))
			if r.isErr || r.delivery != link.DeliveryHeld {
				t.Errorf("a%d: %v, want held", i+1, r)
			}
			ids[i] = r.id
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return acceptors, ids
}

// countTyped counts the turns of pane holding the envelope of id, and
// all the prompts pane got.
func countTyped(w *sockettest.World, pane, id string) (n, prompts int) {
	for _, s := range w.Submissions(pane) {
		for _, e := range link.ExtractAll(s.Text) {
			if e.ID == id {
				n++
			}
		}
	}
	return n, len(w.Prompts(pane))
}

// tallyHook fails the test on a lost or duplicated message.
func tallyHook(t *testing.T, w *sockettest.World, ids []string) {
	t.Helper()
	var lost, doubled int
	for i, id := range ids {
		pane := paneOf(w, fmt.Sprintf("target-%d", i+1))
		waitEnvelopes(w, pane, 1, 5*time.Second)
		switch n, prompts := countTyped(w, pane, id); {
		case n == 0:
			lost++
		case n > 1 || prompts != 1:
			doubled++
		}
	}
	t.Logf("%d trials: %d lost, %d duplicated", len(ids), lost, doubled)
	if lost+doubled > 0 {
		t.Errorf("%d lost, %d duplicated, want 0 and 0", lost, doubled)
	}
}

func checkHook(t *testing.T, r hookRun) {
	t.Helper()
	if r.err != nil || r.took > hookBound {
		t.Errorf("hook: took %v, err %v, want exit 0 within %v; stderr:\n%s", r.took, r.err, hookBound, r.stderr)
	}
}

// The event hook, run once per status change of each target (20 trials,
// the targets at once), types each orphaned message exactly once; and
// eight hooks started at once for one pane type it once too.
func TestDeliverHookTypesOrphanOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for _, concurrent := range []int{1, 8} {
		t.Run(fmt.Sprintf("hooks=%d", concurrent), func(t *testing.T) {
			w := crashWorld(t, trials)
			srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = deliveryEnterDelay })
			ob := newOutboxEnv(t)
			st := ob.store(t, srv)
			ids := heldOrphans(t, ob, srv, w, trials)
			waitGone(t, st)
			var wg sync.WaitGroup
			for i := range trials {
				pane := paneOf(w, fmt.Sprintf("target-%d", i+1))
				if err := w.SetStatus(pane, "idle"); err != nil { // the turn ends: Herdr runs the hooks
					t.Fatal(err)
				}
				env := hookEnv(t, srv, paneOf(w, "r"), statusEvent(pane, "idle"))
				for range concurrent {
					wg.Add(1)
					go func() {
						defer wg.Done()
						checkHook(t, runHook(t, ob, env))
					}()
				}
				if concurrent > 1 && i%4 == 3 {
					wg.Wait() // four panes' batches at a time: 32 processes, not 160
				}
			}
			wg.Wait()
			tallyHook(t, w, ids)
			checkOutboxEmpty(t, st)
		})
	}
}

// The startup hook (HERDR_PLUGIN_EVENT=startup, no event) types every
// orphaned message that can be typed, exactly once, in one pass.
func TestDeliverStartupHookTypesOrphansOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	w := crashWorld(t, trials)
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = deliveryEnterDelay })
	ob := newOutboxEnv(t)
	st := ob.store(t, srv)
	ids := heldOrphans(t, ob, srv, w, trials)
	waitGone(t, st)
	for i := range trials {
		if err := w.SetStatus(paneOf(w, fmt.Sprintf("target-%d", i+1)), "idle"); err != nil {
			t.Fatal(err)
		}
	}
	r := runHook(t, ob, hookEnv(t, srv, paneOf(w, "r"), nil))
	if r.err != nil || r.took > 30*time.Second {
		t.Errorf("startup hook: took %v, err %v, want exit 0 within 30s; stderr:\n%s", r.took, r.err, r.stderr)
	}
	tallyHook(t, w, ids)
	checkOutboxEmpty(t, st)
}

// The hook ends within its bound, typing nothing, when the target stays
// busy (the event said idle, the agent works again) and when Herdr does
// not answer in time (the message waits for a later run); a Herdr that
// is slow but answers within each call's deadline gets it typed, once.
func TestDeliverHookBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for _, c := range []struct {
		name string
		set  func(*sockettest.Server, *sockettest.World, string) error
	}{
		{"target busy", func(_ *sockettest.Server, w *sockettest.World, pane string) error { return nil }},
		{"herdr hangs", func(s *sockettest.Server, w *sockettest.World, pane string) error {
			s.SetFault("", sockettest.Fault{Hang: true})
			return nil
		}},
		{"herdr slower than a call's deadline", func(s *sockettest.Server, w *sockettest.World, pane string) error {
			s.SetFault("", sockettest.Fault{Latency: 3 * time.Second})
			return w.SetStatus(pane, "idle")
		}},
		{"herdr slow but answering", func(s *sockettest.Server, w *sockettest.World, pane string) error {
			s.SetFault("", sockettest.Fault{Latency: 300 * time.Millisecond})
			return w.SetStatus(pane, "idle")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := crashWorld(t, 1)
			srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = deliveryEnterDelay })
			ob := newOutboxEnv(t)
			st := ob.store(t, srv)
			ids := heldOrphans(t, ob, srv, w, 1)
			waitGone(t, st)
			pane := paneOf(w, "target-1")
			if err := c.set(srv, w, pane); err != nil {
				t.Fatal(err)
			}
			r := runHook(t, ob, hookEnv(t, srv, paneOf(w, "r"), statusEvent(pane, "idle")))
			checkHook(t, r)
			srv.ClearFaults()
			if n, _ := countTyped(w, pane, ids[0]); n > 1 {
				t.Errorf("typed %d times", n)
			}
			if c.name == "herdr slow but answering" {
				tallyHook(t, w, ids) // typed, once, within the bound
			}
			if c.name == "target busy" {
				if n, prompts := countTyped(w, pane, ids[0]); n != 0 || prompts != 0 {
					t.Errorf("typed into a busy target: %d turns, %d prompts", n, prompts)
				}
				// The turn ends: the next run types it.
				if err := w.SetStatus(pane, "idle"); err != nil {
					t.Fatal(err)
				}
				checkHook(t, runHook(t, ob, hookEnv(t, srv, paneOf(w, "r"), statusEvent(pane, "idle"))))
				tallyHook(t, w, ids)
			}
		})
	}
}

// With nothing due the hook exits at once, silent, typing nothing and
// making no socket call; an event for a pane that just became busy is
// not even looked up.
func TestDeliverHookNothingDue(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	w := crashWorld(t, 1)
	srv := simtest.New(t, w)
	ob := newOutboxEnv(t)
	pane := paneOf(w, "target-1")
	for _, ev := range []*schema.EventEnvelope{statusEvent(pane, "idle"), statusEvent(pane, "working"), nil} {
		before := len(srv.Requests())
		r := runHook(t, ob, hookEnv(t, srv, paneOf(w, "r"), ev))
		if r.err != nil || r.stderr != "" || r.took > 2*time.Second {
			t.Errorf("event %v: took %v, err %v, stderr %q; want exit 0 at once, silent", ev, r.took, r.err, r.stderr)
		}
		if got := srv.Requests()[before:]; len(got) != 0 {
			t.Errorf("event %v: %d socket requests (%v), want none", ev, len(got), got)
		}
	}
	if got := w.Prompts(pane); len(got) != 0 {
		t.Errorf("typed %d prompts, want none", len(got))
	}
}
