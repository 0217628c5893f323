//go:build unix

// Package realherdr starts a real upstream Herdr (the 0.8.2 build kept in
// shared/herdr-real, in the folder beside the clone, or the one
// HERDR_LINK_REAL_HERDR names) headless for a test, in a private state
// directory, and gives the test a socket client and bounded waits on
// Herdr's own view of its panes.
//
// Without the binary a test skips with a line that says so; with CI set
// that is a failure, because CI has the shared folder beside the clone.
package realherdr

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
)

// EnvDir names the folder holding herdr and start-herdr.sh (or the herdr
// binary itself, started by the script beside it or the shared one).
const EnvDir = "HERDR_LINK_REAL_HERDR"

// Version is the release the lane was written against.
const Version = "0.8.2"

// Find returns the start script and the binary: $HERDR_LINK_REAL_HERDR,
// else shared/herdr-real in a folder above the working directory.
func Find() (script, binary string, err error) {
	if p := os.Getenv(EnvDir); p != "" {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			binary = p
			p = filepath.Dir(p)
		} else {
			binary = filepath.Join(p, "herdr")
		}
		script = filepath.Join(p, "start-herdr.sh")
		if _, err := os.Stat(script); err != nil {
			script = sharedScript()
		}
		if _, err := os.Stat(binary); err != nil {
			return "", "", fmt.Errorf("realherdr: %s=%s: no herdr binary there", EnvDir, os.Getenv(EnvDir))
		}
		if script == "" {
			return "", "", fmt.Errorf("realherdr: no start-herdr.sh beside %s or in ../shared/herdr-real", binary)
		}
		return script, binary, nil
	}
	script = sharedScript()
	if script == "" {
		return "", "", fmt.Errorf("realherdr: no real Herdr: ../shared/herdr-real/herdr is not beside the clone (set %s)", EnvDir)
	}
	return script, filepath.Join(filepath.Dir(script), "herdr"), nil
}

func sharedScript() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for range 6 {
		p := filepath.Join(dir, "..", "shared", "herdr-real")
		if _, err := os.Stat(filepath.Join(p, "herdr")); err == nil {
			if _, err := os.Stat(filepath.Join(p, "start-herdr.sh")); err == nil {
				return filepath.Clean(filepath.Join(p, "start-herdr.sh"))
			}
		}
		dir = filepath.Dir(dir)
	}
	return ""
}

// Need returns the script and binary, or skips tb with the reason (fails
// it when CI is set).
func Need(tb testing.TB) (script, binary string) {
	tb.Helper()
	script, binary, err := Find()
	if err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("%v (CI runs the real-Herdr lane)", err)
		}
		tb.Skipf("skipped: %v", err)
	}
	return script, binary
}

// Herdr is one running headless server.
type Herdr struct {
	// Socket is the server's socket path; Config its XDG_CONFIG_HOME.
	Socket, Config, Dir string
	// Binary is the herdr executable (also its CLI).
	Binary string
	// Client talks to the server (strict protocol check, 5 s per call).
	Client *socket.Client
	pid    int
}

// Start runs the start script into a fresh state directory with env added
// to the server's environment (every pane inherits it), and stops the
// server when tb ends. Herdr's own HERDR_* variables of the test's
// environment are not passed on.
func Start(tb testing.TB, env ...string) *Herdr {
	tb.Helper()
	return StartIn(tb, "", env...)
}

// StartIn is Start with the server's working directory cwd (where panes
// without one of their own start).
func StartIn(tb testing.TB, cwd string, env ...string) *Herdr {
	tb.Helper()
	script, binary := Need(tb)
	dir, err := os.MkdirTemp("", "rh")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script, dir)
	cmd.Env = append(cleanEnv(os.Environ()), "HERDR_BIN="+binary)
	cmd.Env = append(cmd.Env, env...)
	cmd.Dir = cwd
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%v: %s", err, ee.Stderr)
		}
		tb.Fatalf("realherdr: %s %s: %v", script, dir, err)
	}
	h := &Herdr{Dir: dir, Binary: binary}
	for _, line := range strings.Split(string(out), "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "HERDR_SOCKET_PATH":
			h.Socket = v
		case "HERDR_SERVER_PID":
			h.pid, _ = strconv.Atoi(v)
		case "XDG_CONFIG_HOME":
			h.Config = v
		}
	}
	if h.Socket == "" || h.pid == 0 {
		tb.Fatalf("realherdr: the start script printed %q", out)
	}
	tb.Cleanup(h.Stop)
	h.Client = &socket.Client{Path: h.Socket}
	// The socket file shows before the server accepts on it.
	var pong schema.ResultPong
	for {
		if pong, err = h.Client.Ping(ctx); err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		out, _ := os.ReadFile(filepath.Join(dir, "server.out"))
		tb.Fatalf("realherdr: ping: %v; server output:\n%s", err, out)
	}
	if pong.Version != Version {
		tb.Logf("realherdr: Herdr %s (the lane was written against %s)", pong.Version, Version)
	}
	return h
}

