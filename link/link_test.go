package link_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

func TestMain(m *testing.M) { os.Exit(simtest.Main(m)) }

// The world of these tests. w1 holds brain (named), an unnamed pi, a
// shell, reviewer, a blocked agent, a custom hook label; w2 holds ops.
const world = `{"workspaces":[
 {"id":"w1","label":"app","tabs":[
  {"id":"w1:t1","panes":[
   {"id":"w1:p1","cwd":"/repo","agent":{"kind":"claude","name":"brain","status":"working"}},
   {"id":"w1:p2","agent":{"kind":"codex","name":"reviewer","status":"idle"}},
   {"id":"w1:p3","agent":{"kind":"pi","status":"idle"}},
   {"id":"w1:p4"},
   {"id":"w1:p5","agent":{"kind":"claude","name":"stuck","status":"blocked"}},
   {"id":"w1:p6","agent":{"kind":"hookbot","name":"hooked","status":"idle"}},
   {"id":"w1:p7","agent":{"kind":"claude","name":"flaky","status":"idle","prompt_fails":true}}
  ]},
  {"id":"w1:t2","panes":[{"id":"w1:p8","agent":{"kind":"opencode","name":"writer","status":"done"}}]}
 ]},
 {"id":"w2","label":"infra","tabs":[{"id":"w2:t1","panes":[
   {"id":"w2:p1","agent":{"kind":"claude","name":"ops","status":"idle"}},
   {"id":"w2:p2"}
 ]}]}]}`

type env struct {
	srv *sockettest.Server
	w   *sockettest.World
}

// setup serves the world above on an in-memory simulator (opts applied
// after [sockettest.InMemory]), so a test can run it inside a
// testing/synctest bubble where the clients' timeouts are on the fake
// clock.
func setup(t *testing.T, opts ...func(*sockettest.Server)) env {
	t.Helper()
	w, err := sockettest.ParseWorld([]byte(world))
	if err != nil {
		t.Fatal(err)
	}
	return env{srv: simtest.New(t, w, append([]func(*sockettest.Server){sockettest.InMemory}, opts...)...), w: w}
}

func (e env) link(pane string) *link.Link {
	c := e.srv.Client()
	c.Timeout = 500 * time.Millisecond
	return must(link.New(link.Config{Herdr: link.SocketHerdr{Client: c}, PaneID: pane, ReadinessDelay: 10 * time.Millisecond, CallTimeout: c.Timeout}))
}

// roundTrips returns the methods received since the last reset, pings
// (once per client) left out.
func (e env) roundTrips() []string {
	var out []string
	for _, m := range e.srv.Methods() {
		if m != "ping" {
			out = append(out, m)
		}
	}
	e.srv.ResetRequests()
	return out
}

func names(ps []link.Peer) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name+"/"+p.State)
	}
	return strings.Join(out, ",")
}

// deref reads an optional string for a failure message.
func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func code(err error) link.Code {
	var le *link.Error
	if errors.As(err, &le) {
		return le.Code
	}
	return ""
}

func TestPeers(t *testing.T) {
	e := setup(t)
	ctx := t.Context()
	l := e.link("w1:p1")
	res, err := l.Peers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Self.Name != "brain" || res.Self.State != "working" {
		t.Errorf("self = %s/%s, want brain/working", res.Self.Name, res.Self.State)
	}
	// Named agents of w1 only: not the unnamed pi, not the shell, not ops in w2.
	if got := names(res.Peers); got != "reviewer/idle,stuck/blocked,hooked/idle,flaky/idle,writer/done" {
		t.Errorf("peers = %s", got)
	}
	if rt := e.roundTrips(); strings.Join(rt, ",") != "agent.list" {
		t.Errorf("round trips %v, want one agent.list", rt)
	}
	// No peers: an empty list, not null.
	out, _ := jsonx.Marshal(mustPeers(t, e.link("w2:p1")))
	if !strings.Contains(string(out), `"peers":[]`) {
		t.Errorf("peers of ops: %s", out)
	}
}

