//go:build unix

package ptypane_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/ptypane"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

const paneID = "w1:p1"

// helperWorld is one workspace: a claude agent "reviewer" in w1:p1
// running the helper in mode (nothing when mode is ""), and a plain shell.
func helperWorld(t *testing.T, mode string) *sockettest.World {
	t.Helper()
	spec := sockettest.WorldSpec{Workspaces: []sockettest.WorkspaceSpec{{ID: "w1", Tabs: []sockettest.TabSpec{{ID: "w1:t1", Panes: []sockettest.PaneSpec{
		{ID: paneID, Agent: &sockettest.AgentSpec{Kind: "claude", Name: "reviewer", Status: "idle"}},
		{ID: "w1:p2"},
	}}}}}}
	if mode != "" {
		spec.Workspaces[0].Tabs[0].Panes[0].Command = helperCommand(t, mode)
	}
	w, err := sockettest.NewWorld(spec)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func helperCommand(t *testing.T, mode string) *sockettest.CommandSpec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &sockettest.CommandSpec{Argv: []string{exe, "-test.run=^$"}, Env: []string{helperEnv + "=" + mode}, Rows: 30, Cols: 120}
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// start serves helperWorld(mode) and waits until the helper is armed.
func start(t *testing.T, mode string) (*sockettest.Server, *ptypane.Pane) {
	t.Helper()
	srv := simtest.New(t, helperWorld(t, mode), sockettest.WithPrograms(ptypane.Start))
	pane, ok := srv.Program(paneID).(*ptypane.Pane)
	if !ok {
		t.Fatalf("pane %s runs no ptypane program: %T", paneID, srv.Program(paneID))
	}
	if err := pane.WaitOutput(ctxT(t, 20*time.Second), func(out []byte) bool { return bytes.Contains(out, []byte("armed\r\n")) }); err != nil {
		t.Fatalf("helper never armed: %v; output %q", err, pane.Output())
	}
	return srv, pane
}

// waitReceived waits until the helper has reported want (exactly) as its
// input, and fails on anything else.
func waitReceived(t *testing.T, pane *ptypane.Pane, want string) {
	t.Helper()
	err := pane.WaitOutput(ctxT(t, 20*time.Second), func(out []byte) bool {
		return len(received(out)) >= len(want)
	})
	got := string(received(pane.Output()))
	if err != nil || got != want {
		t.Fatalf("the program received %q, want %q (%v)", got, want, err)
	}
}

func prompt(t *testing.T, srv *sockettest.Server, text string) {
	t.Helper()
	if _, err := srv.Client().AgentPrompt(ctxT(t, 10*time.Second), schema.AgentPromptParams{Target: "reviewer", Text: text}); err != nil {
		t.Fatalf("agent.prompt: %v", err)
	}
}

// TestPromptBytes: what a program in a pane receives from agent.prompt is
// exactly what Herdr writes, in the program's input modes.
func TestPromptBytes(t *testing.T) {
	const text = "hello\nworld — ünïcode \"quoted\"\t"
	for _, tc := range []struct {
		mode, want string
		bracketed  bool
	}{
		{"echo", "\x1b[200~" + text + "\x1b[201~\r", true},
		{"raw", text + "\r", false},
		{"split", "\x1b[200~" + text + "\x1b[201~\r", true},
		{"off", text + "\r", false},
		{"kitty", "\x1b[200~" + text + "\x1b[201~\x1b[13u", true},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			srv, pane := start(t, tc.mode)
			if got := pane.BracketedPaste(); got != tc.bracketed {
				t.Fatalf("bracketed paste %v, want %v", got, tc.bracketed)
			}
			prompt(t, srv, text)
			waitReceived(t, pane, tc.want)
			// The text and Enter are two writes, as in Herdr.
			in := srv.World.Inputs(paneID)
			if len(in) != 2 || in[0]+in[1] != tc.want || in[1] != pane.Enter() {
				t.Fatalf("recorded writes %q", in)
			}
		})
	}
}

// TestTerminalAnswersQueries: the emulator answers a cursor position
// query, as a real terminal (and Herdr) does; TUIs wait for such answers
// at start.
func TestTerminalAnswersQueries(t *testing.T) {
	_, pane := start(t, "query")
	out := string(pane.Output())
	// ESC [ 1 ; 1 R: the cursor was at row 2, column 1 after the first line.
	if !strings.Contains(out, "[cpr:1b5b323b3152]") {
		t.Fatalf("no cursor position report in %q", out)
	}
}

// TestTerminalAnswersKittyQuery: the kitty keyboard protocol's query is
// answered with the flags in effect, before the device attributes reply
// that follows it, as in a Herdr pane (programs such as Gemini CLI take
// the protocol as missing when the attributes come first, and then treat
// every paste as typed keys).
func TestTerminalAnswersKittyQuery(t *testing.T) {
	_, pane := start(t, "kittyquery")
	if err := pane.WaitOutput(t.Context(), func(b []byte) bool { return bytes.Count(b, []byte("[kq:")) == 2 }); err != nil {
		t.Fatalf("no answers: %v; output %q", err, pane.Output())
	}
	out := string(pane.Output())
	for _, want := range []string{
		"[kq:" + hex.EncodeToString([]byte("\x1b[?0u\x1b[?62;1;6;22c")) + "]",
		"[kq:" + hex.EncodeToString([]byte("\x1b[?1u\x1b[?62;1;6;22c")) + "]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output %q lacks %s", out, want)
		}
	}
}

