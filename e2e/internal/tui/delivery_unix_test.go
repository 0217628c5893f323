//go:build unix

package tui_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/e2e/internal/fakemodel"
	"github.com/herdr-link/herdr-link/e2e/internal/tui"
	"github.com/herdr-link/herdr-link/internal/mcpclient"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/ptypane"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// The fake's delay per SSE event: answerDelay makes every turn last a
// second or two, as a real model's do (an instant answer would end a turn
// before a second sender's message could meet it); busyDelay makes the
// working scenario's turn last several seconds.
const (
	answerDelay = 250 * time.Millisecond
	busyDelay   = 600 * time.Millisecond
)

// rig is one reviewer pane hosting a real TUI against the fake model,
// behind a tap, with sender panes (modelled, no program) beside it.
type rig struct {
	h    tui.Host
	srv  *sockettest.Server
	pane *ptypane.Pane
	tap  *tui.Tap
	fake *fakemodel.Server
}

func newRig(t *testing.T, h tui.Host) *rig {
	t.Helper()
	bin := hostBinary(t, h)
	fake, tap := fakeModel(t)
	run, err := tui.Prepare(h, tui.Options{Binary: bin, Dir: t.TempDir(), BaseURL: tap.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := run.Cleanup(); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	cmd := sockettest.CommandSpec(run.Command)
	panes := []sockettest.PaneSpec{{ID: reviewerPane, Agent: &sockettest.AgentSpec{Kind: string(h), Name: "reviewer", Status: "idle"}, Command: &cmd}}
	for _, n := range senderNames {
		panes = append(panes, sockettest.PaneSpec{Agent: &sockettest.AgentSpec{Kind: "claude", Name: n, Status: "working"}})
	}
	w, err := sockettest.NewWorld(sockettest.WorldSpec{Workspaces: []sockettest.WorkspaceSpec{{ID: "w1", Tabs: []sockettest.TabSpec{{ID: "w1:t1", Panes: panes}}}}, Focused: reviewerPane})
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w, sockettest.WithPrograms(ptypane.Start))
	r := &rig{h: h, srv: srv, pane: srv.Program(reviewerPane).(*ptypane.Pane), tap: tap, fake: fake}
	// Herdr detects a turn from the screen; here the model requests say
	// it: working while any main request is in flight (a host may start
	// its next request before the tap has finished with the last one).
	var mu sync.Mutex
	active := 0
	tap.OnTurn(func(tui.Turn) {
		mu.Lock()
		defer mu.Unlock()
		if active++; active == 1 {
			_ = w.SetStatus(reviewerPane, "working")
		}
	}, func(tui.Turn) {
		mu.Lock()
		defer mu.Unlock()
		if active--; active == 0 {
			_ = w.SetStatus(reviewerPane, "idle")
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if err := tui.WaitReady(ctx, h, r.pane); err != nil {
		t.Fatal(err)
	}
	// One turn first: a TUI that has just drawn its input box may still be
	// starting (Codex 0.171.0 took about 3 s from the first Enter to the
	// first model request); the scenarios are about an agent in use.
	const warm = "Warm-up: reply with one word."
	start := time.Now()
	if _, err := srv.Client().AgentPrompt(ctx, schema.AgentPromptParams{Target: "reviewer", Text: warm}); err != nil {
		t.Fatal(err)
	}
	// (A host may make side requests first: the turn is the main one
	// holding the text.)
	warmTurn := func(x tui.Turn) bool { return x.Main && contains(x.New, warm) }
	warmDone := func(ts []tui.Turn) bool {
		return slicesAny(ts, func(x tui.Turn) bool { return warmTurn(x) && !x.End.IsZero() })
	}
	if err := r.waitOrEnter(t, ctx, warm, 15*time.Second, warmDone); err != nil {
		t.Fatalf("warm-up turn: %v, want a finished main turn with %q; turns:%s\nscreen:\n%s", err, warm, turnLines(tap.Turns()), r.pane.Screen(false, false))
	}
	for _, x := range tap.Turns() {
		if warmTurn(x) {
			t.Logf("%s: first turn started %v after its prompt", h, x.Start.Sub(start).Round(time.Millisecond))
			break
		}
	}
	if !waitUntil(ctx, 10*time.Second, func() bool {
		a, ok := srv.World.Agent(reviewerPane)
		return ok && a.AgentStatus != schema.AgentStatusWorking
	}) {
		t.Fatal("the target did not go idle after the warm-up")
	}
	tap.SetDelay(answerDelay)
	return r
}

// waitOrEnter waits until done holds for the tap's turns. A rig's own
// prompt (text) still in the composer after first gets one more Enter,
// logged: Gemini CLI 0.61.0 turns the Enter after a paste into a newline
// now and then (the first paste after start, mostly; see the receiver's
// gemini kind), and the rig needs an agent in use. The measured messages
// never get one: their rows allow that mishap instead.
func (r *rig) waitOrEnter(t *testing.T, ctx context.Context, text string, first time.Duration, done func([]tui.Turn) bool) error {
	t.Helper()
	fctx, cancel := context.WithTimeout(ctx, first)
	err := r.tap.Wait(fctx, done)
	cancel()
	if err == nil {
		return nil
	}
	if strings.Contains(r.pane.Screen(false, false), text) {
		t.Logf("%s: %q stayed in the composer; one more Enter", r.h, text)
		if err := r.pane.Send([]byte("\r")); err != nil {
			return err
		}
	}
	return r.tap.Wait(ctx, done)
}

// play runs sc against the real TUI and reads the outcome from the tap's
// log of model requests.
func (r *rig) play(t *testing.T, sc Scenario) (Outcome, []sent) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	senders := make([]*mcpclient.Client, sc.senders())
	for i := range senders {
		senders[i] = sender(t, r.srv, senderNames[i])
	}
	if sc.Draft != "" {
		// Typed as a user types: a key at a time (a TUI may take a burst
		// of keys for something else; Claude Code 2.1.328 garbled
		// "half typed draft" sent in one write after a turn).
		for _, k := range sc.Draft {
			if err := r.pane.Send([]byte(string(k))); err != nil {
				t.Fatal(err)
			}
			time.Sleep(30 * time.Millisecond)
		}
		// Wait for its last word on the screen (what the model gets is
		// checked from its request; the emulated screen once showed
		// "half typedddraft" for a composer holding "half typed draft").
		words := strings.Fields(sc.Draft)
		last := words[len(words)-1]
		if err := r.pane.WaitScreen(ctx, func(s string) bool { return strings.Contains(s, last) }); err != nil {
			t.Fatalf("draft not in the composer: %v; screen:\n%s", err, r.pane.Screen(false, false))
		}
	}
	var busy string
	if sc.Working {
		r.tap.SetDelay(busyDelay)
		busy = "Start a long task (" + sc.Name + ")."
		if _, err := r.srv.Client().AgentPrompt(ctx, schema.AgentPromptParams{Target: "reviewer", Text: busy}); err != nil {
			t.Fatal(err)
		}
		working := func(ts []tui.Turn) bool {
			return len(ts) > 0 && contains(ts[len(ts)-1].New, busy) && ts[len(ts)-1].End.IsZero()
		}
		if err := r.waitOrEnter(t, ctx, busy, 10*time.Second, working); err != nil {
			t.Fatalf("the target never started working: %v", err)
		}
		// The busy answer streams on; the next turns are ordinary again.
		r.tap.SetDelay(answerDelay)
	}
	sendStart := time.Now()
	results := sendAtOnce(t, ctx, senders, sc)
	defer func() {
		// Submission time: from the sends to the turn holding each.
		for _, s := range results {
			for _, x := range r.tap.Turns() {
				if x.Main && strings.Contains(strings.Join(x.New, ""), s.id) {
					t.Logf("%s %s: the turn holding %s started %v after the send began", r.h, sc.Name, s.id, x.Start.Sub(sendStart).Round(time.Millisecond))
					break
				}
			}
		}
	}()
	// Settle: every message in some finished turn, or the budget.
	settle, cancelSettle := context.WithTimeout(ctx, 30*time.Second)
	defer cancelSettle()
	_ = r.tap.Wait(settle, func(ts []tui.Turn) bool {
		for _, s := range results {
			if !slicesAny(ts, func(x tui.Turn) bool { return strings.Contains(strings.Join(x.New, ""), s.id) && !x.End.IsZero() }) {
				return false
			}
		}
		return true
	})
	return outcomeOf(sc, tapRecord(r.tap.Turns(), busy), pastes(r.srv.World.Inputs(reviewerPane)), results), results
}

// tapRecord reads the model requests a TUI made.
func tapRecord(turns []tui.Turn, busy string) record {
	rec := record{busy: -1}
	for i, x := range turns {
		if busy != "" && rec.busy < 0 && contains(x.New, busy) {
			rec.busy = i
		}
	}
	for _, x := range turns {
		tr := turnRec{text: strings.Join(x.New, "")}
		if rec.busy >= 0 {
			b := turns[rec.busy]
			tr.afterBusy = b.Completed && !x.Start.Before(b.End)
		}
		rec.turns = append(rec.turns, tr)
	}
	if rec.busy >= 0 {
		rec.busyCut = turns[rec.busy].Cut
	}
	return rec
}

// TestDeliveryIntoTUIs: herdr-link messages into the real interactive
// TUIs arrive as the scenario table says, read from the model requests;
// and the simulator's model of each host, run through the same scenario,
// agrees with the real TUI on every behaviour the table states (merged or
// separate, queued or interrupting, submitted or not, draft merged,
// intact). The summary says which scenario changed.
//
// A row whose real TUI differs is played once more with a fresh TUI, and
// passes if that run agrees: a third-party TUI on a loaded machine now and
// then loses an Enter (docs/hosts.md). The summary names every such first
// run. A flipped model still fails: its own outcome is held to the table.
func TestDeliveryIntoTUIs(t *testing.T) {
	flip := os.Getenv(flipEnv)
	var mu sync.Mutex
	var summary []string
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		if len(summary) > 0 {
			t.Logf("scenario summary (host, scenario, TUI vs table, model vs TUI):\n%s", strings.Join(summary, "\n"))
		}
	}()
	for _, h := range tui.Hosts {
		for _, sc := range ScenariosFor(string(h)) {
			t.Run(string(h)+"/"+sc.Name, func(t *testing.T) {
				row := playRow(t, h, sc, flip)
				note := ""
				if len(row.table)+len(row.vs) > 0 && len(row.model) == 0 {
					t.Logf("the %s TUI differed (%s); playing the row once more", h, strings.Join(append(row.table, row.vs...), "; "))
					note = "; first run: " + verdict(row.table) + " | " + verdict(row.vs)
					row = playRow(t, h, sc, flip)
				}
				for _, d := range row.table {
					t.Errorf("scenario %s changed for the %s TUI (TUI vs table): %s", sc.Name, h, d)
				}
				for _, d := range row.model {
					t.Errorf("scenario %s: the model of %s disagrees with the table: %s", sc.Name, h, d)
				}
				if len(row.model) > 0 {
					note += "; model vs table: CHANGED: " + strings.Join(row.model, "; ")
				}
				for _, d := range row.vs {
					t.Errorf("scenario %s: the model of %s disagrees with the real TUI: %s", sc.Name, h, d)
				}
				mu.Lock()
				summary = append(summary, fmt.Sprintf("  %-7s %-12s %s | %s%s", h, sc.label(), verdict(row.table), verdict(row.vs), note))
				mu.Unlock()
			})
		}
	}
}

// rowResult is one play of a row: how the real TUI differed from the
// table (table), the model from the table (model), the model from the
// real TUI (vs).
type rowResult struct{ table, model, vs []string }

// playRow plays sc against a fresh real TUI of h and against the model.
func playRow(t *testing.T, h tui.Host, sc Scenario, flip string) rowResult {
	t.Helper()
	r := newRig(t, h)
	// The TUI ends with the row (a second play runs alone).
	defer r.srv.Close()
	got, results := r.play(t, sc)
	t.Logf("TUI:   %s", got)
	var row rowResult
	// The fake model's own log agrees: each message is in a model
	// request's last user message (unless the row says it is lost:
	// Grok CLI's 64 KiB).
	for _, s := range results {
		if w := want(t, string(h), sc, got, results); w.Lost == 0 && !slicesAny(r.fake.Requests(), func(q fakemodel.Request) bool { return q.Main && strings.Contains(q.LastUser, s.id) }) {
			row.table = append(row.table, fmt.Sprintf("the fake model's log has no request whose last user message holds %s", s.id))
		}
	}
	row.table = append(row.table, got.diff(want(t, string(h), sc, got, results), true)...)
	model, modelResults := playModel(t, string(h), sc, flip)
	t.Logf("model: %s", model)
	row.vs = model.diff(got, false)
	row.model = model.diff(want(t, string(h), sc, model, modelResults), true)
	if len(row.table)+len(row.vs) > 0 {
		t.Logf("model turns:%s", turnLines(r.tap.Turns()))
		t.Logf("writes: %q", abbreviate(r.srv.World.Inputs(reviewerPane)))
		t.Logf("screen:\n%s", r.pane.Screen(false, false))
	}
	return row
}

func verdict(d []string) string {
	if len(d) == 0 {
		return "same"
	}
	return "CHANGED: " + strings.Join(d, "; ")
}
