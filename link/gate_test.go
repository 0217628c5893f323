package link_test

import (
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/link"
)

// Every failed gate condition gets advice that names it and a fix, and no
// id or path.
func TestGateAdvice(t *testing.T) {
	dir, sock := listenSocket(t)
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		env    map[string]string
		failed string
		want   []string
	}{
		{"no HERDR_ENV (Codex without env_vars)", map[string]string{}, link.FailedHerdrEnv,
			[]string{"HERDR_ENV is not set", "env_vars", "HERDR_PANE_ID", "HERDR_SOCKET_PATH", "HC_TERMINAL_ID", "herdr-link config codex", "herdr-link probe"}},
		{"HERDR_ENV=0", map[string]string{"HERDR_ENV": "0", "HERDR_PANE_ID": "w1:p1", "HERDR_SOCKET_PATH": sock}, link.FailedHerdrEnvValue,
			[]string{"not to 1"}},
		{"no pane id", map[string]string{"HERDR_ENV": "1", "HERDR_SOCKET_PATH": sock}, link.FailedPaneID,
			[]string{"HERDR_PANE_ID is not", "env_vars"}},
		{"no way to find the socket", map[string]string{"HERDR_ENV": "1", "HERDR_PANE_ID": "w1:p1"}, "", nil},
		{"socket missing", map[string]string{"HERDR_ENV": "1", "HERDR_PANE_ID": "w1:p1", "HERDR_SOCKET_PATH": filepath.Join(dir, "gone.sock")}, link.FailedSocket,
			[]string{"no Herdr socket exists at the path HERDR_SOCKET_PATH names", "Herdr is running", "holds its socket"}},
		{"default socket missing", map[string]string{"HERDR_ENV": "1", "HERDR_PANE_ID": "w1:p1", "HOME": dir}, link.FailedSocket,
			[]string{"default socket path", "pass HERDR_SOCKET_PATH"}},
		{"not a socket", map[string]string{"HERDR_ENV": "1", "HERDR_PANE_ID": "w1:p1", "HERDR_SOCKET_PATH": plain}, link.FailedSocket,
			[]string{"no Herdr socket exists"}},
		{"ok", map[string]string{"HERDR_ENV": "1", "HERDR_PANE_ID": "w1:p1", "HERDR_SOCKET_PATH": sock}, "", nil},
	}
	ids := regexp.MustCompile(`w[0-9]+:p[0-9]+`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := link.CheckGate(func(k string) string { return tt.env[k] })
			if tt.name == "no way to find the socket" {
				// HOME and XDG_CONFIG_HOME unset fall back to the
				// temporary directory: the path resolves, and the socket
				// check decides.
				g.CheckSocket(func(string) (fs.FileInfo, error) { return nil, fs.ErrNotExist })
				if g.OK || g.Failed != link.FailedSocket {
					t.Fatalf("gate OK %v, failed %q; want false, %q", g.OK, g.Failed, link.FailedSocket)
				}
				return
			}
			g.CheckSocket(nil)
			if g.Failed != tt.failed || g.OK != (tt.failed == "") {
				t.Fatalf("gate OK %v, failed %q (%s); want failed %q", g.OK, g.Failed, g.Reason, tt.failed)
			}
			adv := g.Advice()
			if tt.failed == "" {
				if adv != "" {
					t.Fatalf("advice for a passed gate: %q", adv)
				}
				return
			}
			for _, w := range tt.want {
				if !strings.Contains(adv, w) {
					t.Errorf("advice lacks %q: %s", w, adv)
				}
			}
			// A variable that is set was passed on: the host is not to blame.
			if tt.failed == link.FailedSocket && tt.env["HERDR_SOCKET_PATH"] != "" && strings.Contains(adv, "its host did not pass") {
				t.Errorf("advice blames the host although HERDR_SOCKET_PATH was passed: %s", adv)
			}
			if ids.MatchString(adv) || strings.Contains(adv, dir) {
				t.Errorf("advice leaks an id or path: %s", adv)
			}
			if g.Reason == "" {
				t.Error("no operator reason")
			}
		})
	}
	if adv := (link.Gate{Failed: link.FailedSocketPath}).Advice(); !strings.Contains(adv, "cannot be located") {
		t.Errorf("socket path advice: %s", adv)
	}
}

// A herdr-core terminal (HC_TERMINAL_ID without the Herdr TUI's pane
// variables) is named as such and as not supported yet, never as a host
// that failed to pass Herdr's environment on; with the TUI's variables
// present the TUI's pane wins.
func TestGateHerdrCore(t *testing.T) {
	dir, sock := listenSocket(t)
	const term = "term-7f3a"
	tests := []struct {
		name   string
		env    map[string]string
		failed string
	}{
		{"herdr-core terminal", map[string]string{"HC_TERMINAL_ID": term, "HC_SESSION": "main", "HOME": dir}, link.FailedHerdrCore},
		{"herdr-core terminal, no session", map[string]string{"HC_TERMINAL_ID": term}, link.FailedHerdrCore},
		{"herdr-core terminal with a socket path set by hand", map[string]string{"HC_TERMINAL_ID": term, "HERDR_SOCKET_PATH": sock}, link.FailedHerdrCore},
		{"Herdr TUI inside a herdr-core terminal", map[string]string{"HC_TERMINAL_ID": term, "HERDR_ENV": "1", "HERDR_PANE_ID": "w1:p1", "HERDR_SOCKET_PATH": sock}, ""},
		{"TUI pane variable without HERDR_ENV", map[string]string{"HC_TERMINAL_ID": term, "HERDR_PANE_ID": "w1:p1"}, link.FailedHerdrEnv},
		{"HERDR_ENV without a pane id", map[string]string{"HC_TERMINAL_ID": term, "HERDR_ENV": "1", "HERDR_SOCKET_PATH": sock}, link.FailedPaneID},
		{"HC_SESSION alone", map[string]string{"HC_SESSION": "main"}, link.FailedHerdrEnv},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := link.CheckGate(func(k string) string { return tt.env[k] })
			g.CheckSocket(nil)
			if g.Failed != tt.failed || g.OK != (tt.failed == "") {
				t.Fatalf("gate failed %q (ok %v), want %q", g.Failed, g.OK, tt.failed)
			}
			adv := g.Advice()
			if tt.failed != link.FailedHerdrCore {
				if strings.Contains(adv, "herdr-core") {
					t.Errorf("advice names herdr-core for a %q gate: %s", g.Failed, adv)
				}
				return
			}
			for _, w := range []string{"herdr-core terminal", "HC_TERMINAL_ID", "speaks the Herdr TUI's socket", "not supported yet", "Herdr TUI"} {
				if !strings.Contains(adv, w) {
					t.Errorf("advice lacks %q: %s", w, adv)
				}
			}
			for _, w := range []string{"did not pass", "env_vars", "herdr-link config codex", term, dir} {
				if strings.Contains(adv, w) {
					t.Errorf("advice holds %q: %s", w, adv)
				}
			}
			if !strings.Contains(g.Reason, "herdr-core") {
				t.Errorf("operator reason %q does not name herdr-core", g.Reason)
			}
		})
	}
}

// listenSocket listens on herdr.sock in a new directory (closed when the
// test ends) and returns both.
func listenSocket(t *testing.T) (dir, sock string) {
	t.Helper()
	dir = t.TempDir()
	sock = filepath.Join(dir, "herdr.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return dir, sock
}
