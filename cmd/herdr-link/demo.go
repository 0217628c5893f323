package main

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
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// demoWorld: two agents to talk and a third that messages the reviewer at
// the same time as brain, an unnamed one and a shell beside them, and an
// agent in another workspace that they must not see. brain is busy in a
// turn that ends after 2 s: a reply to it is queued until then.
const demoWorld = `{"workspaces":[
 {"id":"w1","label":"shop","tabs":[{"id":"w1:t1","panes":[
   {"id":"w1:p1","cwd":"/home/dev/shop","agent":{"kind":"claude","name":"brain","status":"working","turn_ends_ms":2000,"turn_ms":200}},
   {"id":"w1:p2","cwd":"/home/dev/shop","agent":{"kind":"codex","name":"reviewer","status":"idle","turn_ms":150}},
   {"id":"w1:p3","cwd":"/home/dev/shop","agent":{"kind":"pi","status":"idle"}},
   {"id":"w1:p4","cwd":"/home/dev/shop"},
   {"id":"w1:p5","cwd":"/home/dev/shop","agent":{"kind":"opencode","name":"tester","status":"idle"}}
 ]}]},
 {"id":"w2","label":"infra","tabs":[{"id":"w2:t1","panes":[
   {"id":"w2:p1","cwd":"/home/dev/infra","agent":{"kind":"claude","name":"ops","status":"idle"}}
 ]}]}]}`

