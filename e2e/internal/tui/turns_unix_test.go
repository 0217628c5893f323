//go:build unix

package tui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/e2e/internal/fakemodel"
	"github.com/herdr-link/herdr-link/e2e/internal/tui"
	"github.com/herdr-link/herdr-link/internal/mcpclient"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/ptypane"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// turnsFlipEnv names the knob that breaks the behaviour the turn
// scenarios check, to show each check fails then: "now" (the sends use
// when "now": the working Codex is interrupted, the draft gets the
// message), "no-notices" (the Claude Code sender's herdr-link types no
// notices).
const turnsFlipEnv = "HERDR_LINK_TUI_FLIP"

// Herdr tells a real TUI's status from its terminal (its detection
// manifests, src/detect/manifests/{codex,claude}.toml), and the rules
// used here are theirs. First the terminal title (OSC 0/2): a spinner
// character leads it while the agent works (Codex: a braille spinner as a
// word of the title; Claude Code: a braille or half-circle spinner and a
// space at its start). For Claude Code, next its screen: among the bottom
// twelve non-empty lines, a status line ending in "esc to interrupt" or a
// spinner line ("✻ Pondering… (2s · …)"); Claude Code 2.1.328's title
// loses its spinner while an answer streams, and Herdr's screen rule
// still says working then. Anything else is idle. Codex's screen rule is
// left out: Codex 0.171.0 draws "• Working (… esc to interrupt)" above
// its composer and footer, not among the bottom three lines the rule
// reads.
var (
	titleSeq      = regexp.MustCompile("\x1b\\][02];([^\x07\x1b]*)(?:\x07|\x1b\\\\)")
	codexWorking  = regexp.MustCompile(`(?:^| )[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏](?: |$)`)
	claudeWorking = regexp.MustCompile(`^[\x{2800}-\x{28FF}\x{25D0}-\x{25D3}] `)
	claudeScreen  = []*regexp.Regexp{
		regexp.MustCompile(`^\s*[⏸⏵].*esc to interrupt(?:\s|·|$)`),
		regexp.MustCompile(`^\s*[*·✢✶✻✽]\s+\S.*…(?:\s+\(\d+[smh](?:\s|·)|\s*$)`),
	}
)

// screenWorking is Herdr's screen rule of h for working.
func screenWorking(h tui.Host, screen string) bool {
	if h != tui.Claude {
		return false
	}
	var lines []string
	for _, l := range strings.Split(screen, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	for _, l := range lines[max(0, len(lines)-12):] {
		for _, re := range claudeScreen {
			if re.MatchString(l) {
				return true
			}
		}
	}
	return false
}

// detect is the status Herdr's title rule gives the last terminal title
// in out (ok is false when out sets none).
func detect(h tui.Host, out []byte) (st schema.AgentStatus, title string, ok bool) {
	m := titleSeq.FindAllSubmatch(out, -1)
	if len(m) == 0 {
		return "", "", false
	}
	title = string(m[len(m)-1][1])
	re := codexWorking
	if h == tui.Claude {
		re = claudeWorking
	}
	if re.MatchString(title) {
		return schema.AgentStatusWorking, title, true
	}
	return schema.AgentStatusIdle, title, strings.TrimSpace(title) != ""
}

// change is one status the detector gave a pane.
type change struct {
	at     time.Time
	status schema.AgentStatus
	// composer is set instead for a change of what link.Composer reads
	// on the screen, title for a change of what the title says.
	composer, title string
}

// livePane is a real TUI in a simulator pane, its model behind a tap, its
// status following its screen.
type livePane struct {
	h    tui.Host
	id   string
	name string
	pane *ptypane.Pane
	tap  *tui.Tap
	fake *fakemodel.Server

	mu      sync.Mutex
	changes []change
	// title and screen are what the title and the screen say; applied
	// is the status last set.
	title   schema.AgentStatus
	screen  bool
	applied schema.AgentStatus
}

// apply sets the status the title and the screen give together, when it
// changed (p.mu held).
func (p *livePane) apply(w *sockettest.World) {
	st := p.title
	if p.screen {
		st = schema.AgentStatusWorking
	}
	if st == "" {
		st = schema.AgentStatusIdle
	}
	if st == p.applied {
		return
	}
	p.applied = st
	_ = w.SetStatus(p.id, string(st))
	p.changes = append(p.changes, change{at: time.Now(), status: st})
}

func (p *livePane) status() schema.AgentStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.changes) - 1; i >= 0; i-- {
		if p.changes[i].composer == "" && p.changes[i].title == "" {
			return p.changes[i].status
		}
	}
	return schema.AgentStatusIdle
}

