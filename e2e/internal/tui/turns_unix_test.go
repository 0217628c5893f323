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
	ctx, cancel := context.WithCancel(t.Context())
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
		t.Fatalf("%s: warm-up turn: %v, want a finished main turn with %q; turns:%s\nscreen:\n%s", p.h, err, warm, turnLines(p.tap.Turns()), p.pane.Screen(false, false))
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
