// Package demo is 'herdr-sim demo': the main job of herdr-link on an
// embedded simulator. Each agent's host is played by an MCP client that
// starts its own herdr-link process, as Claude Code or Codex would.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/cliflag"
	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/mcpclient"
	"github.com/herdr-link/herdr-link/internal/sibling"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// demoWorld: two agents to talk and a third that messages the reviewer at
// the same time as brain, an unnamed one and a shell beside them, and an
// agent in another workspace that they must not see. brain is busy in a
// turn that ends after 2 s: a reply to it is held until then.
const demoWorld = `{"workspaces":[
 {"id":"w1","label":"shop","tabs":[{"id":"w1:t1","panes":[
   {"id":"w1:p1","cwd":"/home/dev/shop","agent":{"kind":"claude","name":"brain","status":"working","turn_ends_ms":2000,"turn_ms":200}},
   {"id":"w1:p2","cwd":"/home/dev/shop","agent":{"kind":"codex","name":"reviewer","status":"idle","turn_ms":150}},
   {"id":"w1:p3","cwd":"/home/dev/shop","agent":{"kind":"pi","status":"idle"}},
   {"id":"w1:p4","cwd":"/home/dev/shop"}
 ]}]},
 {"id":"w2","label":"infra","tabs":[{"id":"w2:t1","panes":[
   {"id":"w2:p1","cwd":"/home/dev/infra","agent":{"kind":"claude","name":"ops","status":"idle"}}
 ]}]}]}`

type demoSession struct {
	name  string
	c     *mcpclient.Client
	out   io.Writer
	ready bool // initialized and activated
}

// step runs f, timing it, and prints one transcript line.
func (s *demoSession) step(what string, f func() (string, error)) error {
	start := time.Now()
	res, err := f()
	el := time.Since(start)
	if err != nil {
		fmt.Fprintf(s.out, "  %-9s %-44s FAILED: %v\n", "["+s.name+"]", what, err)
		return err
	}
	fmt.Fprintf(s.out, "  %-9s %-44s %8.2f ms  %s\n", "["+s.name+"]", what, float64(el.Microseconds())/1000, res)
	return nil
}

func (s *demoSession) tool(ctx context.Context, name string, args map[string]any, wantError bool) (mcpclient.ToolResult, string, error) {
	r, err := s.c.CallTool(ctx, name, args)
	if err != nil {
		return r, "", err
	}
	if r.IsError != wantError {
		return r, "", fmt.Errorf("unexpected result %q (isError %v)", r.Text(), r.IsError)
	}
	return r, r.Text(), nil
}

// Run is 'herdr-sim demo': it returns the exit code.
func Run(args []string, stdout, stderr io.Writer) int {
	fs := cliflag.New("herdr-sim demo [flags]", "Runs the herdr-link MCP servers of three agents (brain, reviewer, and tester, whom brain starts) against an embedded Herdr simulator and prints the transcript. It never touches a live Herdr.", stderr)
	worldFile := fs.String("world", "", "world file for the embedded simulator (default: a built-in two-agent world)")
	verbose := fs.Bool("v", false, "also print every JSON-RPC line")
	linkBin := fs.String("link", "", "the herdr-link binary the agents' hosts run (default: herdr-link beside herdr-sim, then on PATH)")
	if code, done := cliflag.Parse(fs, args, stdout); done {
		return code
	}
	exe, err := sibling.Find("herdr-link", "link", *linkBin)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-sim demo:", err)
		return 1
	}
	if err := runDemo(exe, *worldFile, *verbose, stdout); err != nil {
		fmt.Fprintln(stderr, "herdr-sim demo:", err)
		return 1
	}
	return 0
}

// demoRun is one run of the demo: the simulated Herdr and each agent's
// MCP session.
type demoRun struct {
	ctx                     context.Context
	out                     io.Writer
	w                       *sockettest.World
	srv                     *sockettest.Server
	brain, reviewer, tester *demoSession
	brainPane, reviewerPane string
	received                link.Envelope // what the reviewer got from brain
	exe                     string        // the herdr-link binary each session runs
}

func runDemo(exe, worldFile string, verbose bool, out io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := startDemo(ctx, exe, worldFile, verbose, out)
	if err != nil {
		return err
	}
	defer d.close()
	for _, step := range []func() error{
		func() error { return d.handshake(d.brain) },
		d.brainFindsAndSends,
		d.reviewerReplies,
		d.brainStartsTester,
		func() error {
			if d.tester == nil {
				return nil
			}
			return twoAtOnce(ctx, out, d.w, d.reviewerPane, d.brain, d.tester)
		},
		d.brainCloses,
	} {
		if err := step(); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "\nDone: %d socket requests served by the simulator.\n", len(d.srv.Requests()))
	return nil
}