// firstComposer is when the composer was first read as state after
// since.
func (p *livePane) firstComposer(state string, since time.Time) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.changes {
		if c.composer == state && c.at.After(since) {
			return c.at, true
		}
	}
	return time.Time{}, false
}

func (p *livePane) history(since time.Time) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b []string
	for _, c := range p.changes {
		if c.at.Before(since) {
			continue
		}
		what := string(c.status)
		switch {
		case c.composer != "":
			what = "composer:" + c.composer
		case c.title != "":
			what = "title:" + c.title
		}
		b = append(b, fmt.Sprintf("%s@%v", what, c.at.Sub(since).Round(10*time.Millisecond)))
	}
	return strings.Join(b, " ")
}

// follow makes the pane's status in w follow its terminal title (Herdr's
// detection, as World.SetStatus applies it) until ctx ends.
func (p *livePane) follow(ctx context.Context, w *sockettest.World) {
	var cur schema.AgentStatus
	for {
		var next schema.AgentStatus
		err := p.pane.WaitOutput(ctx, func(out []byte) bool {
			st, _, ok := detect(p.h, out)
			next = st
			return ok && st != cur
		})
		if err != nil {
			return
		}
		cur = next
		p.mu.Lock()
		p.title = cur
		p.changes = append(p.changes, change{at: time.Now(), title: string(cur)})
		p.apply(w)
		p.mu.Unlock()
	}
}

// readScreen follows the pane's screen until ctx ends: Herdr's screen
// rule for working (see follow), and what link.Composer reads, recorded
// each time it changes.
func (p *livePane) readScreen(ctx context.Context, w *sockettest.World) {
	comp, working := "", false
	for {
		var nextComp string
		var nextWorking bool
		err := p.pane.WaitScreen(ctx, func(s string) bool {
			nextComp, nextWorking = link.Composer(string(p.h), s).String(), screenWorking(p.h, s)
			return nextComp != comp || nextWorking != working
		})
		if err != nil {
			return
		}
		p.mu.Lock()
		if nextComp != comp {
			p.changes = append(p.changes, change{at: time.Now(), composer: nextComp})
		}
		comp, working = nextComp, nextWorking
		p.screen = working
		p.apply(w)
		p.mu.Unlock()
	}
}

// liveSpec is one pane of a turn scenario's world: a real TUI (h set) or
// a modelled sender (h empty).
type liveSpec struct {
	h    tui.Host
	id   string
	name string
	// script is what the TUI's model does (FinalText "Received, thanks."
	// when empty).
	script fakemodel.Script
	// link registers herdr-link (the real binary) as the TUI's MCP server
	// (Claude Code only), with these extra flags.
	link     bool
	linkArgs []string
	// warm: one turn before the scenario (an agent in use).
	warm bool
}

