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

// demoWorld: two agents to talk, an unnamed one and a shell beside them,
// and an agent in another workspace that they must not see.
const demoWorld = `{"workspaces":[
 {"id":"w1","label":"shop","tabs":[{"id":"w1:t1","panes":[
   {"id":"w1:p1","cwd":"/home/dev/shop","agent":{"kind":"claude","name":"brain","status":"working","bracketed_paste":true}},
   {"id":"w1:p2","cwd":"/home/dev/shop","agent":{"kind":"codex","name":"reviewer","status":"idle","bracketed_paste":true}},
   {"id":"w1:p3","cwd":"/home/dev/shop","agent":{"kind":"pi","status":"idle"}},
   {"id":"w1:p4","cwd":"/home/dev/shop"}
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
	srv.SubmitDelay = 20 * time.Millisecond
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
		c, err := mcpclient.Start(exe, []string{"serve", "-no-bootstrap"}, env)
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
	// The reviewer's pane now holds the wrapper; its host shows it to the model.
	env, err := waitEnvelope(ctx, w, revPane, sent.ID)
	if err != nil {
		return err
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, "  The reviewer's pane received:")
	for _, l := range strings.Split(strings.TrimSpace(w.Screen(revPane)), "\n") {
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
	reply, err := waitEnvelope(ctx, w, brainPane, "")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n  brain's pane received a reply from %q with reply_to %s (matches: %v): %q\n\n", reply.From, reply.ReplyTo, reply.ReplyTo == sent.ID, reply.Message)
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

// waitEnvelope waits until pane shows a herdr-link/1 envelope (with id,
// when given).
func waitEnvelope(ctx context.Context, w *sockettest.World, pane, id string) (link.Envelope, error) {
	for {
		if e, ok := link.Extract(w.Screen(pane)); ok && (id == "" || e.ID == id) {
			return e, nil
		}
		select {
		case <-ctx.Done():
			return link.Envelope{}, fmt.Errorf("no herdr-link/1 envelope arrived in the pane")
		case <-time.After(5 * time.Millisecond):
		}
	}
}
