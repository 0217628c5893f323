package herdrlink

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

const pipedSession = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"herdr_link_send","arguments":{"to":"reviewer","message":"piped"}}}
`

func envelopes(w *sockettest.World, pane string) int {
	n := 0
	for _, s := range w.Prompts(pane) {
		if _, ok := link.Extract(s); ok {
			n++
		}
	}
	return n
}

// runPiped runs the built binary with stdin from a pipe that ends after
// in, and returns its stdout and exit error.
func runPiped(t *testing.T, cmd *exec.Cmd, in string) (string, error) {
	t.Helper()
	cmd.Stdin = strings.NewReader(in)
	var out bytes.Buffer
	cmd.Stdout = &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("herdr-link did not exit after stdin EOF")
	}
	return "", nil
}

// `printf '<initialize>\n<tools/call send>\n' | herdr-link` answers both
// and delivers the send before exiting.
func TestPipedStdinLastRequestAnswered(t *testing.T) {
	w, err := sockettest.ParseWorld([]byte(e2eWorld))
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = time.Millisecond })
	cmd := exec.Command(binary, "-no-bootstrap")
	cmd.Env = append(append(os.Environ(), "HERDR_LINK_LOG=warn"), srv.Env("w1:p1")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := runPiped(t, cmd, pipedSession)
	if err != nil {
		t.Fatalf("exit: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(out, `"id":2,"result"`) || !strings.Contains(out, `\"status\":\"sent\"`) {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", out, stderr.String())
	}
	if n := envelopes(w, "w1:p2"); n != 1 {
		t.Fatalf("reviewer received %d envelopes", n)
	}
}

// With the read end of its stderr closed, herdr-link still serves: logging
// never ends the process.
func TestClosedStderrKeepsServing(t *testing.T) {
	w, err := sockettest.ParseWorld([]byte(e2eWorld))
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = time.Millisecond })
	for _, env := range [][]string{srv.Env("w1:p1"), nil} { // inside and outside Herdr
		r, wr, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close() // nobody will ever read the logs
		cmd := exec.Command(binary, "-log-level", "debug")
		cmd.Env = append(append(os.Environ(), "HERDR_ENV="), env...)
		cmd.Stderr = wr
		out, err := runPiped(t, cmd, pipedSession)
		wr.Close()
		if err != nil {
			t.Fatalf("exit: %v (stdout %q)", err, out)
		}
		if !strings.Contains(out, `"id":2,"result"`) {
			t.Fatalf("stdout %q", out)
		}
	}
	if n := envelopes(w, "w1:p2"); n != 1 {
		t.Fatalf("reviewer received %d envelopes", n)
	}
}

// A broken stdout ends the session cleanly: exit 0, no SIGPIPE death.
func TestBrokenStdoutEndsCleanly(t *testing.T) {
	r, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inW.Close()
	cmd := exec.Command(binary)
	cmd.Env = append(os.Environ(), "HERDR_ENV=")
	cmd.Stdin, cmd.Stdout = inR, wr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	wr.Close()
	// stdin stays open: only the failed write can end the session.
	if _, err := inW.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("herdr-link kept running with a broken stdout")
	}
}