// liveWorld starts the panes of specs in one tab of a simulator.
func liveWorld(t *testing.T, specs []liveSpec) (*sockettest.Server, map[string]*livePane) {
	t.Helper()
	var panes []sockettest.PaneSpec
	prepared := map[string]*livePane{}
	for _, s := range specs {
		if s.h == "" {
			panes = append(panes, sockettest.PaneSpec{ID: s.id, Agent: &sockettest.AgentSpec{Kind: "claude", Name: s.name, Status: "working"}})
			continue
		}
		script := s.script
		if len(script.Steps) == 0 && script.FinalText == "" {
			script.FinalText = "Received, thanks."
		}
		fake, err := fakemodel.Start(fakemodel.Options{Script: script})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(fake.Close)
		tap, err := tui.NewTap(fake.URL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tap.Close)
		run, err := tui.Prepare(s.h, tui.Options{Binary: hostBinary(t, s.h), Dir: t.TempDir(), BaseURL: tap.URL})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if _, err := run.Cleanup(); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		})
		if s.link {
			if s.h != tui.Claude {
				t.Fatalf("herdr-link as the MCP server of %s: not done here", s.h)
			}
			if err := addClaudeLink(run, herdrLink(t), s.linkArgs); err != nil {
				t.Fatal(err)
			}
		}
		cmd := sockettest.CommandSpec(run.Command)
		panes = append(panes, sockettest.PaneSpec{ID: s.id, Agent: &sockettest.AgentSpec{Kind: string(s.h), Name: s.name, Status: "idle"}, Command: &cmd})
		prepared[s.id] = &livePane{h: s.h, id: s.id, name: s.name, tap: tap, fake: fake}
	}
	w, err := sockettest.NewWorld(sockettest.WorldSpec{Workspaces: []sockettest.WorkspaceSpec{{ID: "w1", Tabs: []sockettest.TabSpec{{ID: "w1:t1", Panes: panes}}}}, Focused: specs[0].id})
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w, sockettest.WithPrograms(ptypane.Start))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for id, p := range prepared {
		p.pane = srv.Program(id).(*ptypane.Pane)
		go p.follow(ctx, w)
		go p.readScreen(ctx, w)
	}
	rctx, rcancel := context.WithTimeout(ctx, 90*time.Second)
	defer rcancel()
	for _, s := range specs {
		p := prepared[s.id]
		if p == nil {
			continue
		}
		if err := tui.WaitReady(rctx, p.h, p.pane); err != nil {
			t.Fatal(err)
		}
		if s.warm {
			warmUp(t, rctx, srv, p)
		}
	}
	return srv, prepared
}

// addClaudeLink registers herdr-link as a user-scope MCP server of
// Claude Code (what `herdr-link config claude`'s `claude mcp add` writes
// into ~/.claude.json), lists its tools directly, and lets the model
// call them without a permission prompt.
func addClaudeLink(run *tui.Run, bin string, args []string) error {
	path := filepath.Join(run.Home, ".claude.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		return err
	}
	cfg["mcpServers"] = map[string]any{"herdr_link": map[string]any{"type": "stdio", "command": bin, "args": append([]string{"serve"}, args...), "env": map[string]any{}}}
	if b, err = json.Marshal(cfg); err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return err
	}
	run.Command.Argv = append(run.Command.Argv, "--allowedTools", "mcp__herdr_link")
	run.Command.Env = append(run.Command.Env, "ENABLE_TOOL_SEARCH=false")
	return nil
}

// warmUp runs one turn in p and waits for it to end (on the screen too).
func warmUp(t *testing.T, ctx context.Context, srv *sockettest.Server, p *livePane) {
	t.Helper()
	const warm = "Warm-up: reply with one word."
	if _, err := srv.Client().AgentPrompt(ctx, schema.AgentPromptParams{Target: p.name, Text: warm}); err != nil {
		t.Fatal(err)
	}
	done := func(ts []tui.Turn) bool {
		return slicesAny(ts, func(x tui.Turn) bool { return x.Main && contains(x.New, warm) && !x.End.IsZero() })
	}
	if err := p.tap.Wait(ctx, done); err != nil {
		t.Fatalf("%s: warm-up turn: %v; turns %+v; screen:\n%s", p.h, err, p.tap.Turns(), p.pane.Screen(false, false))
	}
	if !waitUntil(ctx, 15*time.Second, func() bool { return p.status() == schema.AgentStatusIdle }) {
		t.Fatalf("%s: not idle after the warm-up; screen:\n%s", p.h, p.pane.Screen(false, false))
	}
}

