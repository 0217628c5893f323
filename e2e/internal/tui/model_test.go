package tui_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/mcpclient"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// flipEnv names a documented knob that flips one behaviour of the model
// before it is checked (against the table, or against the real TUIs), to
// show the check can fail: "stuck" (the composer never submits),
// "raw" (bracketed paste off), "kind=K" (model the target as kind K, e.g.
// a codex target as claude: queued instead of interrupting).
const flipEnv = "HERDR_LINK_MODEL_FLIP"

// modelTurnMS is how long a modelled turn lasts (the working scenario's
// busy turn included).
const modelTurnMS = 3000

// modelWorld is the scenario's world: the modelled reviewer of kind (one
// behaviour flipped when flip says so) and the sender panes.
func modelWorld(t *testing.T, kind string, sc Scenario, flip string) *sockettest.World {
	t.Helper()
	agent := &sockettest.AgentSpec{Kind: kind, Name: "reviewer", Status: "idle", Draft: sc.Draft, TurnMS: modelTurnMS}
	switch {
	case flip == "":
	case flip == "stuck":
		agent.Stuck = true
	case flip == "raw":
		off := false
		agent.BracketedPaste = &off
	case strings.HasPrefix(flip, "kind="):
		agent.Kind = strings.TrimPrefix(flip, "kind=")
	default:
		t.Fatalf("%s=%q: want stuck, raw or kind=K", flipEnv, flip)
	}
	panes := []sockettest.PaneSpec{{ID: reviewerPane, Agent: agent}}
	for _, n := range senderNames {
		panes = append(panes, sockettest.PaneSpec{Agent: &sockettest.AgentSpec{Kind: "claude", Name: n, Status: "working", TurnMS: -1}})
	}
	w, err := sockettest.NewWorld(sockettest.WorldSpec{Workspaces: []sockettest.WorkspaceSpec{{ID: "w1", Tabs: []sockettest.TabSpec{{ID: "w1:t1", Panes: panes}}}}, Focused: reviewerPane})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// playModel runs sc against the simulator's modelled receiving end of
// kind, with the same herdr-link senders as against the real TUIs, and
// reads the outcome from the pane's submissions.
func playModel(t *testing.T, kind string, sc Scenario, flip string) (Outcome, []sent) {
	t.Helper()
	w := modelWorld(t, kind, sc, flip)
	srv := simtest.New(t, w)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	senders := make([]*mcpclient.Client, sc.senders())
	for i := range senders {
		senders[i] = sender(t, srv, senderNames[i])
	}
	busy := ""
	if sc.Working {
		busy = "Start a long task (" + sc.Name + ")."
		if _, err := srv.Client().AgentPrompt(ctx, schema.AgentPromptParams{Target: "reviewer", Text: busy}); err != nil {
			t.Fatal(err)
		}
		if !waitUntil(ctx, 10*time.Second, func() bool { return subsContain(w.Submissions(reviewerPane), busy) }) {
			t.Logf("the modelled target never started working (%s)", flip)
		}
	}
	interrupts0 := w.Interrupts(reviewerPane)
	results := sendAtOnce(t, ctx, senders, sc)
	waitUntil(ctx, 3*modelTurnMS*time.Millisecond+3*time.Second, func() bool {
		subs := w.Submissions(reviewerPane)
		for _, s := range results {
			if !subsContain(subs, s.id) {
				return false
			}
		}
		return true
	})
	subs := w.Submissions(reviewerPane)
	rec := record{busy: -1, busyCut: w.Interrupts(reviewerPane) > interrupts0}
	for i, s := range subs {
		if busy != "" && rec.busy < 0 && strings.Contains(s.Text, busy) {
			rec.busy = i
		}
	}
	for _, s := range subs {
		tr := turnRec{text: s.Text}
		if rec.busy >= 0 {
			// A modelled turn lasts modelTurnMS from its submission.
			end := subs[rec.busy].At.Add(modelTurnMS*time.Millisecond - 50*time.Millisecond)
			tr.afterBusy = !s.At.Before(end)
		}
		rec.turns = append(rec.turns, tr)
	}
	return outcomeOf(sc, rec, w.Prompts(reviewerPane), results), results
}

func subsContain(subs []sockettest.Submission, s string) bool {
	for _, x := range subs {
		if strings.Contains(x.Text, s) {
			return true
		}
	}
	return false
}

func waitUntil(ctx context.Context, d time.Duration, ok func() bool) bool {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for !ok() {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	return true
}

// lockedSenders reports whether herdr-link serializes deliveries to one
// pane across processes: a herdr-link that reports
// delivery values has the lock too (both came together), and then two
// senders at once make two turns; before it they merge into one.
func lockedSenders(results []sent) bool {
	for _, s := range results {
		if s.delivery != "" {
			return true
		}
	}
	return false
}

// quickTurns are the kinds whose short turns may end before a second
// sender's delivery goes out.
var quickTurns = map[string]bool{"gemini": true, "qwen": true, "copilot": true}

// oneSubmittedElse: one delivery was submitted and each other one
// submitted or other (queued, or for grok unconfirmed).
func oneSubmittedElse(d []string, other string) bool {
	n := 0
	for _, v := range d {
		switch v {
		case "submitted":
			n++
		case other:
		default:
			return false
		}
	}
	return n >= 1
}

// want is the table's outcome for sc on host, given what this herdr-link
// does about concurrent senders: without the lock, whether two messages
// share a turn is up to timing, so got's value is taken.
func want(t *testing.T, host string, sc Scenario, got Outcome, results []sent) Outcome {
	w := Expected(host, sc)
	if quickTurns[host] && sc.senders() > 1 && oneSubmittedElse(got.Delivery, "queued") {
		// A later sender, held by the per-pane lock until the first
		// delivery's turn started, finds this kind queueing or (its turn
		// already over) idle: either value is true.
		w.Delivery = got.Delivery
	}
	if quickTurns[host] && sc.Working && oneSubmittedElse(got.Delivery, "queued") {
		// The busy turn of these kinds is short: the queued message may
		// already have started its own turn when herdr-link looks
		// (submitted) or not yet (queued); Queued, read from the model
		// requests, says it waited either way.
		w.Delivery = got.Delivery
	}
	if host == "grok" && sc.senders() > 1 && oneSubmittedElse(got.Delivery, "unconfirmed") {
		// The later sender's message starts a turn beside the first's
		// (unconfirmed) or, that turn already over, after it (submitted).
		w.Delivery = got.Delivery
	}
	if sc.senders() > 1 && !lockedSenders(results) {
		t.Logf("%s: this herdr-link has no per-pane delivery lock: the messages may share a turn (here: separate=%v)", sc.Name, got.Separate)
		w.Separate = got.Separate
	}
	return w
}

// TestModelScenarios: the simulator's model of each kind's receiving end
// gives the scenario table's outcomes (no real TUI needed). With
// HERDR_LINK_MODEL_FLIP set, the model is deliberately wrong and this
// test must fail, naming the scenarios that changed.
func TestModelScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("runs herdr-link processes")
	}
	flip := os.Getenv(flipEnv)
	for _, kind := range []string{"claude", "codex", "gemini", "qwen", "copilot", "grok"} {
		for _, sc := range ScenariosFor(kind) {
			t.Run(kind+"/"+sc.Name, func(t *testing.T) {
				t.Parallel()
				got, results := playModel(t, kind, sc, flip)
				w := want(t, kind, sc, got, results)
				for _, d := range got.diff(w, true) {
					t.Errorf("scenario %s changed for %s (model vs table): %s", sc.Name, kind, d)
				}
			})
		}
	}
}

// TestModelFlipIsCaught: flipping one behaviour of the model makes the
// comparison report the scenarios it changes (so the model-vs-reality
// test can fail).
func TestModelFlipIsCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("runs herdr-link processes")
	}
	for _, tc := range []struct {
		kind, flip string
		sc         Scenario
		changed    string
	}{
		{"claude", "stuck", Scenarios[0], "submitted is false"},
		{"codex", "kind=claude", Scenarios[1], "interrupting is false"},
		{"gemini", "stuck", Scenarios[0], "submitted is false"},
		{"qwen", "kind=codex", Scenarios[1], "interrupting is true"},
		{"copilot", "kind=codex", Scenarios[1], "interrupting is true"},
		{"grok", "kind=claude", Scenarios[1], "queued is true"},
	} {
		t.Run(tc.kind+"/"+tc.flip, func(t *testing.T) {
			t.Parallel()
			got, results := playModel(t, tc.kind, tc.sc, tc.flip)
			diffs := got.diff(want(t, tc.kind, tc.sc, got, results), false)
			if !strings.Contains(strings.Join(diffs, "; "), tc.changed) {
				t.Fatalf("flipping %s gave %q, want a difference %q", tc.flip, diffs, tc.changed)
			}
		})
	}
}
