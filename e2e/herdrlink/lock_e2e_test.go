//go:build unix

package herdrlink

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/herdr-link/herdr-link/internal/panelock"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// Process tests of the pane lock: separate herdr-link processes (the
// built binary) against the simulator's receiving end, 20 trials each,
// counting merged turns and double typings.

const trials = 20

// trialWorld holds the senders named in senders and one target per
// trial, target-1 … target-n, each with the agent spec spec.
func trialWorld(t *testing.T, senders []string, n int, spec string) *sockettest.World {
	t.Helper()
	var panes []string
	for _, s := range senders {
		panes = append(panes, fmt.Sprintf(`{"agent":{"kind":"claude","name":%q,"status":"idle"}}`, s))
	}
	for i := 1; i <= n; i++ {
		panes = append(panes, fmt.Sprintf(`{"agent":{"name":"target-%d",%s}}`, i, spec))
	}
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[` + strings.Join(panes, ",") + `]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// hlProc is a herdr-link process with its MCP session.
type hlProc struct {
	session
	cmd *exec.Cmd
}

// startProc starts bin as the MCP server of pane (the pid stays known, to
// stop it).
func startProc(t *testing.T, bin string, srv *sockettest.Server, pane string, args []string, env ...string) hlProc {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(append(os.Environ(), "HERDR_LINK_LOG=warn"), srv.Env(pane)...), env...)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(sigCont)
		cs.Close()
	})
	p := hlProc{session{ClientSession: cs}, cmd}
	call(t, p.session, "herdr_link", nil)
	return p
}

// sendEach sends one message from each process to each target, all at
// once, and returns the outcomes by target.
func sendEach(t *testing.T, ps []hlProc, targets []string) map[string][]sendOutcome {
	var mu sync.Mutex
	out := map[string][]sendOutcome{}
	var wg sync.WaitGroup
	for _, to := range targets {
		for i, p := range ps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := send(t, p.session, to, fmt.Sprintf("message from sender %d to %s\nsecond line", i, to))
				mu.Lock()
				out[to] = append(out[to], r)
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	return out
}

// tally counts, in the turns pane received, merged turns (more than one
// envelope) and double typings (an envelope twice), and the envelopes of
// ids missing.
func tally(w *sockettest.World, pane string, ids []string) (merged, doubled, missing int) {
	seen := map[string]int{}
	for _, s := range w.Submissions(pane) {
		envs := link.ExtractAll(s.Text)
		if len(envs) > 1 {
			merged++
		}
		for _, e := range envs {
			seen[e.ID]++
		}
	}
	for _, n := range seen {
		if n > 1 {
			doubled++
		}
	}
	for _, id := range ids {
		if seen[id] == 0 {
			missing++
		}
	}
	return merged, doubled, missing
}

// checkTrials waits for each target's turns and fails on any merged turn,
// double typing, failed send or missing envelope.
func checkTrials(t *testing.T, w *sockettest.World, outcomes map[string][]sendOutcome) {
	t.Helper()
	var merged, doubled, missing, failed int
	// Wait for every target's turns at once (a merged turn never comes).
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		done := true
		for to, rs := range outcomes {
			n := 0
			for _, s := range w.Submissions(paneOf(w, to)) {
				n += len(link.ExtractAll(s.Text))
			}
			done = done && n >= len(rs)
		}
		if done {
			break
		}
	}
	time.Sleep(400 * time.Millisecond) // nothing more arrives
	for to, rs := range outcomes {
		var ids []string
		for _, r := range rs {
			if r.isErr {
				failed++
				t.Errorf("send to %s: %s", to, r.text)
				continue
			}
			ids = append(ids, r.id)
		}
		pane := paneOf(w, to)
		subs := w.Submissions(pane)
		m, d, x := tally(w, pane, ids)
		merged, doubled, missing = merged+m, doubled+d, missing+x
		if m+d+x > 0 {
			t.Errorf("%s: %d merged, %d doubled, %d missing:\n%s", to, m, d, x, dumpSubs(subs))
		}
	}
	t.Logf("%d trials: %d merged turns, %d double typings, %d missing, %d failed sends", len(outcomes), merged, doubled, missing, failed)
}

func targets(n int) []string {
	var out []string
	for i := 1; i <= n; i++ {
		out = append(out, fmt.Sprintf("target-%d", i))
	}
	return out
}