// turnsWhen is the when of the scenarios' sends ("" is the default).
func turnsWhen() string {
	if os.Getenv(turnsFlipEnv) == "now" {
		return "now"
	}
	return ""
}

// sendTo is one herdr_link_send from c to the agent named to.
func sendTo(t *testing.T, ctx context.Context, c *mcpclient.Client, to, message string) sent {
	t.Helper()
	args := map[string]any{"to": to, "message": message}
	if w := turnsWhen(); w != "" {
		args["when"] = w
	}
	res, err := c.CallTool(ctx, "herdr_link_send", args)
	if err == nil && res.IsError {
		err = fmt.Errorf("send failed: %s", res.Text())
	}
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		ID       string `json:"id"`
		Delivery string `json:"delivery"`
	}
	_ = json.Unmarshal(res.StructuredContent, &out)
	return sent{message: message, id: out.ID, delivery: out.Delivery}
}

// turnsWith are the indexes of the turns whose new input holds s.
func turnsWith(ts []tui.Turn, s string) []int {
	var in []int
	for i, x := range ts {
		if strings.Contains(strings.Join(x.New, ""), s) {
			in = append(in, i)
		}
	}
	return in
}

// screenReads counts the pane.read requests for pane the simulator got
// after since.
func screenReads(srv *sockettest.Server, pane string, since time.Time) int {
	n := 0
	for _, q := range srv.Requests() {
		if q.Method == string(schema.MethodPaneRead) && q.Time.After(since) && strings.Contains(string(q.Params), `"`+pane+`"`) {
			n++
		}
	}
	return n
}

// dump logs what a failed scenario needs.
func dump(t *testing.T, srv *sockettest.Server, since time.Time, ps ...*livePane) {
	t.Helper()
	for _, p := range ps {
		for i, x := range p.tap.Turns() {
			t.Logf("%s turn %d: start %v end %v completed=%v cut=%v new=%q", p.h, i, x.Start.Sub(since).Round(10*time.Millisecond),
				x.End.Sub(since).Round(10*time.Millisecond), x.Completed, x.Cut, abbreviate(x.New))
		}
		t.Logf("%s status: %s", p.h, p.history(since))
		t.Logf("%s writes: %q", p.h, abbreviate(srv.World.Inputs(p.id)))
		t.Logf("%s screen:\n%s", p.h, p.pane.Screen(false, false))
	}
}

