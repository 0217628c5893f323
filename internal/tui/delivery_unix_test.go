//go:build unix

package tui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/mcpclient"
	"github.com/herdr-link/herdr-link/internal/tui"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/ptypane"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

var (
	linkOnce sync.Once
	linkBin  string
	linkErr  error
)

// herdrLink is the herdr-link binary the senders run: HERDR_LINK_BIN, or
// built from this tree once.
func herdrLink(t *testing.T) string {
	t.Helper()
	linkOnce.Do(func() {
		if linkBin = os.Getenv("HERDR_LINK_BIN"); linkBin != "" {
			return
		}
		dir, err := os.MkdirTemp("", "hl-tui")
		if err != nil {
			linkErr = err
			return
		}
		linkBin = filepath.Join(dir, "herdr-link")
		if out, err := exec.Command("go", "build", "-o", linkBin, "../../cmd/herdr-link").CombinedOutput(); err != nil {
			linkErr = fmt.Errorf("build herdr-link: %v\n%s", err, out)
		}
	})
	if linkErr != nil {
		t.Fatal(linkErr)
	}
	return linkBin
}

const (
	reviewerPane = "w1:p1"
	turnDelay    = 600 * time.Millisecond // per SSE event while a target must be working
)

// rig is one reviewer pane hosting a real TUI against the fake model,
// behind a tap, with sender panes (modelled, no program) beside it.
type rig struct {
	h    tui.Host
	srv  *sockettest.Server
	pane *ptypane.Pane
	tap  *tui.Tap
}

var senderNames = []string{"brain", "helper"}

func newRig(t *testing.T, h tui.Host) *rig {
	t.Helper()
	bin := hostBinary(t, h)
	tap, err := tui.NewTap(standIn(t).URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tap.Close)
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
	srv := simtest.New(t, w, ptypane.Option)
	r := &rig{h: h, srv: srv, pane: srv.Program(reviewerPane).(*ptypane.Pane), tap: tap}
	// Herdr detects a turn from the screen; here the model requests say it.
	tap.OnTurn(func(tui.Turn) { _ = w.SetStatus(reviewerPane, "working") }, func(tui.Turn) { _ = w.SetStatus(reviewerPane, "idle") })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := tui.WaitReady(ctx, h, r.pane); err != nil {
		t.Fatal(err)
	}
	return r
}

// sender is one herdr-link MCP server, as an agent host in a sender pane
// runs it, activated.
func (r *rig) sender(t *testing.T, name string) *mcpclient.Client {
	t.Helper()
	a, ok := r.srv.World.Agent(name)
	if !ok {
		t.Fatalf("no sender %s", name)
	}
	env := append(os.Environ(), r.srv.Env(a.PaneID)...)
	c, err := mcpclient.Start(herdrLink(t), []string{"serve", "-no-bootstrap", "-log-level", "error"}, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, "2025-06-18"); err != nil {
		t.Fatal(err)
	}
	if res, err := c.CallTool(ctx, "herdr_link", map[string]any{}); err != nil || res.IsError {
		t.Fatalf("activate: %v %s", err, res.Text())
	}
	return c
}

// sent is one herdr_link_send and what came of it.
type sent struct {
	message string
	id      string
	// delivery is what herdr-link reported ("" when this herdr-link does
	// not report it).
	delivery string
	err      error
}

func send(ctx context.Context, c *mcpclient.Client, message string) sent {
	res, err := c.CallTool(ctx, "herdr_link_send", map[string]any{"to": "reviewer", "message": message})
	s := sent{message: message, err: err}
	if err == nil && res.IsError {
		s.err = fmt.Errorf("send failed: %s", res.Text())
	}
	var out struct {
		ID       string `json:"id"`
		Delivery string `json:"delivery"`
	}
	if err == nil {
		_ = json.Unmarshal(res.StructuredContent, &out)
	}
	s.id, s.delivery = out.ID, out.Delivery
	return s
}

// message is a scenario's i-th message of n bytes (at least a short line).
func message(sc Scenario, i int) string {
	m := fmt.Sprintf("Scenario %s, message %d: please review.", sc.Name, i)
	if sc.Size > len(m) {
		line := strings.Repeat("lorem ipsum dolor sit amet ", 3) + "\n"
		var b strings.Builder
		b.WriteString(m + "\n")
		for b.Len() < sc.Size {
			b.WriteString(line)
		}
		m = b.String()[:sc.Size]
	}
	return m
}

