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
	dir := t.TempDir()
	sock := filepath.Join(dir, "herdr.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
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
			[]string{"HERDR_ENV is not set", "env_vars", "HERDR_PANE_ID", "HERDR_SOCKET_PATH", "herdr-link config codex", "herdr-link probe"}},
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
					t.Fatalf("gate %+v", g)
				}
				return
			}
			g.CheckSocket(nil)
			if g.Failed != tt.failed || g.OK != (tt.failed == "") {
				t.Fatalf("gate %+v, want failed %q", g, tt.failed)
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