// TestWorkingCodexFinishesFirst: a message sent (when idle, the default)
// to a real Codex in the middle of a slowly streamed answer is held; Codex
// finishes that answer (read whole, not steered away) and then gets the
// message as its next turn, with the envelope whole.
func TestWorkingCodexFinishesFirst(t *testing.T) {
	srv, ps := liveWorld(t, []liveSpec{{h: tui.Codex, id: reviewerPane, name: "reviewer", warm: true}, {id: "w1:p2", name: "brain"}})
	cx := ps[reviewerPane]
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	brain := sender(t, srv, "brain")
	begin := time.Now()
	cx.tap.SetDelay(busyDelay)
	const busy = "Start a long task (working Codex)."
	if _, err := srv.Client().AgentPrompt(ctx, schema.AgentPromptParams{Target: "reviewer", Text: busy}); err != nil {
		t.Fatal(err)
	}
	if !waitUntil(ctx, 20*time.Second, func() bool {
		ts := cx.tap.Turns()
		return cx.status() == schema.AgentStatusWorking && len(ts) > 0 && contains(ts[len(ts)-1].New, busy) && ts[len(ts)-1].End.IsZero()
	}) {
		dump(t, srv, begin, cx)
		t.Fatal("Codex never showed working on its long answer")
	}
	cx.tap.SetDelay(answerDelay)
	s := sendTo(t, ctx, brain, "reviewer", "Please review the parser when you are done.")
	t.Logf("send: delivery %q, %v after the long turn started", s.delivery, time.Since(begin).Round(time.Millisecond))
	if err := cx.tap.Wait(ctx, func(ts []tui.Turn) bool {
		in := turnsWith(ts, s.id)
		return len(in) > 0 && !ts[in[0]].End.IsZero()
	}); err != nil {
		dump(t, srv, begin, cx)
		t.Fatalf("the message never reached Codex's model: %v", err)
	}
	ts := cx.tap.Turns()
	bi, mi := turnsWith(ts, busy), turnsWith(ts, s.id)
	b, m := ts[bi[0]], ts[mi[0]]
	var bad []string
	if s.delivery != "held" {
		bad = append(bad, fmt.Sprintf("delivery %q, want held", s.delivery))
	}
	if !b.Completed || b.Cut {
		bad = append(bad, fmt.Sprintf("the running answer was not read whole (completed=%v cut=%v): Codex was interrupted", b.Completed, b.Cut))
	}
	if m.Start.Before(b.End) {
		bad = append(bad, fmt.Sprintf("the message's turn started %v before the running answer ended", b.End.Sub(m.Start).Round(time.Millisecond)))
	}
	if mi[0] != bi[0]+1 || len(mi) != 1 {
		bad = append(bad, fmt.Sprintf("the message is in turns %v, want only the one after the long turn (%d)", mi, bi[0]))
	}
	if contains(b.New, s.id) || !extracts(strings.Join(m.New, ""), s.id) {
		bad = append(bad, "the message's envelope is not whole in its own turn")
	}
	t.Logf("long turn %v–%v, message turn from %v (%v after the long answer ended); status %s",
		b.Start.Sub(begin).Round(time.Millisecond), b.End.Sub(begin).Round(time.Millisecond), m.Start.Sub(begin).Round(time.Millisecond),
		m.Start.Sub(b.End).Round(time.Millisecond), cx.history(begin))
	if len(bad) > 0 {
		dump(t, srv, begin, cx)
		t.Fatal(strings.Join(bad, "; "))
	}
}

