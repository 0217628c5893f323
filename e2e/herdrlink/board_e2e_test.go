//go:build unix

package herdrlink

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/e2e/internal/bins"
	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/internal/panelock"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/program"
	"github.com/herdr-link/herdr-link/socket/sockettest/ptypane"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// boardCapture, when set (HERDR_BOARD_CAPTURE=file), is where the board
// test writes the screen it saw: docs/board.md shows it.
var boardCapture = os.Getenv("HERDR_BOARD_CAPTURE")

// The board (herdr-board, in a terminal) shows, on the simulator, what
// herdr-link processes did: brain's request to the working reviewer is
// held and open; its request to tester ended when tester's pane closed,
// and the notice that tells brain (working) is held for it. It shows
// nothing of another workspace; c then y cancels the selected held
// message, which is then never typed; q quits. -once prints the same.
func TestBoardShowsTheConversation(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	w, srv, st, toReviewer := boardConversation(t)
	bin, err := bins.Path("herdr-board")
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), srv.Env(pane(t, w, "brain"))...)
	p, err := ptypane.StartPane(program.Spec{Argv: []string{bin}, Rows: 28, Cols: 96}, env)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	shows := func(s string) bool {
		return strings.Contains(s, "brain → reviewer") && strings.Contains(s, "brain awaits reviewer") &&
			strings.Contains(s, "notice") && strings.Contains(s, "request gone")
	}
	if err := p.WaitScreen(ctx, shows); err != nil {
		t.Fatalf("board: %v; screen:\n%s", err, p.Screen(false, false))
	}
	screen := p.Screen(false, false)
	if strings.Contains(screen, "secret") {
		t.Errorf("the board shows another workspace:\n%s", screen)
	}
	if boardCapture != "" {
		if err := os.WriteFile(boardCapture, []byte(trimScreen(screen)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "-once")
	cmd.Env = env
	if out, err := cmd.Output(); err != nil || !shows(string(out)) || strings.Contains(string(out), "\x1b") {
		t.Errorf("-once: %v, want the same view without escapes:\n%q", err, out)
	}
	cancelAndQuit(t, ctx, p, st, toReviewer)
	if got := w.Prompts(pane(t, w, "reviewer")); len(got) != 0 {
		t.Errorf("reviewer got %d prompts, want none (the board types nothing; the message was cancelled)", len(got))
	}
}

// systemStore is the outbox of srv where a herdr-link of the system's
// rules keeps it (the board follows those rules), removed when t ends.
func systemStore(t *testing.T, srv *sockettest.Server) *outbox.Store {
	t.Helper()
	pl := &panelock.Locker{Scope: srv.Path()}
	dir, err := pl.DirPath()
	if err != nil {
		t.Skipf("no private lock directory here: %v", err)
	}
	st, err := outbox.Open(dir, pl.ScopeID())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(st.Dir) })
	return st
}

// noticeHeld reports whether st holds a notice.
func noticeHeld(st *outbox.Store) bool {
	ents, _ := st.List()
	for _, e := range ents {
		if e.Held() && strings.HasPrefix(e.ID, "n_") {
			return true
		}
	}
	return false
}

// trimScreen drops trailing blanks of a screen's lines and its trailing
// empty lines.
func trimScreen(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n") + "\n"
}

// boardConversation is the simulator and outbox of the board test: brain
// (then working) has a request held for the working reviewer, and a
// notice held for it about its request to tester, whose pane closed.
func boardConversation(t *testing.T) (*sockettest.World, *sockettest.Server, *outbox.Store, string) {
	t.Helper()
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[
	 {"id":"w1","tabs":[{"id":"w1:t1","panes":[
	  {"agent":{"kind":"claude","name":"brain","status":"idle"}},
	  {"agent":{"kind":"codex","name":"reviewer","status":"working"}},
	  {"agent":{"kind":"claude","name":"tester","status":"working"}}]}]},
	 {"id":"w2","tabs":[{"id":"w2:t1","panes":[{"agent":{"kind":"claude","name":"secret-agent","status":"working"}}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = deliveryEnterDelay })
	st := systemStore(t, srv)
	brain := reqSession(t, srv, w, "brain")
	toReviewer, d := request(t, brain, "reviewer", "please review the parser")
	if d != "held" {
		t.Fatalf("request to reviewer: %s, want held", d)
	}
	if _, d := request(t, brain, "tester", "run the tests"); d != "held" {
		t.Fatalf("request to tester: %s, want held", d)
	}
	if err := w.SetStatus(pane(t, w, "brain"), "working"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(pane(t, w, "tester")); err != nil {
		t.Fatal(err)
	}
	if !until(hangBound, func() bool { return noticeHeld(st) }) {
		t.Fatal("no notice held for brain after tester's pane closed")
	}
	return w, srv, st, toReviewer
}

// cancelAndQuit cancels the selected (first) held message of the board
// in p, id, with c then y, and quits with q.
func cancelAndQuit(t *testing.T, ctx context.Context, p *ptypane.Pane, st *outbox.Store, toReviewer string) {
	t.Helper()
	if err := p.Send([]byte("c")); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitScreen(ctx, func(s string) bool { return strings.Contains(s, "Cancel the message brain → reviewer") }); err != nil {
		t.Fatalf("no question: %v\n%s", err, p.Screen(false, false))
	}
	if err := p.Send([]byte("y")); err != nil {
		t.Fatal(err)
	}
	if !until(hangBound, func() bool { e, err := st.Find(toReviewer); return err == nil && e.State == outbox.StateEnded }) {
		t.Errorf("the message to reviewer was not cancelled; screen:\n%s", p.Screen(false, false))
	}
	if err := p.Send([]byte("q")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Exited():
	case <-ctx.Done():
		t.Errorf("q did not end the board")
	}
}
