package board

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/internal/panelock"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// t0 is the board's clock in these tests.
var t0 = time.Date(2026, 12, 3, 16, 0, 0, 0, time.UTC)

// boardWorld is a workspace w1 with brain (idle), reviewer (working) and
// tester (blocked), and a workspace w2 with an agent the board started
// from w1 must never show.
const boardWorld = `{"workspaces":[
 {"id":"w1","tabs":[{"id":"w1:t1","panes":[
  {"agent":{"kind":"claude","name":"brain","status":"idle"}},
  {"agent":{"kind":"codex","name":"reviewer","status":"working"}},
  {"agent":{"kind":"claude","name":"tester","status":"blocked"}}]}]},
 {"id":"w2","tabs":[{"id":"w2:t1","panes":[
  {"agent":{"kind":"claude","name":"secret-agent","status":"idle"}}]}]}]}`

// boardFixture is the simulator of boardWorld and an outbox holding, for
// w1: a message brain → reviewer held 2 minutes, a request brain → tester
// open for 5 minutes, a notice for brain about a request reviewer did
// not answer, an answered request and a message ended untyped; for w2, a
// held message.
type boardFixture struct {
	w     *sockettest.World
	srv   *sockettest.Server
	st    *outbox.Store
	src   Source
	held  outbox.Message
	panes map[string]string
}

