package herdrsim

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

const turnsWorld = `{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[
 {"id":"w1:p1","agent":{"kind":"claude","name":"brain","status":"idle","submit_ms":0,"turn_ms":30}},
 {"id":"w1:p2","agent":{"kind":"codex","name":"reviewer","status":"idle","submit_ms":0,"turn_ms":30}},
 {"id":"w1:p3"}]}]}]}`

// TestTurnsEndToEnd runs `herdr-sim serve` as a process, delivers two
// prompts with the CLI verbs, and reads them back with `herdr-sim turns`,
// as the README shows.
//
// Long: one herdr-sim serve session driven as a user would, step after
// step.
func TestTurnsEndToEnd(t *testing.T) {
	dir, _ := os.MkdirTemp("", "hs")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "herdr.sock")
	world := filepath.Join(dir, "world.json")
	if err := os.WriteFile(world, []byte(turnsWorld), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "serve", "--socket", path, "--world", world)
	cmd.Env = append(os.Environ(), "HERDR_SIM_BE_MAIN=1")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(stdout)
	for i := 0; i < 3 && sc.Scan(); i++ {
	}
	t.Setenv("HERDR_SOCKET_PATH", path)
	turnsCmd := func(args ...string) (string, string, int) {
		c := exec.Command(os.Args[0], append([]string{"turns"}, args...)...)
		c.Env = append(os.Environ(), "HERDR_SIM_BE_MAIN=1")
		var out, errb strings.Builder
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	if out, errOut, code := turnsCmd("w1:p2"); code != 0 || out != "" {
		t.Fatalf("no turns yet: exit %d %q %q", code, out, errOut)
	}
	sent := []string{"first line\nsecond \"quoted\" line", "then ünïcödé\tand a tab"}
	// Each prompt waits (server-side) until its turn is over, so the turn
	// is recorded when the CLI returns: no polling.
	for _, text := range sent {
		if _, errOut, code := runCLI(t, "agent", "prompt", "reviewer", text, "--wait", "--timeout", "60000"); code != 0 {
			t.Fatalf("prompt: exit %d %s", code, errOut)
		}
	}
	out, errOut, code := turnsCmd("w1:p2")
	if code != 0 || errOut != "" {
		t.Fatalf("turns: exit %d %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("turns printed %q", out)
	}
	var prev time.Time
	for i, l := range lines {
		var keys map[string]json.RawMessage
		var turn struct {
			At   string `json:"at"`
			Text string `json:"text"`
		}
		if json.Unmarshal([]byte(l), &keys) != nil || len(keys) != 2 || json.Unmarshal([]byte(l), &turn) != nil {
			t.Fatalf("line %q is not {at, text}", l)
		}
		at, err := time.Parse(time.RFC3339Nano, turn.At)
		if err != nil || turn.Text != sent[i] || at.Before(prev) || !strings.HasPrefix(l, `{"at":`) {
			t.Fatalf("line %d = %q (%v)", i, l, err)
		}
		prev = at
	}
	// A claude pane: the paste tags are part of what the model got.
	if _, errOut, code := runCLI(t, "agent", "prompt", "brain", "hi", "--wait", "--timeout", "60000"); code != 0 {
		t.Fatalf("prompt brain: exit %d %s", code, errOut)
	}
	if out, _, _ := turnsCmd("w1:p1"); !strings.HasPrefix(out, `{"at":`) || !strings.HasSuffix(out, `,"text":"<pasted_content id=\"1\">hi</pasted_content id=\"1\">"}`+"\n") {
		t.Fatalf("claude turn %q", out)
	}
	// Errors: unknown pane, bad usage, a shell pane (no turns: empty).
	if _, errOut, code := turnsCmd("w9:p9"); code != 1 || !strings.Contains(errOut, `"pane_not_found"`) {
		t.Errorf("unknown pane: exit %d %q", code, errOut)
	}
	if _, _, code := turnsCmd(); code != 2 {
		t.Errorf("no pane: exit %d", code)
	}
	if out, _, code := turnsCmd("w1:p3"); code != 0 || out != "" {
		t.Errorf("shell pane: exit %d %q", code, out)
	}
}

// TestTurnsAgainstHerdr: a server without the simulator-only method (real
// Herdr, or serve --herdr-only) answers it as an unknown method, and
// turns says so; the normal methods answer as before.
func TestTurnsAgainstHerdr(t *testing.T) {
	srv := simtest.New(t, nil, func(s *sockettest.Server) { s.HerdrOnly = true })
	_, errOut, code := runCLI(t, "turns", "--socket", srv.Path(), "w1:p2")
	if code != 1 || !strings.Contains(errOut, "not a herdr-sim serve") {
		t.Fatalf("exit %d %q", code, errOut)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Method != "" || !strings.Contains(reqs[0].Line, `"sim.turns"`) {
		t.Fatalf("a Herdr-only server logged %q, want one unparsed sim.turns line", requestLines(reqs))
	}
	// With simulator methods on, the normal methods are unaffected and
	// sim.turns is not logged as Herdr traffic.
	srv2 := simtest.New(t, nil)
	if out, errOut, code := runCLI(t, "turns", "--socket", srv2.Path(), "w1:p2"); code != 0 || out != "" {
		t.Fatalf("exit %d %q %q", code, out, errOut)
	}
	if n := len(srv2.Requests()); n != 0 {
		t.Fatalf("sim.turns logged as a request (%d)", n)
	}
	if out, _, code := runCLI(t, "turns", "--help"); code != 0 || !strings.Contains(out, "usage: herdr-sim turns") {
		t.Fatalf("help: %d %q", code, out)
	}
}