// TestClaudeDraftThenMessage: a real Claude Code holding a draft its user
// is typing (raw keys, pane.send_text a key at a time) gets a message
// sent when idle (the default) only after the user sends the draft
// (Enter, pane.send_keys): the user's turn is the draft alone, the
// message comes as its own next turn.
func TestClaudeDraftThenMessage(t *testing.T) {
	srv, ps := liveWorld(t, []liveSpec{{h: tui.Claude, id: reviewerPane, name: "reviewer", warm: true}, {id: "w1:p2", name: "brain"}})
	cl := ps[reviewerPane]
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	brain := sender(t, srv, "brain")
	// The user's turn lasts a second or two, as a real model's does: the
	// message must wait for its end, not only for the composer to empty.
	cl.tap.SetDelay(answerDelay)
	begin := time.Now()
	const draft = "half typed draft"
	for _, k := range draft {
		if err := srv.Client().PaneSendText(ctx, reviewerPane, string(k)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Millisecond) // a user's typing
	}
	if err := cl.pane.WaitScreen(ctx, func(s string) bool { return strings.Contains(s, "draft") }); err != nil {
		t.Fatalf("draft not in the composer: %v; screen:\n%s", err, cl.pane.Screen(false, false))
	}
	draftScreen := cl.pane.Screen(false, false)
	s := sendTo(t, ctx, brain, "reviewer", "Please review the parser.")
	sentAt := time.Now()
	t.Logf("send: delivery %q", s.delivery)
	// The user reads it over before sending: meanwhile herdr-link's
	// courier looks at the composer again (a pane.read of the pane after
	// the send) and must keep holding the message.
	// (Or until the message shows up in a turn: then the checks below
	// say what went wrong.)
	if !waitUntil(ctx, 10*time.Second, func() bool {
		return screenReads(srv, reviewerPane, sentAt) >= 1 || len(turnsWith(cl.tap.Turns(), s.id)) > 0
	}) {
		t.Fatalf("herdr-link never looked at the composer again after the send (pane.read of %s)", reviewerPane)
	}
	if err := srv.Client().PaneSendKeys(ctx, reviewerPane, "Enter"); err != nil {
		t.Fatal(err)
	}
	pressed := time.Now()
	if err := cl.tap.Wait(ctx, func(ts []tui.Turn) bool {
		in := turnsWith(ts, s.id)
		return len(in) > 0 && !ts[in[0]].End.IsZero()
	}); err != nil {
		dump(t, srv, begin, cl)
		t.Fatalf("the message never reached Claude Code's model: %v", err)
	}
	ts := cl.tap.Turns()
	ui, mi := turnsWith(ts, draft), turnsWith(ts, s.id)
	var bad []string
	if s.delivery != "held" {
		bad = append(bad, fmt.Sprintf("delivery %q, want held", s.delivery))
	}
	switch {
	case len(ui) == 0:
		bad = append(bad, "no turn holds the user's draft")
	default:
		u, m := ts[ui[0]], ts[mi[0]]
		if len(link.ExtractAll(strings.Join(u.New, ""))) > 0 || contains(u.New, s.id) {
			bad = append(bad, "the user's turn holds the message's envelope (merged into the draft)")
		}
		if u.Start.Before(pressed) {
			bad = append(bad, "the draft was submitted before the user's Enter")
		}
		if len(ui) != 1 || len(mi) != 1 || mi[0] != ui[0]+1 {
			bad = append(bad, fmt.Sprintf("the draft is in turns %v and the message in %v, want the message alone in the next", ui, mi))
		}
		if m.Start.Before(u.End) {
			bad = append(bad, "the message's turn started before the user's turn ended")
		}
		if !extracts(strings.Join(m.New, ""), s.id) {
			bad = append(bad, "the message's envelope is not whole in its turn")
		}
		// herdr-link's paste shows in the composer only once the user's
		// turn is over (typed into a working Claude Code, it would be
		// queued: not what "idle" promises).
		if at, ok := cl.firstComposer("draft", pressed); ok && at.Before(u.End) {
			bad = append(bad, fmt.Sprintf("the message was pasted %v before the user's turn ended", u.End.Sub(at).Round(time.Millisecond)))
		}
		t.Logf("user's turn's input %q; message turn's input %q", u.New, abbreviate(m.New))
		t.Logf("user's turn %v–%v after Enter, message turn from %v (%v after the user's answer ended); status %s",
			u.Start.Sub(pressed).Round(time.Millisecond), u.End.Sub(pressed).Round(time.Millisecond), m.Start.Sub(pressed).Round(time.Millisecond),
			m.Start.Sub(u.End).Round(time.Millisecond), cl.history(begin))
	}
	if len(bad) > 0 {
		t.Logf("screen with the draft:\n%s", draftScreen)
		dump(t, srv, begin, cl)
		t.Fatal(strings.Join(bad, "; "))
	}
}

