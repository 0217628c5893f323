package sockettest_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// fakeProgram is a Program without a terminal: it records what it is
// sent and lets the test set its modes and end it.
type fakeProgram struct {
	mu        sync.Mutex
	bracketed bool
	enter     string
	full      bool
	got       []string
	env       []string
	spec      sockettest.CommandSpec
	exited    chan struct{}
	exitOnce  sync.Once
	closed    int
}

func (f *fakeProgram) BracketedPaste() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.bracketed }
func (f *fakeProgram) Enter() string        { f.mu.Lock(); defer f.mu.Unlock(); return f.enter }
func (f *fakeProgram) Accepts(n int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.full {
		return errors.New("no available capacity")
	}
	return nil
}
func (f *fakeProgram) Send(b []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, string(b))
	return nil
}
func (f *fakeProgram) Screen(recent, ansi bool) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return "screen of " + strings.Join(f.spec.Argv, " ") + map[bool]string{true: " (recent)", false: ""}[recent]
}
func (f *fakeProgram) Exited() <-chan struct{} { return f.exited }
func (f *fakeProgram) exit()                   { f.exitOnce.Do(func() { close(f.exited) }) }
func (f *fakeProgram) Close() error {
	f.mu.Lock()
	f.closed++
	f.mu.Unlock()
	f.exit()
	return nil
}
func (f *fakeProgram) sent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.got...)
}
func (f *fakeProgram) closes() int { f.mu.Lock(); defer f.mu.Unlock(); return f.closed }

// programWorld has a claude agent "reviewer" in w1:p1 running a command,
// and a shell.
const programWorld = `{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[
  {"id":"w1:p1","cwd":"/nonexistent","agent":{"kind":"claude","name":"reviewer","status":"idle"},
   "command":{"argv":["tui","--flag"],"env":["A=1"],"rows":10,"cols":40}},
  {"id":"w1:p2"}]}]}]}`

func startPrograms(t *testing.T) (*sockettest.Server, *fakeProgram) {
	t.Helper()
	w, err := sockettest.ParseWorld([]byte(programWorld))
	if err != nil {
		t.Fatal(err)
	}
	prog := &fakeProgram{enter: "\r", exited: make(chan struct{})}
	srv := simtest.New(t, w, sockettest.InMemory, func(s *sockettest.Server) {
		s.SubmitDelay = 20 * time.Millisecond
		s.Programs = func(spec sockettest.CommandSpec, env []string) (sockettest.Program, error) {
			prog.mu.Lock()
			prog.spec, prog.env = spec, env
			prog.mu.Unlock()
			return prog, nil
		}
	})
	return srv, prog
}