// TestPaneRead: pane.read shows the emulated screen.
func TestPaneRead(t *testing.T) {
	srv, pane := start(t, "echo")
	prompt(t, srv, "quit")
	<-pane.Exited()
	for _, tc := range []struct {
		params schema.PaneReadParams
		want   []string
	}{
		{schema.PaneReadParams{PaneID: paneID, Source: schema.ReadSourceVisible}, []string{"helper echo ready\narmed\n[rx:", "bye"}},
		{schema.PaneReadParams{PaneID: paneID, Source: schema.ReadSourceRecent, Lines: ptr[uint32](1)}, []string{"bye"}},
	} {
		r, err := srv.Client().PaneRead(ctxT(t, 5*time.Second), tc.params)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.Text, w) {
				t.Errorf("pane.read %s = %q, want it to contain %q", tc.params.Source, r.Text, w)
			}
		}
		if strings.Contains(r.Text, "\x1b") {
			t.Errorf("text read has escapes: %q", r.Text)
		}
	}
	r, err := srv.Client().PaneRead(ctxT(t, 5*time.Second), schema.PaneReadParams{PaneID: paneID, Source: schema.ReadSourceVisible, Format: ptr(schema.ReadFormatANSI)})
	if err != nil || !strings.Contains(r.Text, "bye") {
		t.Fatalf("ansi read %q, %v", r.Text, err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestExitIsLeaving: the program exiting is the agent leaving its pane.
func TestExitIsLeaving(t *testing.T) {
	srv, pane := start(t, "echo")
	prompt(t, srv, "quit")
	select {
	case <-pane.Exited():
	case <-ctxT(t, 10*time.Second).Done():
		t.Fatal("the helper did not exit")
	}
	ctx := ctxT(t, 10*time.Second)
	for {
		_, err := srv.Client().AgentGet(ctx, "reviewer")
		if socket.CodeOf(err) == "agent_not_found" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("agent still there after its program exited: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	info, err := srv.Client().PaneGet(ctx, paneID)
	if err != nil {
		t.Fatal(err)
	}
	if info.Agent != nil {
		t.Fatalf("pane after exit: agent %q, want none", *info.Agent)
	}
	// Prompts to the pane id fail: it hosts no agent.
	_, err = srv.Client().AgentPrompt(ctx, schema.AgentPromptParams{Target: paneID, Text: "x"})
	if socket.CodeOf(err) != "agent_not_found" {
		t.Fatalf("prompt after exit: %v", err)
	}
	if !errors.Is(pane.Send([]byte("x")), ptypane.ErrExited) {
		t.Fatal("Send after exit did not fail")
	}
}

// alive reports whether pid still exists (a zombie counts as gone: Wait
// reaps it before Exited closes).
func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// TestCloseEndsTheProgram: pane.close, and the server closing, end the
// program, even one that ignores SIGHUP.
func TestCloseEndsTheProgram(t *testing.T) {
	for _, how := range []string{"pane.close", "server close"} {
		for _, mode := range []string{"echo", "stubborn"} {
			t.Run(how+"/"+mode, func(t *testing.T) {
				srv, pane := start(t, mode)
				pid := pane.Pid()
				if how == "pane.close" {
					if err := srv.Client().PaneClose(ctxT(t, 5*time.Second), paneID); err != nil {
						t.Fatal(err)
					}
				} else {
					srv.Close()
				}
				select {
				case <-pane.Exited():
				case <-ctxT(t, 15*time.Second).Done():
					t.Fatal("the program outlived its pane")
				}
				if alive(pid) {
					t.Fatalf("pid %d still alive", pid)
				}
				if err := pane.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
					t.Logf("close again: %v", err)
				}
			})
		}
	}
}

// TestRunCommand starts a program in an existing pane at run time, and
// refuses bad commands and a second program.
func TestRunCommand(t *testing.T) {
	srv := simtest.New(t, helperWorld(t, ""), sockettest.WithPrograms(ptypane.Start))
	if err := srv.RunCommand(paneID, sockettest.CommandSpec{}); err == nil {
		t.Fatal("empty argv accepted")
	}
	if err := srv.RunCommand(paneID, sockettest.CommandSpec{Argv: []string{"no-such-program-herdr-sim"}}); err == nil {
		t.Fatal("missing program accepted")
	}
	if err := srv.RunCommand(paneID, *helperCommand(t, "echo")); err != nil {
		t.Fatal(err)
	}
	if err := srv.RunCommand(paneID, *helperCommand(t, "echo")); err == nil {
		t.Fatal("second program in one pane accepted")
	}
	pane := srv.Program(paneID).(*ptypane.Pane)
	if err := pane.WaitOutput(ctxT(t, 20*time.Second), func(out []byte) bool { return bytes.Contains(out, []byte("armed")) }); err != nil {
		t.Fatal(err)
	}
	// The pane's environment reaches the program.
	if err := pane.Send([]byte("typed by a user")); err != nil {
		t.Fatal(err)
	}
	waitReceived(t, pane, "typed by a user")
}

// TestNoStarter: a world with a pane command needs a server that can run
// it.
func TestNoStarter(t *testing.T) {
	srv := sockettest.NewUnstartedServer(helperWorld(t, "echo"))
	dir := t.TempDir()
	if err := srv.StartAt(dir + "/s.sock"); !errors.Is(err, sockettest.ErrNoPrograms) {
		t.Fatalf("StartAt = %v, want ErrNoPrograms", err)
	}
}
