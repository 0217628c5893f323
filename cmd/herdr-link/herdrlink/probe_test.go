package herdrlink

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

func runProbe(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := probe(args, &out, &errb)
	return out.String(), errb.String(), code
}

func setPane(t *testing.T, srv *sockettest.Server, pane string) {
	t.Setenv("HERDR_ENV", "1")
	t.Setenv("HERDR_SOCKET_PATH", srv.Path())
	t.Setenv("HERDR_PANE_ID", pane)
	t.Setenv("HERDR_SESSION", "")
}

func TestProbeVerdicts(t *testing.T) {
	tests := []struct {
		name  string
		pane  string
		setup func(*sockettest.Server)
		code  int
		want  []string
	}{
		{"healthy", "w1:p1", nil, 0, []string{"PASS  environment", "PASS  ping", `PASS  self`, `"brain" (claude, working) in workspace w1`, "2 peer(s): reviewer (idle), writer (done); not listed: 1 unnamed in this workspace, 1 in other workspaces", "dormant"}},
		{"unnamed occupant", "w1:p3", nil, 0, []string{"WARN  self", "unnamed", "herdr agent rename w1:p3 <name>"}},
		{"occupant not detected", "w1:p4", nil, 1, []string{"FAIL  self", "occupant not detected yet"}},
		{"unknown pane", "w9:p9", nil, 1, []string{"FAIL  self", "Herdr does not know this pane"}},
		{"protocol 22", "w1:p1", func(s *sockettest.Server) { s.SetProtocol(22) }, 0, []string{"PASS  ping", "protocol 22 (herdr-link accepts protocol 19 and newer",
			"PASS  methods", "verified: agent.list, agent.get, agent.prompt, agent.rename, pane.get, pane.close"}},
		{"protocol 19", "w1:p1", func(s *sockettest.Server) { s.SetProtocol(19) }, 0, []string{"PASS  ping", "protocol 19"}},
		{"protocol 25", "w1:p1", func(s *sockettest.Server) { s.SetProtocol(25) }, 0, []string{"PASS  ping", "protocol 25", "PASS  methods"}},
		{"protocol 18", "w1:p1", func(s *sockettest.Server) { s.SetProtocol(18) }, 1, []string{"FAIL  ping", "protocol 18", "upgrade Herdr"}},
		{"missing method", "w1:p1", func(s *sockettest.Server) { s.SetMissing("agent.rename") }, 1,
			[]string{"FAIL  methods", "this Herdr lacks agent.rename (verified: agent.list, agent.get, agent.prompt, pane.get, pane.close)", "upgrade Herdr"}},
		{"hung server", "w1:p1", func(s *sockettest.Server) { s.SetFault("", sockettest.Fault{Hang: true}) }, 1, []string{"FAIL  ping", "timed out", "hung"}},
		{"garbage", "w1:p1", func(s *sockettest.Server) { s.SetFault("", sockettest.Fault{Garbage: true}) }, 1, []string{"FAIL  ping", "malformed", "not herdr-client.sock"}},
		{"socket mode", "w1:p1", func(s *sockettest.Server) { _ = os.Chmod(s.Path(), 0o666) }, 0, []string{"WARN  socket file", "mode 0666"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := simtest.New(t, nil)
			if tt.setup != nil {
				tt.setup(srv)
			}
			setPane(t, srv, tt.pane)
			// The hung server is the one case that needs the timeout to
			// pass, and it should pass quickly; for the others it only
			// bounds a hang, so that a loaded machine's slow round trip is
			// not taken for one.
			hung := tt.name == "hung server"
			timeout := "30s"
			if hung {
				timeout = "300ms"
			}
			start := time.Now()
			out, _, code := runProbe(t, "-timeout", timeout)
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s", code, tt.code, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if el := time.Since(start); hung && el > 3*time.Second {
				t.Errorf("probe of a hung server took %v", el)
			}
		})
	}
}