type demoSession struct {
	name string
	c    *mcpclient.Client
	out  io.Writer
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

func demo(args []string, stdout, stderr io.Writer) int {
	fs := cliflag.New("herdr-link demo [flags]", "Runs two agents' herdr-link MCP servers against an embedded Herdr simulator and prints the transcript. It never touches a live Herdr.", stderr)
	worldFile := fs.String("world", "", "world file for the embedded simulator (default: a built-in two-agent world)")
	verbose := fs.Bool("v", false, "also print every JSON-RPC line")
	if code, done := cliflag.Parse(fs, args, stdout); done {
		return code
	}
	if err := runDemo(*worldFile, *verbose, stdout); err != nil {
		fmt.Fprintln(stderr, "herdr-link demo:", err)
		return 1
	}
	return 0
}

func runDemo(worldFile string, verbose bool, out io.Writer) error {
	var w *sockettest.World
	var err error
	if worldFile != "" {
		w, err = sockettest.LoadWorld(worldFile)
	} else {
		w, err = sockettest.ParseWorld([]byte(demoWorld))
	}
	if err != nil {
		return err
	}
	if _, ok := w.Agent("brain"); !ok {
		return errors.New("the world needs agents named brain and reviewer in one workspace")
	}
	// The demo never dials a live Herdr: it serves its own world.
	srv := sockettest.NewServer(w)
	srv.SubmitDelay = demoEnterDelay
	defer srv.Close()
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	brainPane, revPane := paneOf(w, "brain"), paneOf(w, "reviewer")
	if revPane == "" {
		return errors.New("the world needs an agent named reviewer")
	}
	fmt.Fprintf(out, "herdr-link demo: two agents on an embedded Herdr simulator (Herdr %s, protocol %d)\n", srv.Version, srv.Protocol)
	fmt.Fprintln(out, "Each agent's host runs its own herdr-link MCP server over stdio, as Claude Code or Codex would.")
	fmt.Fprintln(out)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := func(name, pane string) (*demoSession, error) {
		env := append(os.Environ(), srv.Env(pane)...)
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
	brain, err := start("brain", brainPane)
	if err != nil {
		return err
	}
	defer brain.c.Close()
	reviewer, err := start("reviewer", revPane)
	if err != nil {
		return err
	}
	defer reviewer.c.Close()
	var tester *demoSession
	if p := paneOf(w, "tester"); p != "" {
		if tester, err = start("tester", p); err != nil {
			return err
		}
		defer tester.c.Close()
	}

	handshake := func(s *demoSession) error {
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
		return s.step("tools/list (active)", func() (string, error) { return listNames(ctx, s.c) })
	}
	if err := handshake(brain); err != nil {
		return err
	}
	if err := brain.step("herdr_link_peers", func() (string, error) {
		_, t, err := brain.tool(ctx, "herdr_link_peers", nil, false)
		return t, err
	}); err != nil {
		return err
	}
	if err := brain.step(`herdr_link_send to "ops" (other workspace)`, func() (string, error) {
		_, t, err := brain.tool(ctx, "herdr_link_send", map[string]any{"to": "ops", "message": "hello?"}, true)
		return t, err
	}); err != nil {
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
	// The reviewer's model got the wrapper as a turn of its own.
	turn, err := waitTurn(ctx, w, revPane, sent.ID)
	if err != nil {
		return err
	}
	env, _ := link.Extract(turn)
	fmt.Fprintln(out)
	fmt.Fprintln(out, "  The reviewer's model received this turn:")
	for _, l := range strings.Split(strings.TrimSpace(turn), "\n") {
		fmt.Fprintln(out, "  │ "+l)
	}
	fmt.Fprintln(out)
	if err := handshake(reviewer); err != nil {
		return err
	}
	if err := reviewer.step(fmt.Sprintf("herdr_link_send to %q, reply_to", env.From), func() (string, error) {
		_, t, err := reviewer.tool(ctx, "herdr_link_send", map[string]any{"to": env.From, "message": "No blockers. Two nits in cart.go, details in the PR.", "reply_to": env.ID}, false)
		return t, err
	}); err != nil {
		return err
	}
	fmt.Fprintln(out, "  (brain is in the middle of a turn: Claude Code queues the reply until that turn ends)")
	replyTurn, err := waitTurn(ctx, w, brainPane, "")
	if err != nil {
		return err
	}
	reply, _ := link.Extract(replyTurn)
	fmt.Fprintf(out, "\n  brain's model received a reply from %q with reply_to %s (matches: %v): %q\n\n", reply.From, reply.ReplyTo, reply.ReplyTo == sent.ID, reply.Message)
	if tester != nil {
		if err := twoAtOnce(ctx, out, w, revPane, brain, tester); err != nil {
			return err
		}
	}
	if err := brain.step(`herdr_link_close "reviewer"`, func() (string, error) {
		_, t, err := brain.tool(ctx, "herdr_link_close", map[string]any{"agent": "reviewer"}, false)
		return t, err
	}); err != nil {
		return err
	}
	if err := brain.step(`herdr_link {"action":"peers"} (gateway)`, func() (string, error) {
		_, t, err := brain.tool(ctx, "herdr_link", map[string]any{"action": "peers"}, false)
		return t, err
	}); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nDone: %d socket requests served by the simulator.\n", len(srv.Requests()))
	return nil
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

// twoAtOnce: brain and tester message the reviewer at the same moment.
// Without serialization Codex would glue both wrappers into one turn; the
// delivery lock gives each its own turn.
func twoAtOnce(ctx context.Context, out io.Writer, w *sockettest.World, revPane string, a, b *demoSession) error {
	if _, err := b.c.Initialize(ctx, "2025-06-18"); err != nil {
		return err
	}
	if _, _, err := b.tool(ctx, "herdr_link", nil, false); err != nil {
		return err
	}
	fmt.Fprintln(out, "  brain and tester message the reviewer at the same moment (two herdr-link processes):")
	before := len(w.Submissions(revPane))
	type res struct {
		s    *demoSession
		text string
		sent link.SendResult
		d    time.Duration
		err  error
	}
	results := make([]res, 2)
	done := make(chan struct{})
	for i, s := range []*demoSession{a, b} {
		go func() {
			defer func() { done <- struct{}{} }()
			start := time.Now()
			r, t, err := s.tool(ctx, "herdr_link_send", map[string]any{"to": "reviewer", "message": fmt.Sprintf("%s here: the checkout tests pass on my side.", s.name)}, false)
			results[i] = res{s: s, text: t, d: time.Since(start), err: err}
			if err == nil {
				results[i].err = jsonx.Unmarshal(r.StructuredContent, &results[i].sent)
			}
		}()
	}
	<-done
	<-done
	ids := map[string]string{}
	for _, r := range results {
		if r.err != nil {
			return r.err
		}
		fmt.Fprintf(out, "  %-9s %-44s %8.2f ms  %s\n", "["+r.s.name+"]", `herdr_link_send to "reviewer"`, float64(r.d.Microseconds())/1000, r.text)
		ids[r.sent.ID] = r.s.name
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(w.Submissions(revPane)) < before+2 && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	turns := w.Submissions(revPane)[before:]
	fmt.Fprintf(out, "  The reviewer's model received %d separate turns:\n", len(turns))
	for i, t := range turns {
		envs := link.ExtractAll(t.Text)
		var who []string
		for _, e := range envs {
			who = append(who, fmt.Sprintf("%s from %s", e.ID, ids[e.ID]))
		}
		fmt.Fprintf(out, "  │ turn %d: %d envelope(s): %s\n", i+1, len(envs), strings.Join(who, ", "))
	}
	if len(turns) != 2 {
		return fmt.Errorf("the reviewer received %d turns, want 2", len(turns))
	}
	fmt.Fprintln(out)
	return nil
}
