//go:build linux

package hosttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A process that left the session's group (a daemon) is still found by
// its marker and killed.
func TestKillMarked(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	marker := "HERDR_LINK_HOSTTEST=killmarked-" + t.Name()
	cmd := exec.Command(sleep, "60")
	cmd.Env = append(os.Environ(), marker)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if n := killMarked(marker); n != 1 {
		t.Errorf("killMarked found %d processes, want 1", n)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the marked process survived")
	}
	if n := killMarked(marker); n != 0 {
		t.Errorf("second pass found %d", n)
	}
}

// run enforces the session timeout and kills the whole group.
func TestRunTimeout(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	dir := t.TempDir()
	h := &Host{Name: "sleeper", Bin: "sleep", Command: func(s *Session) (*exec.Cmd, error) { return exec.Command(sleep, "60"), nil }}
	s := &Session{Host: h, Dir: dir, Home: filepath.Join(dir, "home"), Work: dir, Marker: "HERDR_LINK_HOSTTEST=timeout-" + t.Name()}
	o := run(t.Context(), s, 300*time.Millisecond)
	if o.Err == nil || !strings.Contains(o.Err.Error(), "did not finish within") {
		t.Fatalf("err %v", o.Err)
	}
	if n := killMarked(s.Marker); n != 0 {
		t.Fatalf("%d processes left", n)
	}
}