func TestProbeMovedPane(t *testing.T) {
	srv := simtest.New(t, nil)
	if _, err := srv.World.Move("w1:p1", "w2"); err != nil {
		t.Fatal(err)
	}
	setPane(t, srv, "w1:p1")
	out, _, code := runProbe(t)
	if code != 0 || !strings.Contains(out, "pane moved: HERDR_PANE_ID w1:p1 is now w2:") || !strings.Contains(out, "1 peer(s): ops (blocked)") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestProbeNoServer(t *testing.T) {
	t.Setenv("HERDR_ENV", "1")
	t.Setenv("HERDR_PANE_ID", "w1:p1")
	t.Setenv("HERDR_SOCKET_PATH", filepath.Join(t.TempDir(), "herdr.sock"))
	out, _, code := runProbe(t)
	if code != 1 || !strings.Contains(out, "Herdr is not running: start it with `herdr`") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	// Outside Herdr altogether.
	t.Setenv("HERDR_ENV", "")
	t.Setenv("HERDR_PANE_ID", "")
	out, _, code = runProbe(t)
	if code != 1 || !strings.Contains(out, "FAIL  environment") || !strings.Contains(out, "not in a Herdr pane") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

// In a herdr-core terminal the probe fails its environment check naming
// herdr-core as not supported yet, checks no Herdr socket, and shows
// which herdr-core variables are set but not the terminal id.
func TestProbeHerdrCore(t *testing.T) {
	for _, env := range []map[string]string{
		{"HC_TERMINAL_ID": "hc-term-4711", "HC_SESSION": "main"},
		{"HC_TERMINAL_ID": "hc-term-4711", "HERDR_SOCKET_PATH": filepath.Join(t.TempDir(), "herdr.sock")},
	} {
		for _, k := range []string{"HERDR_ENV", "HERDR_PANE_ID", "HERDR_SOCKET_PATH", "HERDR_SESSION", "HC_TERMINAL_ID", "HC_SESSION"} {
			t.Setenv(k, env[k])
		}
		out, _, code := runProbe(t, "-timeout", "300ms")
		if code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
		for _, w := range []string{"FAIL  environment", "HC_TERMINAL_ID", "herdr-core terminals are not supported yet", "speaks the Herdr TUI's socket"} {
			if !strings.Contains(out, w) {
				t.Errorf("probe output lacks %q:\n%s", w, out)
			}
		}
		for _, w := range []string{"hc-term-4711", "socket file", "not in a Herdr pane"} {
			if strings.Contains(out, w) {
				t.Errorf("probe output holds %q:\n%s", w, out)
			}
		}
	}
}

func TestProbeForeignOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give the socket to another user")
	}
	srv := simtest.New(t, nil)
	if err := os.Chown(srv.Path(), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	setPane(t, srv, "w1:p1")
	out, _, code := runProbe(t)
	if code != 1 || !strings.Contains(out, "owned by uid 65534") || !strings.Contains(out, "another user's Herdr") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestProbeJSON(t *testing.T) {
	srv := simtest.New(t, nil)
	setPane(t, srv, "w1:p1")
	out, _, code := runProbe(t, "--json")
	var r struct {
		OK     bool
		Checks []struct{ Name, Status string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || !r.OK || len(r.Checks) != 9 {
		t.Fatalf("exit %d, ok %v, %d checks; want 0, true, 9\n%s", code, r.OK, len(r.Checks), out)
	}
}

func TestProbeCall(t *testing.T) {
	srv := simtest.New(t, nil)
	setPane(t, srv, "w1:p1")
	out, errOut, code := runProbe(t, "--call", "agent.get", `{"target":"brain"}`)
	if code != 0 || !strings.Contains(out, `"name": "brain"`) || !strings.Contains(errOut, "ms round trip") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	out, _, code = runProbe(t, "--raw", "--call", "ping")
	if code != 0 || !strings.Contains(out, `→ {"id":"probe:ping","method":"ping","params":{}}`) || !strings.Contains(out, `← {"id":"probe:ping","result":{"type":"pong"`) {
		t.Fatalf("raw: exit %d\n%s", code, out)
	}
	for _, bad := range [][]string{
		{"--call", "agent.bogus"},
		{"--call", "agent.get", `{}`},
		{"--call", "agent.get", `{"target":1}`},
		{"--call", "agent.get", `{"target":"x","extra":1}`},
		{"--call", "agent.get", `[]`},
	} {
		if _, errOut, code := runProbe(t, bad...); code != 2 {
			t.Errorf("%v: exit %d (%s)", bad, code, errOut)
		}
	}
	if len(srv.Methods()) != 2 {
		t.Errorf("invalid calls reached Herdr: %v", srv.Methods())
	}
	// A Herdr refusal is printed and exits 1.
	out, _, code = runProbe(t, "--call", "agent.get", `{"target":"nobody"}`)
	if code != 1 || !strings.Contains(out, "agent_not_found") {
		t.Fatalf("refusal: exit %d\n%s", code, out)
	}
}

// The probe's former recording and validation flags say where their work
// went, and do nothing else.
func TestProbeMovedFlags(t *testing.T) {
	srv := simtest.New(t, nil)
	setPane(t, srv, "w1:p1")
	file := filepath.Join(t.TempDir(), "rec.txt")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--record", file}, "herdr-sim record FILE"},
		{[]string{"--record", ""}, "herdr-sim record FILE"},
		{[]string{"--validate", "s.json"}, "herdr-sim validate SCHEMA_FILE"},
		{[]string{"--mcp"}, "herdr-bench mcp"},
	} {
		out, errOut, code := runProbe(t, tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.want) || out != "" {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want exit 2 naming %q", tt.args, code, errOut, out, tt.want)
		}
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("probe --record wrote %s: %v", file, err)
	}
	if m := srv.Methods(); len(m) != 0 {
		t.Errorf("a moved flag reached Herdr: %v", m)
	}
}

func TestProbeWatch(t *testing.T) {
	srv := simtest.New(t, nil, func(s *sockettest.Server) { s.Tick = 5 * time.Millisecond })
	setPane(t, srv, "w1:p1")
	p := &prober{getenv: os.Getenv, timeout: time.Second}
	ctx, cancel := context.WithCancel(t.Context())
	var out, errb syncBuffer
	done := make(chan int)
	go func() { done <- p.watch(ctx, &out, &errb) }()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(errb.String(), "watching") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	_ = srv.World.SetStatus("w1:p2", "working")
	_ = srv.World.Close("w1:p4")
	_ = srv.World.Detect("w2:p2", "codex") // detection is an event --watch shows
	for !(strings.Contains(out.String(), "pane.agent_status_changed") && strings.Contains(out.String(), "pane_closed") &&
		strings.Contains(out.String(), "pane_agent_detected")) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 || !strings.Contains(out.String(), `"agent_status":"working"`) || !strings.Contains(out.String(), "pane_agent_detected") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// The probe names the real cause of an unusable socket path and its fix.
func TestProbeNamesEnvironmentCause(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(dir, strings.Repeat("d", 110))
	if err := os.Mkdir(long, 0o700); err != nil {
		t.Fatal(err)
	}
	longSock := filepath.Join(long, "herdr.sock")
	if err := os.WriteFile(longSock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := map[string][]string{
		dir:      {"FAIL  socket file", "a directory, not a socket", "fix: point HERDR_SOCKET_PATH"},
		file:     {"FAIL  socket file", "a regular file, not a socket", "remove the file"},
		longSock: {"FAIL  socket file", "over the kernel's limit", "shorter"},
	}
	for path, want := range tests {
		t.Setenv("HERDR_ENV", "1")
		t.Setenv("HERDR_SOCKET_PATH", path)
		t.Setenv("HERDR_PANE_ID", "w1:p1")
		out, _, code := runProbe(t, "-timeout", "300ms")
		if code != 1 {
			t.Errorf("%s: exit %d", path, code)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", filepath.Base(path), w, out)
			}
		}
	}
}