func waitProg(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestProgramSeam: a pane program gets exactly what Herdr writes, in its
// own modes, and replaces the modelled receiving end (no submissions).
func TestProgramSeam(t *testing.T) { synctest.Test(t, testProgramSeam) }

func testProgramSeam(t *testing.T) {
	srv, prog := startPrograms(t)
	ctx := t.Context()
	if srv.Program("w1:p1") != sockettest.Program(prog) || srv.Program("w1:p2") != nil {
		t.Fatal("Program lookup")
	}
	prog.mu.Lock()
	env, spec := strings.Join(prog.env, "\n"), prog.spec
	prog.mu.Unlock()
	for _, want := range []string{"TERM=xterm-256color", "HERDR_ENV=1", "HERDR_PANE_ID=w1:p1", "HERDR_SOCKET_PATH=" + srv.Path(), "A=1"} {
		if !strings.Contains(env, want+"\n") && !strings.HasSuffix(env, want) {
			t.Errorf("env lacks %s", want)
		}
	}
	if spec.Dir != "" || spec.Rows != 10 || spec.Cols != 40 {
		t.Errorf("spec dir %q, %dx%d; want \"\" (a missing cwd is not the directory), 10x40", spec.Dir, spec.Rows, spec.Cols)
	}
	for _, tc := range []struct {
		bracketed bool
		enter     string
		want      []string
	}{
		{false, "\r", []string{"one\ntwo", "\r"}},
		{true, "\x1b[13u", []string{"\x1b[200~one\ntwo\x1b[201~", "\x1b[13u"}},
	} {
		prog.mu.Lock()
		prog.bracketed, prog.enter, prog.got = tc.bracketed, tc.enter, nil
		prog.mu.Unlock()
		if _, err := srv.Client().AgentPrompt(ctx, schema.AgentPromptParams{Target: "reviewer", Text: "one\ntwo"}); err != nil {
			t.Fatal(err)
		}
		waitProg(t, "Enter", func() bool { return len(prog.sent()) == 2 })
		if got := prog.sent(); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("bracketed %v: program got %q, want %q", tc.bracketed, got, tc.want)
		}
	}
	if subs := srv.World.Submissions("w1:p1"); len(subs) != 0 {
		t.Errorf("the model still runs beside the program: submissions %q, want none", texts(subs))
	}
	r, err := srv.Client().PaneRead(ctx, schema.PaneReadParams{PaneID: "w1:p1", Source: schema.ReadSourceRecent})
	if err != nil || r.Text != "screen of tui --flag (recent)" {
		t.Errorf("pane.read %q %v", r.Text, err)
	}
	// A program that cannot take the text: agent_prompt_failed, nothing sent.
	prog.mu.Lock()
	prog.full, prog.got = true, nil
	prog.mu.Unlock()
	_, err = srv.Client().AgentPrompt(ctx, schema.AgentPromptParams{Target: "reviewer", Text: "lost?"})
	if socket.CodeOf(err) != "agent_prompt_failed" || len(prog.sent()) != 0 {
		t.Fatalf("prompt into a full program: %v, sent %q", err, prog.sent())
	}
	if err := srv.RunCommand("w1:p1", sockettest.CommandSpec{Argv: []string{"again"}}); err == nil {
		t.Error("a second program in one pane")
	}
}

// TestProgramExitAndClose: the program exiting is the agent leaving (its
// screen stays); pane.close closes it.
func TestProgramExitAndClose(t *testing.T) { synctest.Test(t, testProgramExitAndClose) }

func testProgramExitAndClose(t *testing.T) {
	srv, prog := startPrograms(t)
	ctx := t.Context()
	prog.exit()
	waitProg(t, "the agent to leave", func() bool { _, ok := srv.World.Agent("reviewer"); return !ok })
	if _, err := srv.Client().AgentPrompt(ctx, schema.AgentPromptParams{Target: "w1:p1", Text: "x"}); socket.CodeOf(err) != "agent_not_found" {
		t.Fatalf("prompt after exit: %v", err)
	}
	if r, err := srv.Client().PaneRead(ctx, schema.PaneReadParams{PaneID: "w1:p1", Source: schema.ReadSourceVisible}); err != nil || r.Text != "screen of tui --flag" {
		t.Fatalf("the last screen is gone: %q %v", r.Text, err)
	}
	if err := srv.Client().PaneClose(ctx, "w1:p1"); err != nil {
		t.Fatal(err)
	}
	waitProg(t, "Close", func() bool { return prog.closes() >= 1 })
}

// TestProgramNeedsStarter: a world with a command needs Server.Programs.
func TestProgramNeedsStarter(t *testing.T) {
	w, err := sockettest.ParseWorld([]byte(programWorld))
	if err != nil {
		t.Fatal(err)
	}
	srv := sockettest.NewUnstartedServer(w)
	if err := srv.StartAt(t.TempDir() + "/h.sock"); !errors.Is(err, sockettest.ErrNoPrograms) {
		t.Fatalf("StartAt = %v", err)
	}
	if _, err := sockettest.ParseWorld([]byte(strings.Replace(programWorld, `"argv":["tui","--flag"]`, `"argv":[]`, 1))); err == nil {
		t.Fatal("an empty argv accepted")
	}
}