// play runs sc against the real TUI and reads the outcome from the tap's
// log of model requests.
func (r *rig) play(t *testing.T, sc Scenario) (Outcome, []sent) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	senders := make([]*mcpclient.Client, sc.senders())
	for i := range senders {
		senders[i] = r.sender(t, senderNames[i])
	}
	if sc.Draft != "" {
		if err := r.pane.Send([]byte(sc.Draft)); err != nil {
			t.Fatal(err)
		}
		if err := r.pane.WaitScreen(ctx, func(s string) bool { return strings.Contains(s, sc.Draft) }); err != nil {
			t.Fatalf("draft not in the composer: %v", err)
		}
	}
	var busy string
	if sc.Working {
		r.tap.SetDelay(turnDelay)
		busy = "Start a long task (" + sc.Name + ")."
		if _, err := r.srv.Client().AgentPrompt(ctx, schema.AgentPromptParams{Target: "reviewer", Text: busy}); err != nil {
			t.Fatal(err)
		}
		if err := r.tap.Wait(ctx, func(ts []tui.Turn) bool {
			return len(ts) > 0 && contains(ts[len(ts)-1].New, busy) && ts[len(ts)-1].End.IsZero()
		}); err != nil {
			t.Fatalf("the target never started working: %v", err)
		}
		// The answer streams; the fake's next requests are quick again.
		r.tap.SetDelay(0)
	}
	results := make([]sent, len(senders))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, c := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i] = send(ctx, c, message(sc, i))
		}()
	}
	close(start)
	wg.Wait()
	for _, s := range results {
		if s.err != nil {
			t.Fatalf("%s: %v", sc.Name, s.err)
		}
	}
	// Settle: every message in some finished turn, or the budget.
	settle, cancelSettle := context.WithTimeout(ctx, 60*time.Second)
	defer cancelSettle()
	_ = r.tap.Wait(settle, func(ts []tui.Turn) bool {
		for _, s := range results {
			if !slicesAny(ts, func(x tui.Turn) bool { return strings.Contains(strings.Join(x.New, ""), s.id) && !x.End.IsZero() }) {
				return false
			}
		}
		return true
	})
	return outcomeOf(sc, r.tap.Turns(), busy, r.srv.World.Inputs(reviewerPane), results), results
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

func slicesAny[T any](l []T, f func(T) bool) bool {
	for _, x := range l {
		if f(x) {
			return true
		}
	}
	return false
}

// pastes is the texts herdr-link typed into the pane (paste brackets
// removed, Enter left out).
func pastes(inputs []string) []string {
	var out []string
	for _, in := range inputs {
		if in == "\r" || in == "\x1b[13u" || in == "\x1b[I" {
			continue
		}
		in = strings.TrimPrefix(in, "\x1b[200~")
		in = strings.TrimSuffix(in, "\x1b[201~")
		out = append(out, in)
	}
	return out
}

// outcomeOf reads a scenario's outcome from the model turns.
func outcomeOf(sc Scenario, turns []tui.Turn, busy string, inputs []string, results []sent) Outcome {
	o := Outcome{Submitted: true, Separate: true, Intact: true}
	typed := pastes(inputs)
	busyTurn := -1
	for i, x := range turns {
		if busy != "" && contains(x.New, busy) {
			busyTurn = i
		}
	}
	for _, s := range results {
		var in []int
		for i, x := range turns {
			if strings.Contains(strings.Join(x.New, ""), s.id) {
				in = append(in, i)
			}
		}
		switch {
		case len(in) == 0:
			o.Submitted = false
			o.Lost++
			continue
		case len(in) > 1:
			o.Duplicated += len(in) - 1
		}
		turn := turns[in[0]]
		text := strings.Join(turn.New, "")
		for _, other := range results {
			if other.id != s.id && strings.Contains(text, other.id) {
				o.Separate = false
			}
		}
		// The wrapper herdr-link typed reaches the model whole.
		var wrapper string
		for _, p := range typed {
			if strings.Contains(p, s.id) {
				wrapper = p
			}
		}
		if wrapper == "" || !strings.Contains(text, wrapper) {
			o.Intact = false
		}
		if sc.Draft != "" && strings.Contains(text, sc.Draft) {
			o.DraftMerged = true
		}
		if busyTurn >= 0 && in[0] > busyTurn {
			b := turns[busyTurn]
			switch {
			case b.Cut && !turn.Start.Before(b.Start):
				o.Interrupting = true // the running answer was dropped for it
			case b.Completed && !turn.Start.Before(b.End):
				o.Queued = true // it waited for the answer to end
			}
		}
		o.Delivery = append(o.Delivery, s.delivery)
	}
	return o
}

// TestDeliveryIntoTUIs: herdr-link messages into the real interactive
// TUIs arrive as the scenario table says, read from the model requests.
func TestDeliveryIntoTUIs(t *testing.T) {
	for _, h := range []tui.Host{tui.Claude, tui.Codex} {
		for _, sc := range Scenarios {
			t.Run(string(h)+"/"+sc.Name, func(t *testing.T) {
				r := newRig(t, h)
				got, results := r.play(t, sc)
				want := Expected(string(h), sc)
				t.Logf("%s %s: %s", h, sc.Name, got)
				diffs := got.diff(want, true)
				for _, d := range diffs {
					t.Errorf("%s %s: %s", h, sc.Name, d)
				}
				if len(diffs) > 0 {
					t.Logf("model turns: %+v", r.tap.Turns())
					t.Logf("writes: %q", abbreviate(r.srv.World.Inputs(reviewerPane)))
					t.Logf("screen:\n%s", r.pane.Screen(false, false))
				}
				for _, s := range results {
					if s.delivery == "" {
						t.Logf("herdr-link reported no delivery value (older herdr-link)")
					}
				}
			})
		}
	}
}

func abbreviate(l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		if len(s) > 200 {
			s = s[:100] + fmt.Sprintf("…(%d bytes)…", len(s)) + s[len(s)-100:]
		}
		out[i] = s
	}
	return out
}