// TestCodexHandledNoticeToClaude: a real Claude Code, whose herdr-link
// MCP server is the real binary, sends a request to a real Codex; Codex
// finishes its turn with it without replying; the "handled" notice is
// typed into the Claude Code TUI and reaches its model as a user turn.
func TestCodexHandledNoticeToClaude(t *testing.T) {
	var linkArgs []string
	if os.Getenv(turnsFlipEnv) == "no-notices" {
		linkArgs = append(linkArgs, "-no-notices")
	}
	const ask = "Please look at the parser."
	script := fakemodel.Script{Steps: []fakemodel.Step{
		{Call: fakemodel.Gateway},
		{Call: fakemodel.Send, Args: map[string]any{"to": "reviewer", "message": ask}},
	}, FinalText: "Asked the reviewer."}
	srv, ps := liveWorld(t, []liveSpec{
		{h: tui.Claude, id: "w1:p2", name: "brain", script: script, link: true, linkArgs: linkArgs},
		{h: tui.Codex, id: reviewerPane, name: "reviewer", warm: true},
	})
	cl, cx := ps["w1:p2"], ps[reviewerPane]
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	// Turns of a second or two, as a real model's: "handled" must wait
	// for the end of Codex's turn, the notice for Claude Code's.
	cl.tap.SetDelay(answerDelay)
	cx.tap.SetDelay(answerDelay)
	begin := time.Now()
	if _, err := srv.Client().AgentPrompt(ctx, schema.AgentPromptParams{Target: "brain", Text: "Ask the reviewer to look at the parser."}); err != nil {
		t.Fatal(err)
	}
	// The request's id, from the send's result Claude Code gave its model.
	var id, delivery string
	if !waitUntil(ctx, 60*time.Second, func() bool {
		for _, q := range cl.fake.Requests() {
			for _, r := range q.Results {
				var out struct {
					ID       string `json:"id"`
					Delivery string `json:"delivery"`
				}
				if r.Action == "send" && json.Unmarshal([]byte(r.Text), &out) == nil && out.ID != "" {
					id, delivery = out.ID, out.Delivery
					return true
				}
			}
		}
		return false
	}) {
		dump(t, srv, begin, cl, cx)
		t.Fatalf("Claude Code's model never got a send result; fake errors %v", cl.fake.Errors())
	}
	sentAt := time.Now()
	t.Logf("Claude Code sent %s (delivery %q)", id, delivery)
	if err := cx.tap.Wait(ctx, func(ts []tui.Turn) bool {
		in := turnsWith(ts, id)
		return len(in) > 0 && !ts[in[0]].End.IsZero()
	}); err != nil {
		dump(t, srv, begin, cl, cx)
		t.Fatalf("the request never reached Codex's model: %v", err)
	}
	handledAt := cx.tap.Turns()[turnsWith(cx.tap.Turns(), id)[0]].End
	nctx, ncancel := context.WithTimeout(ctx, 15*time.Second)
	defer ncancel()
	err := cl.tap.Wait(nctx, func(ts []tui.Turn) bool {
		in := turnsWith(ts, `"notice":"handled"`)
		return len(in) > 0 && !ts[in[0]].End.IsZero()
	})
	if err != nil {
		dump(t, srv, begin, cl, cx)
		t.Fatalf("no notice turn in Claude Code %v after Codex's turn ended: %v", time.Since(handledAt).Round(time.Millisecond), err)
	}
	ts := cl.tap.Turns()
	in := turnsWith(ts, `"notice":"handled"`)
	n := ts[in[0]]
	var bad []string
	ns := link.ExtractNotices(strings.Join(n.New, ""))
	if len(ns) != 1 || ns[0].About != id || ns[0].Peer != "reviewer" || ns[0].Notice != "handled" {
		bad = append(bad, fmt.Sprintf("the notice turn holds %+v, want one handled notice about %s from reviewer", ns, id))
	}
	if len(in) != 1 {
		bad = append(bad, fmt.Sprintf("notice in turns %v, want one", in))
	}
	if !slicesAny(cl.fake.Requests(), func(q fakemodel.Request) bool { return q.Main && strings.Contains(q.LastUser, `"about":"`+id+`"`) }) {
		bad = append(bad, "the fake model's log has no request whose last user message holds the notice")
	}
	t.Logf("notice turn's input: %q", n.New)
	t.Logf("notice turn started %v after Codex's turn ended (%v after the send)", n.Start.Sub(handledAt).Round(time.Millisecond), n.Start.Sub(sentAt).Round(time.Millisecond))
	if len(bad) > 0 {
		dump(t, srv, begin, cl, cx)
		t.Fatal(strings.Join(bad, "; "))
	}
}