// A detection flap right after the prompt (working at once, idle again
// 100 ms later, before Herdr's Enter at 300 ms) is not a submission: the
// second sender waits for the Enter and gets a turn of its own.
func TestFlapDoesNotReleaseEarly(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	w := trialWorld(t, []string{"s1", "s2"}, trials, `"kind":"claude","status":"idle","turn_ms":30`)
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = 300 * time.Millisecond })
	for _, to := range targets(trials) {
		if err := w.SetPromptFlap(paneOf(w, to), 100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	flags := []string{"-timeout", "20s", "-no-bootstrap"}
	ps := []hlProc{startProc(t, binary, srv, paneOf(w, "s1"), flags), startProc(t, binary, srv, paneOf(w, "s2"), flags)}
	checkTrials(t, w, sendEach(t, ps, targets(trials)))
}

// A just-started Codex (status unknown: raw typing, an early Enter
// swallowed) is waited for: two senders get a turn each, none merges.
func TestColdTargetNeverMerges(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	w := trialWorld(t, []string{"s1", "s2"}, trials, `"kind":"codex","status":"unknown","turn_ms":30`)
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = deliveryEnterDelay })
	ps := []hlProc{startProc(t, binary, srv, paneOf(w, "s1"), deliveryFlags), startProc(t, binary, srv, paneOf(w, "s2"), deliveryFlags)}
	// The agents are ready (Herdr classifies them idle) a second in.
	timer := time.AfterFunc(time.Second, func() {
		for _, to := range targets(trials) {
			_ = w.SetStatus(paneOf(w, to), "idle")
		}
	})
	defer timer.Stop()
	checkTrials(t, w, sendEach(t, ps, targets(trials)))
}

// leasePhase reads the phase of the lease on terminal's lock for the
// simulator srv ('d': the prompt answered), or 0.
func leasePhase(srv *sockettest.Server, terminal string) byte {
	l := &panelock.Locker{Scope: srv.Path()}
	dir, err := l.DirPath()
	if err != nil {
		return 0
	}
	b, err := os.ReadFile(dir + "/" + l.Key(terminal))
	if err != nil || len(b) < 23 {
		return 0
	}
	return b[22]
}

// A sender stopped (SIGSTOP) while it holds targets' locks blocks them
// only until its leases end: later sends succeed, and when the stopped
// one resumes nothing is typed twice or merged.
func TestStoppedHolderBlocksOnlyItsLease(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const rounds = 4
	for r := 0; r < rounds; r++ {
		t.Run(fmt.Sprint("round", r), func(t *testing.T) {
			t.Parallel()
			n := trials / rounds
			// Turns start 1.5 s after Herdr's Enter: the holder is still
			// watching, in the lease's last phase, when it is stopped.
			w := trialWorld(t, []string{"a", "b"}, n, `"kind":"claude","status":"idle","submit_ms":1500,"turn_ms":2500`)
			srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = 300 * time.Millisecond })
			flags := []string{"-timeout", "10s", "-no-bootstrap"}
			a, b := startProc(t, binary, srv, paneOf(w, "a"), flags), startProc(t, binary, srv, paneOf(w, "b"), flags)
			var mu sync.Mutex
			out := map[string][]sendOutcome{}
			var wg sync.WaitGroup
			for _, to := range targets(n) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := send(t, a.session, to, "from the holder")
					mu.Lock()
					out[to] = append(out[to], r)
					mu.Unlock()
				}()
			}
			// Stop the holder once every delivery of it was answered.
			for _, to := range targets(n) {
				info, _ := w.Agent(to)
				for deadline := time.Now().Add(10 * time.Second); leasePhase(srv, info.TerminalID) != 'd'; time.Sleep(5 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("%s: the holder's lease never reached its last phase", to)
					}
				}
			}
			if err := a.cmd.Process.Signal(sigStop); err != nil {
				t.Fatal(err)
			}
			later := sendEach(t, []hlProc{b}, targets(n))
			mu.Lock()
			for k, v := range later {
				out[k] = append(out[k], v...)
			}
			mu.Unlock()
			if err := a.cmd.Process.Signal(sigCont); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			checkTrials(t, w, out)
		})
	}
}
