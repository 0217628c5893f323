//go:build unix

package herdrsim

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseCommand(t *testing.T) {
	for _, tc := range []struct {
		in   string
		pane string
		argv []string
	}{
		{`w1:p2=["claude"]`, "w1:p2", []string{"claude"}},
		{`w1:p2=["/bin/prog","--flag","a b"]`, "w1:p2", []string{"/bin/prog", "--flag", "a b"}},
		{`w1:p2`, "", nil},
		{`=["x"]`, "", nil},
		{`w1:p2=claude`, "", nil},
		{`w1:p2=[]`, "", nil},
		{`w1:p2=[""]`, "", nil},
		{`w1:p2=[1]`, "", nil},
	} {
		pane, spec, err := parseCommand(tc.in)
		if tc.pane == "" {
			if err == nil {
				t.Errorf("%q accepted", tc.in)
			}
			continue
		}
		if err != nil || pane != tc.pane || strings.Join(spec.Argv, "\x00") != strings.Join(tc.argv, "\x00") {
			t.Errorf("%q = %q %q %v", tc.in, pane, spec.Argv, err)
		}
	}
	if _, _, code := runCLI(t, "serve", "--command", `w9:p9=["cat"]`); code != 2 {
		t.Errorf("a command for a missing pane: exit %d", code)
	}
}

// TestServeCommand: serve --command runs a program in a pane's terminal;
// agent.prompt types into it and pane.read shows its screen (cat, in a
// cooked terminal, echoes the line and prints it again).
func TestServeCommand(t *testing.T) {
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Skip("no cat")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "herdr.sock")
	cmd := exec.Command(os.Args[0], "serve", "--socket", path, "--command", `w1:p3=["`+cat+`"]`)
	cmd.Env = append(os.Environ(), "HERDR_SIM_BE_MAIN=1")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stdout)
	for i := 0; i < 3 && sc.Scan(); i++ {
	}
	t.Setenv("HERDR_SOCKET_PATH", path)
	if out, errOut, code := runCLI(t, "agent", "prompt", "w1:p3", "hello pty"); code != 0 {
		t.Fatalf("prompt: %d %s %s", code, out, errOut)
	}
	// A real program in a real PTY, in another process: polled, with a
	// hang guard rather than a timing bound.
	deadline := time.Now().Add(time.Minute)
	var text string
	for time.Now().Before(deadline) {
		out, _, code := runCLI(t, "pane", "read", "w1:p3")
		var r struct {
			Result struct {
				Read struct{ Text string } `json:"read"`
			} `json:"result"`
		}
		if code == 0 && json.Unmarshal([]byte(out), &r) == nil {
			text = r.Result.Read.Text
			if strings.Count(text, "hello pty") == 2 {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if strings.Count(text, "hello pty") != 2 {
		t.Fatalf("screen %q, want the line echoed and printed", text)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}
