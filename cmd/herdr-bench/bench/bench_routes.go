package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/mcpclient"
	"github.com/herdr-link/herdr-link/internal/panelock"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket"
)

const benchMessage = "benchmark message: please ignore"

func socketRoute(t *target) *route {
	c := &socket.Client{Path: t.path, Timeout: 30 * time.Second}
	// Both take the target's delivery lock, as herdr-link's server does.
	lock := link.FileLocks(&panelock.Locker{Scope: t.path})
	hold := time.Duration(0)
	if t.srv != nil {
		hold = benchSubmitHold
	}
	cfg := link.Config{Herdr: link.NewSocketHerdr(c), PaneID: t.pane, Locker: lock, SubmitHold: hold}
	l, err := link.New(cfg)
	cfg.Delivery = link.DeliveryConfirm
	lc, cerr := link.New(cfg)
	if err = errors.Join(err, cerr); err != nil {
		return &route{name: "socket", run: func(context.Context, string) error { return err }}
	}
	next := t.rotation()
	return &route{name: "socket", run: func(ctx context.Context, op string) error {
		var err error
		switch op {
		case opPeers:
			_, err = l.Peers(ctx)
		case opSend:
			_, err = l.Send(ctx, link.SendRequest{To: next(), Message: benchMessage, When: link.WhenNow})
		default:
			var r link.SendResult
			r, err = lc.Send(ctx, link.SendRequest{To: next(), Message: benchMessage, When: link.WhenNow})
			if err == nil && r.Delivery == link.DeliveryUnconfirmed && t.srv != nil {
				err = errors.New("delivery unconfirmed: the simulated target did not start a turn")
			}
		}
		return err
	}, close: func() {}}
}

// cliRoute does what the reference implementation does: run the herdr CLI
// for each step (each run pings, then sends its request).
func cliRoute(t *target) (*route, error) {
	if t.cli == "" {
		return nil, errors.New("no herdr CLI for the cli route: build herdr-sim beside herdr-bench (just build, or go build -o bin/ ./cmd/...), or pass --herdr")
	}
	env := t.env()
	runCLI := func(ctx context.Context, args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, t.cli, args...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return nil, fmt.Errorf("%s %s: %v: %s", filepath.Base(t.cli), strings.Join(args, " "), err, ee.Stderr)
			}
			return nil, err
		}
		return out, nil
	}
	agent := func(b []byte) (link.Agent, error) {
		var r struct {
			Result struct{ Agent link.Agent } `json:"result"`
		}
		return r.Result.Agent, jsonx.Unmarshal(b, &r)
	}
	next := t.rotation()
	return &route{name: "cli", run: func(ctx context.Context, op string) error {
		out, err := runCLI(ctx, "agent", "get", t.pane)
		if err != nil {
			return err
		}
		self, err := agent(out)
		if err != nil {
			return err
		}
		if op == "peers" {
			out, err = runCLI(ctx, "agent", "list")
			if err != nil {
				return err
			}
			var r struct {
				Result struct{ Agents []link.Agent } `json:"result"`
			}
			if err := jsonx.Unmarshal(out, &r); err != nil {
				return err
			}
			n := 0
			for _, a := range r.Result.Agents {
				if a.WorkspaceID == self.WorkspaceID && a.PaneID != self.PaneID && link.ValidName(a.Name) {
					n++
				}
			}
			_ = n
			return nil
		}
		to := next()
		out, err = runCLI(ctx, "agent", "get", to)
		if err != nil {
			return err
		}
		peer, err := agent(out)
		if err != nil || peer.WorkspaceID != self.WorkspaceID {
			return fmt.Errorf("peer not in workspace: %v", err)
		}
		text, _ := link.Wrap(link.Envelope{Protocol: link.Protocol, ID: link.NewMessageID(time.Now()), From: self.Name, To: to, Message: benchMessage})
		_, err = runCLI(ctx, "agent", "prompt", to, text)
		return err
	}, close: func() {}, skip: map[string]bool{opSendConfirm: true}}, nil
}

// mcpRoute runs a herdr-link server (the -mcp-alt build for "mcp:label")
// in the delivery mode of op, as an MCP host would.
func mcpRoute(t *target, name, op string) (*route, error) {
	mode := "fast"
	if op == opSendConfirm {
		mode = "confirm"
	}
	c, p, err := startMCP(t, t.mcpExe(name), mode)
	if err != nil {
		return nil, err
	}
	next := t.rotation()
	peers := toolCall{Name: "herdr_link_peers", Arguments: struct{}{}}
	return &route{name: name, proc: p, run: func(ctx context.Context, op string) error {
		p.calls.Add(1)
		call := peers
		if op != opPeers {
			call = toolCall{Name: "herdr_link_send", Arguments: sendArgs{To: next(), Message: benchMessage, When: "now"}}
		}
		// Like the floor's client, this one reads the answer line and
		// checks it without decoding the result: what a host does with a
		// result is the host's cost, not the server's. A JSON string never
		// holds a raw `"isError":true`.
		raw, err := c.Call(ctx, "tools/call", call)
		if err == nil && bytes.Contains(raw, isErrorTrue) {
			var r mcpclient.ToolResult
			_ = jsonx.Unmarshal(raw, &r)
			err = errors.New(r.Text())
		}
		return err
	}, close: func() { c.Close() }}, nil
}

var isErrorTrue = []byte(`"isError":true`)

type toolCall struct {
	Name      string `json:"name"`
	Arguments any    `json:"arguments"`
}

// sendArgs are a send's arguments. The routes send "now": typed at once,
// what a send is measured doing (herdr-bench hold measures when "idle").
type sendArgs struct {
	To      string `json:"to"`
	Message string `json:"message"`
	When    string `json:"when,omitempty"`
}