func newBoardFixture(t *testing.T) boardFixture {
	t.Helper()
	w, err := sockettest.ParseWorld([]byte(boardWorld))
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w)
	h := link.NewSocketHerdr(&socket.Client{Path: srv.Path(), Timeout: 2 * time.Second})
	agents, err := h.ListAgents(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	panes := map[string]string{}
	for _, a := range agents {
		panes[a.Name] = a.PaneID
	}
	st, err := outbox.Open(t.TempDir(), "scope")
	if err != nil {
		t.Fatal(err)
	}
	msg := func(id, from, to, ws string, notice bool) outbox.Message {
		return outbox.Message{ID: id, From: from, To: to, TargetKey: "pane:" + panes[to], FromKey: "pane:" + panes[from],
			PaneID: panes[to], WorkspaceID: ws, FromPane: panes[from], Text: "x", Notice: notice, Expires: t0.Add(time.Hour)}
	}
	add := func(m outbox.Message, at time.Time) outbox.Message {
		t.Helper()
		m, err := st.Add(m, at)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	held := add(msg("hl_held1", "brain", "reviewer", "w1", false), t0.Add(-2*time.Minute))
	add(msg("n_notice1", "reviewer", "brain", "w1", true), t0.Add(-10*time.Second))
	add(msg("hl_w2held", "secret-agent", "secret-agent", "w2", false), t0.Add(-time.Minute))
	ended := add(msg("hl_ended1", "tester", "reviewer", "w1", false), t0.Add(-4*time.Minute))
	if err := st.End(ended, outbox.EndExpired, t0.Add(-3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	req := func(id, from, to string, at time.Time) outbox.Request {
		t.Helper()
		r, err := st.AddRequest(outbox.Request{ID: id, From: from, To: to, TargetKey: "pane:" + panes[to], FromKey: "pane:" + panes[from],
			PaneID: panes[to], WorkspaceID: "w1", FromPane: panes[from], Expires: t0.Add(time.Hour)}, at)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	req("hl_req1", "brain", "tester", t0.Add(-5*time.Minute))
	done := req("hl_req2", "reviewer", "brain", t0.Add(-6*time.Minute))
	if _, _, err := st.EndRequest(done.Entry(), outbox.OutcomeReplied, t0.Add(-time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	src := Source{Agents: h.ListAgents, Store: st, Workspace: "w1", Now: func() time.Time { return t0 }}
	return boardFixture{w: w, srv: srv, st: st, src: src, held: held, panes: panes}
}

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s: got\n%s\nwant\n%s", name, got, want)
	}
}

// The -once view of a workspace on the simulator: its agents and their
// states, the held message with why it waits, the open request, the
// notice, and the recent outcomes; nothing of the other workspace.
func TestOnceView(t *testing.T) {
	f := newBoardFixture(t)
	snap := f.src.Collect(t.Context())
	got := ansi.Strip(Render(snap, UI{Selected: -1}, 0))
	golden(t, "once.golden", got)
	if strings.Contains(got, "secret") || strings.Contains(got, "w1") || strings.Contains(got, "w2") {
		t.Errorf("the view shows another workspace's agent or an id:\n%s", got)
	}
}

// Every workspace shows outside Herdr; one workspace shows when started
// from a pane, found through HERDR_WORKSPACE_ID, the plugin context or
// the pane; a pane Herdr does not know is an error, not every workspace.
func TestWorkspaceOfThePane(t *testing.T) {
	f := newBoardFixture(t)
	h := link.NewSocketHerdr(&socket.Client{Path: f.srv.Path(), Timeout: 2 * time.Second})
	for _, c := range []struct {
		name    string
		env     map[string]string
		want    string
		wantErr bool
	}{
		{"outside Herdr", nil, "", false},
		{"workspace id", map[string]string{"HERDR_ENV": "1", "HERDR_WORKSPACE_ID": "w2"}, "w2", false},
		{"plugin context", map[string]string{"HERDR_ENV": "1", "HERDR_PLUGIN_CONTEXT_JSON": `{"workspace_id":"w1"}`}, "w1", false},
		{"pane", map[string]string{"HERDR_ENV": "1", "HERDR_PANE_ID": f.panes["secret-agent"]}, "w2", false},
		{"unknown pane", map[string]string{"HERDR_ENV": "1", "HERDR_PANE_ID": "w9:p9"}, "", true},
		{"in Herdr, no pane", map[string]string{"HERDR_ENV": "1"}, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := workspace(func(k string) string { return c.env[k] }, h)
			if (err != nil) != c.wantErr || got != c.want {
				t.Errorf("workspace: got %q, %v; want %q, error %v", got, err, c.want, c.wantErr)
			}
		})
	}
}

// Keys: ↓ selects, c asks, n keeps the message, c then y cancels it
// (under its target's lock), never typing anything; q quits.
func TestKeysCancelHeldMessage(t *testing.T) {
	f := newBoardFixture(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	pl := &panelock.Locker{Scope: f.srv.Path(), Dir: dir}
	m := newModel(f.src, pl, nil)
	m.snap = f.src.Collect(t.Context())
	m.clamp()
	press := func(k string) (model, func() any) {
		t.Helper()
		next, cmd := m.key(k)
		m = next.(model)
		if cmd == nil {
			return m, nil
		}
		return m, func() any { return cmd() }
	}
	if m.ui.Selected != 0 || m.snap.Held[0].ID != f.held.ID {
		t.Fatalf("selected %d, first held %s; want 0, the first held message %s", m.ui.Selected, m.snap.Held[0].ID, f.held.ID)
	}
	press("c")
	if !strings.Contains(m.ui.Confirm, "brain → reviewer") {
		t.Fatalf("question %q, want one naming brain → reviewer", m.ui.Confirm)
	}
	press("n")
	if _, err := f.st.Find(f.held.ID); err != nil || m.ui.Confirm != "" {
		t.Fatalf("after n: %v, question %q; want the message still held, no question", err, m.ui.Confirm)
	}
	press("c")
	_, run := press("y")
	if run == nil {
		t.Fatal("y started no cancellation")
	}
	if got := run(); got != cancelledMsg("cancelled") {
		t.Errorf("cancellation: %v", got)
	}
	e, err := f.st.Find(f.held.ID)
	if err != nil || e.State != outbox.StateEnded {
		t.Fatalf("message after cancel: state %c, %v; want it ended (%c)", e.State, err, outbox.StateEnded)
	}
	if got, _ := f.st.Read(e); got.End != outbox.EndCancelled {
		t.Errorf("ended %q, want %q", got.End, outbox.EndCancelled)
	}
	if err := Cancel(f.st, pl, f.held.ID, time.Second, t0); !errors.Is(err, ErrNotHeld) {
		t.Errorf("second cancel: %v, want %v", err, ErrNotHeld)
	}
	if p := f.w.Prompts(f.panes["reviewer"]); len(p) != 0 {
		t.Errorf("the board typed %d prompts", len(p))
	}
	if _, cmd := m.key("q"); cmd == nil {
		t.Errorf("q does not quit")
	}
}