// startDemo serves the world (the demo never dials a live Herdr) and starts
// each agent's herdr-link as a child process, as its host would.
func startDemo(ctx context.Context, exe, worldFile string, verbose bool, out io.Writer) (*demoRun, error) {
	var w *sockettest.World
	var err error
	if worldFile != "" {
		w, err = sockettest.LoadWorld(worldFile)
	} else {
		w, err = sockettest.ParseWorld([]byte(demoWorld))
	}
	if err != nil {
		return nil, err
	}
	d := &demoRun{ctx: ctx, out: out, w: w, brainPane: paneOf(w, "brain"), reviewerPane: paneOf(w, "reviewer"), exe: exe}
	if d.brainPane == "" || d.reviewerPane == "" {
		return nil, errors.New("the world needs agents named brain and reviewer in one workspace")
	}
	d.srv = sockettest.NewServer(w)
	d.srv.SubmitDelay = demoEnterDelay
	fmt.Fprintf(out, "herdr-sim demo: three agents on an embedded Herdr simulator (Herdr %s, protocol %d)\n", d.srv.Version, d.srv.Protocol)
	fmt.Fprintln(out, "Each agent's host runs its own herdr-link MCP server over stdio, as Claude Code or Codex would.")
	fmt.Fprintln(out)
	start := func(name, pane string) (*demoSession, error) {
		env := append(os.Environ(), d.srv.Env(pane)...)
		env = append(env, "HERDR_LINK_LOG=warn")
		c, err := mcpclient.Start(exe, []string{"serve", "-no-bootstrap", "-submit-hold", demoSubmitHold.String()}, env)
		if err != nil {
			return nil, err
		}
		if verbose {
			c.Trace = func(dir string, line []byte) { fmt.Fprintf(out, "      %s %s %s\n", name, dir, line) }
		}
		return &demoSession{name: name, c: c, out: out}, nil
	}
	if d.brain, err = start("brain", d.brainPane); err == nil {
		d.reviewer, err = start("reviewer", d.reviewerPane)
	}
	if p := paneOf(w, "tester"); p != "" && err == nil {
		d.tester, err = start("tester", p)
	}
	if err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

func (d *demoRun) close() {
	for _, s := range []*demoSession{d.brain, d.reviewer, d.tester} {
		if s != nil {
			s.c.Close()
		}
	}
	d.srv.Close()
}

// handshake: initialize, the dormant list, activation, the active list.
func (d *demoRun) handshake(s *demoSession) error {
	ctx := d.ctx
	if err := s.step("initialize", func() (string, error) {
		raw, err := s.c.Initialize(ctx, "2025-06-18")
		var r struct {
			ServerInfo struct{ Name, Version string } `json:"serverInfo"`
		}
		_ = jsonx.Unmarshal(raw, &r)
		return r.ServerInfo.Name + " " + r.ServerInfo.Version, err
	}); err != nil {
		return err
	}
	if err := s.step("tools/list (dormant)", func() (string, error) { return listNames(ctx, s.c) }); err != nil {
		return err
	}
	if err := s.step("herdr_link {} (activate)", func() (string, error) {
		r, _, err := s.tool(ctx, "herdr_link", nil, false)
		if err != nil {
			return "", err
		}
		first, _, _ := strings.Cut(r.Text(), "\n")
		return first + fmt.Sprintf("; %d list_changed", countListChanged(s.c)), nil
	}); err != nil {
		return err
	}
	s.ready = true
	return s.step("tools/list (active)", func() (string, error) { return listNames(ctx, s.c) })
}

// toolStep is one tool call of s shown as a step: its result text.
func (d *demoSession) toolStep(ctx context.Context, title, tool string, args map[string]any, wantError bool) error {
	return d.step(title, func() (string, error) {
		_, t, err := d.tool(ctx, tool, args, wantError)
		return t, err
	})
}

// brainFindsAndSends: peers, a send refused across workspaces, a send to
// the reviewer, and the turn the reviewer's model received.
func (d *demoRun) brainFindsAndSends() error {
	ctx, brain := d.ctx, d.brain
	if err := brain.toolStep(ctx, "herdr_link_peers", "herdr_link_peers", nil, false); err != nil {
		return err
	}
	if err := brain.toolStep(ctx, `herdr_link_send to "ops" (other workspace)`, "herdr_link_send", map[string]any{"to": "ops", "message": "hello?"}, true); err != nil {
		return err
	}
	var sent link.SendResult
	if err := brain.step(`herdr_link_send to "reviewer"`, func() (string, error) {
		r, t, err := brain.tool(ctx, "herdr_link_send", map[string]any{"to": "reviewer", "message": "Please review the checkout refactor on branch feat/checkout; reply with blockers only."}, false)
		if err == nil {
			err = jsonx.Unmarshal(r.StructuredContent, &sent)
		}
		return t, err
	}); err != nil {
		return err
	}
	turn, err := waitTurn(ctx, d.w, d.reviewerPane, sent.ID)
	if err != nil {
		return err
	}
	d.received, _ = link.Extract(turn)
	fmt.Fprintln(d.out)
	fmt.Fprintln(d.out, "  The reviewer's model received this turn:")
	for _, l := range strings.Split(strings.TrimSpace(turn), "\n") {
		fmt.Fprintln(d.out, "  │ "+l)
	}
	fmt.Fprintln(d.out)
	return nil
}

// reviewerReplies: the reviewer activates and answers with reply_to; brain,
// busy, gets the reply held until its turn ends.
func (d *demoRun) reviewerReplies() error {
	ctx, env := d.ctx, d.received
	if err := d.handshake(d.reviewer); err != nil {
		return err
	}
	if err := d.reviewer.toolStep(ctx, fmt.Sprintf("herdr_link_send to %q, reply_to", env.From), "herdr_link_send",
		map[string]any{"to": env.From, "message": "No blockers. Two nits in cart.go, details in the PR.", "reply_to": env.ID}, false); err != nil {
		return err
	}
	fmt.Fprintln(d.out, "  (brain is in the middle of a turn: herdr-link holds the reply and types it when that turn ends)")
	replyTurn, err := waitTurn(ctx, d.w, d.brainPane, "")
	if err != nil {
		return err
	}
	reply, _ := link.Extract(replyTurn)
	fmt.Fprintf(d.out, "\n  brain's model received a reply from %q with reply_to %s (matches: %v): %q\n\n", reply.From, reply.ReplyTo, reply.ReplyTo == env.ID, reply.Message)
	return nil
}

// brainCloses: close the reviewer, then the gateway's peers shows it gone.
func (d *demoRun) brainCloses() error {
	if err := d.brain.toolStep(d.ctx, `herdr_link_close "reviewer"`, "herdr_link_close", map[string]any{"agent": "reviewer"}, false); err != nil {
		return err
	}
	return d.brain.toolStep(d.ctx, `herdr_link {"action":"peers"} (gateway)`, "herdr_link", map[string]any{"action": "peers"}, false)
}

func paneOf(w *sockettest.World, name string) string {
	a, ok := w.Agent(name)
	if !ok {
		return ""
	}
	return a.PaneID
}

func listNames(ctx context.Context, c *mcpclient.Client) (string, error) {
	raw, err := c.Call(ctx, "tools/list", map[string]any{})
	if err != nil {
		return "", err
	}
	var r struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := jsonx.Unmarshal(raw, &r); err != nil {
		return "", err
	}
	var names []string
	for _, t := range r.Tools {
		names = append(names, t.Name)
	}
	return "[" + strings.Join(names, ", ") + "]", nil
}

func countListChanged(c *mcpclient.Client) int {
	n := 0
	for _, m := range c.Notifications() {
		if m.Method == "notifications/tools/list_changed" {
			n++
		}
	}
	return n
}

// The demo's simulator types Enter 20 ms after the text (Herdr: 300 ms);
// its servers keep a target's lock 60 ms at least (Herdr: 400 ms).
const (
	demoEnterDelay = 20 * time.Millisecond
	demoSubmitHold = 60 * time.Millisecond
)

// waitTurn waits until pane's agent received a turn holding a herdr-link/1
// envelope (with id, when given) and returns that turn's text.
func waitTurn(ctx context.Context, w *sockettest.World, pane, id string) (string, error) {
	for {
		for _, s := range w.Submissions(pane) {
			for _, e := range link.ExtractAll(s.Text) {
				if id == "" || e.ID == id {
					return s.Text, nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("no turn with a herdr-link/1 envelope arrived in the pane")
		case <-time.After(5 * time.Millisecond):
		}
	}
}