// cleanEnv drops the variables that would tie the server to another Herdr.
func cleanEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "HERDR_") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") || strings.HasPrefix(kv, "XDG_STATE_HOME=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Stop ends the server (SIGTERM, then SIGKILL after 5 s) and waits until
// it is gone. Its panes' processes get Herdr's hangup.
func (h *Herdr) Stop() {
	if h.pid == 0 {
		return
	}
	pid := h.pid
	h.pid = 0
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// Env is what a process in pane sees of Herdr (what herdr-link reads).
func (h *Herdr) Env(pane string) []string {
	return []string{"HERDR_ENV=1", "HERDR_PANE_ID=" + pane, "HERDR_SOCKET_PATH=" + h.Socket, "XDG_CONFIG_HOME=" + h.Config}
}

// Workspace creates a workspace labelled label whose panes get env (KEY=VALUE)
// and cwd, and returns its id and root pane.
func (h *Herdr) Workspace(ctx context.Context, label, cwd string, env []string) (ws, root string, err error) {
	p := schema.WorkspaceCreateParams{Label: &label, Env: envMap(env)}
	if cwd != "" {
		p.CWD = &cwd
	}
	var r schema.ResultWorkspaceCreated
	if err := h.Client.Call(ctx, schema.MethodWorkspaceCreate, p, &r); err != nil {
		return "", "", err
	}
	return r.Workspace.WorkspaceID, r.RootPane.PaneID, nil
}

// Split splits pane and returns the new pane's id; its process gets env
// and cwd (Herdr gives a split pane the server's environment, not the
// workspace's).
func (h *Herdr) Split(ctx context.Context, pane, cwd string, env []string) (string, error) {
	p := schema.PaneSplitParams{TargetPaneID: &pane, Direction: schema.SplitDirectionRight, Env: envMap(env)}
	if cwd != "" {
		p.CWD = &cwd
	}
	r, err := h.Client.PaneSplit(ctx, p)
	return r.PaneID, err
}

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// Agent is Herdr's record of the agent in pane (ok false: none detected).
func (h *Herdr) Agent(ctx context.Context, pane string) (schema.AgentInfo, bool, error) {
	as, err := h.Client.AgentList(ctx)
	if err != nil {
		return schema.AgentInfo{}, false, err
	}
	for _, a := range as {
		if a.PaneID == pane {
			return a, true, nil
		}
	}
	return schema.AgentInfo{}, false, nil
}

// WaitAgent polls agent.list every 50 ms until the agent in pane passes
// ok, and returns its record; on ctx's end the error names the last state
// seen.
func (h *Herdr) WaitAgent(ctx context.Context, pane string, ok func(schema.AgentInfo) bool) (schema.AgentInfo, error) {
	var last schema.AgentInfo
	var seen bool
	for {
		a, found, err := h.Agent(ctx, pane)
		if err == nil && found {
			last, seen = a, true
			if ok(a) {
				return a, nil
			}
		}
		select {
		case <-ctx.Done():
			if !seen {
				return last, fmt.Errorf("no agent detected in %s: %w", pane, ctx.Err())
			}
			return last, fmt.Errorf("agent in %s stayed %s: %w", pane, last.AgentStatus, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Status is a WaitAgent condition: the agent reports one of states.
func Status(states ...schema.AgentStatus) func(schema.AgentInfo) bool {
	return func(a schema.AgentInfo) bool {
		for _, s := range states {
			if a.AgentStatus == s {
				return true
			}
		}
		return false
	}
}

// Screen is the pane's visible text (pane.read), for failure messages.
func (h *Herdr) Screen(ctx context.Context, pane string) string {
	r, err := h.Client.PaneRead(ctx, schema.PaneReadParams{PaneID: pane, Source: schema.ReadSourceVisible})
	if err != nil {
		return "(pane.read: " + err.Error() + ")"
	}
	return r.Text
}
