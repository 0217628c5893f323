//go:build unix

package tui

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
)

// codexDaemonPidFiles are where Codex 0.171.0's interactive TUI records
// the app-server daemon it starts (and its pid-update loop), which
// outlive the TUI.
var codexDaemonPidFiles = []string{"app-server-daemon/daemon.pid", "app-server-daemon/daemon-updater.pid"}

// Cleanup stops what the host left running after its TUI ended: for Codex,
// the app-server daemon and its updater, found by their pid files and
// stopped only if their command line names this run's CODEX_HOME (a pid
// may have been reused). It returns the pids it stopped.
func (r *Run) Cleanup() ([]int, error) {
	if r.CodexHome == "" {
		return nil, nil
	}
	var stopped []int
	var errs []error
	for _, f := range codexDaemonPidFiles {
		data, err := os.ReadFile(filepath.Join(r.CodexHome, f))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var rec struct {
			PID int `json:"pid"`
		}
		if err := jsonx.Unmarshal(data, &rec); err != nil || rec.PID <= 1 {
			errs = append(errs, fmt.Errorf("tui: %s: no pid in %q", f, data))
			continue
		}
		if !commandNames(rec.PID, r.CodexHome) {
			continue // gone, or someone else's process now
		}
		if err := stop(rec.PID); err != nil {
			errs = append(errs, err)
			continue
		}
		stopped = append(stopped, rec.PID)
	}
	return stopped, errors.Join(errs...)
}

// commandNames reports whether pid's command line contains s.
func commandNames(pid int, s string) bool {
	var cmdline []byte
	if runtime.GOOS == "linux" {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			return false
		}
		cmdline = b
	} else {
		b, err := exec.Command("ps", "-p", fmt.Sprint(pid), "-o", "command=").Output()
		if err != nil {
			return false
		}
		cmdline = b
	}
	return bytes.Contains(cmdline, []byte(s))
}

// stop sends SIGTERM, then SIGKILL after 3 s.
func stop(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return nil
		}
		return fmt.Errorf("tui: stopping pid %d: %w", pid, err)
	}
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return nil
		}
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("tui: killing pid %d: %w", pid, err)
	}
	return nil
}