func mustPeers(t *testing.T, l *link.Link) link.PeersResult {
	t.Helper()
	r, err := l.Peers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSelfMovedAcrossWorkspaces(t *testing.T) {
	e := setup(t)
	ctx := t.Context()
	l := e.link("w1:p1") // HERDR_PANE_ID stays w1:p1 for the process's life
	newID, err := e.w.Move("w1:p1", "w2")
	if err != nil {
		t.Fatal(err)
	}
	e.roundTrips()
	res, err := l.Peers(ctx)
	if err != nil {
		t.Fatalf("peers after the move: %v", err)
	}
	if res.Self.Name != "brain" || names(res.Peers) != "ops/idle" {
		t.Fatalf("after moving to w2: self %s, peers %s; want brain, ops/idle", res.Self.Name, names(res.Peers))
	}
	if rt := strings.Join(e.roundTrips(), ","); rt != "agent.list,pane.get" {
		t.Errorf("round trips %s", rt)
	}
	// Send and close follow the live workspace too.
	if _, err := l.Send(ctx, link.SendRequest{To: "reviewer", Message: "hi"}); code(err) != link.PeerNotFound {
		t.Errorf("send to the old workspace: %v", err)
	}
	if _, err := l.Send(ctx, link.SendRequest{To: "ops", Message: "hi"}); err != nil {
		t.Errorf("send in the new workspace: %v", err)
	}
	// And back again: the live record wins both ways.
	if _, err := e.w.Move(newID, "w1"); err != nil {
		t.Fatal(err)
	}
	res, err = l.Peers(ctx)
	if err != nil || !strings.Contains(names(res.Peers), "reviewer") || strings.Contains(names(res.Peers), "ops") {
		t.Fatalf("after moving back: peers %s, %v; want reviewer and not ops", names(res.Peers), err)
	}
}

func TestClose(t *testing.T) {
	e := setup(t)
	ctx := t.Context()
	// The caller needs no name: a plain shell pane can close peers.
	shell := e.link("w1:p4")
	e.roundTrips()
	res, err := shell.Close(ctx, "reviewer")
	if err != nil {
		t.Fatalf("close: %v", err)
	}
	if diff := cmp.Diff(link.CloseResult{Status: "closed", Agent: "reviewer"}, res); diff != "" {
		t.Fatalf("close mismatch (-want +got):\n%s", diff)
	}
	if rt := strings.Join(e.roundTrips(), ","); rt != "agent.list,pane.get,pane.close" {
		t.Errorf("round trips from a shell %s", rt)
	}
	if _, ok := e.w.Agent("reviewer"); ok {
		t.Fatal("reviewer still there")
	}
	// A named caller: two round trips; the live pane id is closed even
	// after the target moved within the workspace.
	if _, err := e.w.Move("w1:p8", "w1"); err != nil {
		t.Fatal(err)
	}
	brain := e.link("w1:p1")
	if _, err := brain.Close(ctx, "writer"); err != nil {
		t.Fatal(err)
	}
	if rt := strings.Join(e.roundTrips(), ","); rt != "agent.list,pane.close" {
		t.Errorf("round trips %s", rt)
	}
	// Herdr refusing: CLOSE_FAILED.
	e.srv.SetFault(schema.MethodPaneClose, sockettest.Fault{Error: &schema.ErrorBody{Code: "confirmation_required", Message: "closing this pane would close a worktree group"}})
	if _, err := brain.Close(ctx, "stuck"); code(err) != link.CloseFailed || err.Error() != "CLOSE_FAILED: Herdr did not close the agent's pane" {
		t.Errorf("refused close: %v", err)
	}
}

func TestTransportFailures(t *testing.T) {
	ctx := context.Background()
	ops := []struct {
		name   string
		method string
		run    func(l *link.Link) error
	}{
		{"peers/list", schema.MethodAgentList, func(l *link.Link) error { _, err := l.Peers(ctx); return err }},
		{"send/list", schema.MethodAgentList, func(l *link.Link) error {
			_, err := l.Send(ctx, link.SendRequest{To: "reviewer", Message: "x"})
			return err
		}},
		{"send/prompt", schema.MethodAgentPrompt, func(l *link.Link) error {
			_, err := l.Send(ctx, link.SendRequest{To: "reviewer", Message: "x"})
			return err
		}},
		{"close/list", schema.MethodAgentList, func(l *link.Link) error { _, err := l.Close(ctx, "reviewer"); return err }},
		{"close/close", schema.MethodPaneClose, func(l *link.Link) error { _, err := l.Close(ctx, "reviewer"); return err }},
	}
	faults := map[string]sockettest.Fault{
		"hang":    {Hang: true},
		"drop":    {DropBeforeResponse: true},
		"mid":     {DropMidResponse: true},
		"garbage": {Garbage: true},
		"wrongid": {WrongID: true},
	}
	for _, op := range ops {
		for fname, f := range faults {
			t.Run(op.name+"/"+fname, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					e := setup(t) // a lost reply still has its side effects
					e.srv.SetFault(op.method, f)
					start := time.Now()
					err := op.run(e.link("w1:p1"))
					// After the prompt or close request was written, the
					// outcome is unknown: never NOT_IN_HERDR, which would
					// invite a resend.
					want, detail := link.NotInHerdr, ""
					switch op.method {
					case schema.MethodAgentPrompt:
						want, detail = link.SendFailed, "SEND_FAILED: Herdr's answer was lost after the message was handed over: it may have been delivered; do not resend blindly"
					case schema.MethodPaneClose:
						want, detail = link.CloseFailed, "CLOSE_FAILED: Herdr's answer was lost after the close was requested: the pane may have been closed; check herdr_link_peers before retrying"
					}
					if code(err) != want || (detail != "" && err.Error() != detail) {
						t.Fatalf("err = %v, want %s", err, want)
					}
					// On the bubble's clock: a hang ends at the client's
					// timeout, the other faults at once.
					if el := time.Since(start); el > 2*time.Second {
						t.Fatalf("took %v", el)
					}
				})
			})
		}
	}
	// No server at all.
	l := mustLink(t, link.Config{Herdr: link.SocketHerdr{Client: &socket.Client{Path: "/nonexistent/herdr.sock"}}, PaneID: "w1:p1"})
	if _, err := l.Peers(ctx); code(err) != link.NotInHerdr || !errors.Is(err, socket.ErrUnavailable) {
		t.Fatalf("no server: %v", err)
	}
	// The caller's pane unknown to Herdr.
	e := setup(t)
	if _, err := e.link("w9:p9").Peers(ctx); code(err) != link.NotInHerdr {
		t.Fatalf("unknown pane: %v", err)
	}
}

func TestGate(t *testing.T) {
	tests := []struct {
		env map[string]string
		ok  bool
	}{
		{map[string]string{"HERDR_ENV": "1", "HERDR_PANE_ID": "w1:p1", "HERDR_SOCKET_PATH": "/s"}, true},
		{map[string]string{"HERDR_ENV": "1", "HERDR_PANE_ID": "w1:p1", "HOME": "/h"}, true},
		{map[string]string{"HERDR_PANE_ID": "w1:p1", "HERDR_SOCKET_PATH": "/s"}, false},
		{map[string]string{"HERDR_ENV": "0", "HERDR_PANE_ID": "w1:p1", "HERDR_SOCKET_PATH": "/s"}, false},
		{map[string]string{"HERDR_ENV": "1", "HERDR_SOCKET_PATH": "/s"}, false},
	}
	for _, tt := range tests {
		g := link.CheckGate(func(k string) string { return tt.env[k] })
		if g.OK != tt.ok {
			t.Errorf("%v: gate OK %v (failed %q: %s), want %v", tt.env, g.OK, g.Failed, g.Reason, tt.ok)
		}
	}
}
