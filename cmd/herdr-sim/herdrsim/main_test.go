package herdrsim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/buildinfo"
	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// The test binary doubles as herdr-sim for the serve tests.
func TestMain(m *testing.M) {
	if os.Getenv("HERDR_SIM_BE_MAIN") == "1" {
		os.Exit(Main())
		return
	}
	os.Exit(m.Run())
}

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestCLIVerbs(t *testing.T) {
	srv := simtest.New(t, nil)
	t.Setenv("HERDR_SOCKET_PATH", srv.Path())
	// The same JSON a direct agent.list answers, as herdr prints it.
	out, _, code := runCLI(t, "agent", "list")
	want, err := srv.Client().RoundTrip(t.Context(), []byte(`{"id":"cli:agent:list","method":"agent.list","params":{}}`))
	if code != 0 || err != nil || strings.TrimSpace(out) != string(want) {
		t.Fatalf("agent list: exit %d\n got %s\nwant %s", code, out, want)
	}
	// ping then the request, each on its own connection, with herdr's ids.
	srv.ResetRequests()
	runCLI(t, "agent", "get", "brain")
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].ID != "api-client:status" || reqs[0].Method != "ping" || reqs[1].ID != "cli:agent:get" {
		t.Fatalf("requests %q, want ping as api-client:status, then cli:agent:get", requestLines(reqs))
	}
	tests := []struct {
		args     []string
		code     int
		inStdout string
		inStderr string
	}{
		{[]string{"agent", "get", "brain"}, 0, `"name":"brain"`, ""},
		{[]string{"agent", "get", "nobody"}, 1, "", `{"id":"cli:agent:get","error":{"code":"agent_not_found","message":"agent target nobody not found"}}`},
		{[]string{"agent", "prompt", "ops", "hi"}, 1, "", `"agent_blocked"`},
		{[]string{"agent", "prompt", "reviewer", "hi"}, 0, `"agent_prompted"`, ""},
		{[]string{"agent", "prompt", "reviewer", "hi", "--until", "idle"}, 2, "", "invalid command"},
		{[]string{"agent", "prompt", "reviewer"}, 2, "", "invalid command"},
		{[]string{"agent", "rename", "w1:p3", "planner"}, 0, `"name":"planner"`, ""},
		{[]string{"agent", "rename", "planner", "--clear"}, 0, `"agent_info"`, ""},
		{[]string{"agent", "rename", "w1:p3", "Bad Name"}, 1, "", "invalid_agent_name"},
		{[]string{"pane", "get", "w1:p4"}, 0, `"pane_info"`, ""},
		{[]string{"pane", "list", "--workspace", "w2"}, 0, `"w2:p2"`, ""},
		{[]string{"pane", "close", "w1:p4"}, 0, `{"id":"cli:pane:close","result":{"type":"ok"}}`, ""},
		{[]string{"pane", "close", "w1:p4"}, 1, "", "pane_not_found"},
		{[]string{"workspace", "list"}, 0, `"workspace_list"`, ""},
		// The input verbs: the pane ones print nothing on success.
		{[]string{"pane", "send-text", "w2:p2", "echo", "hi"}, 0, "", ""},
		{[]string{"pane", "send-text", "w2:p2"}, 2, "", "usage: herdr pane send-text <pane_id> <text>"},
		{[]string{"pane", "send-keys", "w1:p2", "ctrl+u", "Enter"}, 0, "", ""},
		{[]string{"pane", "send-keys", "w1:p2", "C-u"}, 1, "", `{"id":"cli:request","error":{"code":"invalid_key","message":"unsupported key C-u"}}`},
		{[]string{"pane", "send-keys", "w9:p9", "Enter"}, 1, "", `"pane_not_found"`},
		{[]string{"pane", "run", "w2:p2", "ls", "-l"}, 0, "", ""},
		{[]string{"agent", "send-keys", "reviewer", "Escape"}, 0, `{"id":"cli:agent:send-keys","result":{"type":"ok"}}`, ""},
		{[]string{"agent", "send-keys", "reviewer"}, 2, "", "usage: herdr agent send-keys"},
		{[]string{"pane", "report-agent", "w2:p2", "--source", "herdr:claude", "--agent", "claude", "--state", "working"}, 0, "", ""},
		{[]string{"agent", "get", "w2:p2"}, 0, `"agent_status":"working"`, ""},
		{[]string{"pane", "report-agent", "w2:p2", "--source=herdr:claude", "--agent=claude", "--state=idle", "--seq", "4"}, 0, "", ""},
		{[]string{"pane", "report-agent", "w2:p2", "--source", "s", "--agent", " ", "--state", "idle"}, 1, "", `"invalid_agent"`},
		{[]string{"pane", "report-agent", "w2:p2", "--source", "s", "--agent", "a"}, 2, "", "missing required --state"},
		{[]string{"pane", "report-agent", "w2:p2", "--agent", "a", "--state", "idle"}, 2, "", "missing required --source"},
		{[]string{"pane", "report-agent", "w2:p2", "--source", "s", "--agent", "a", "--state", "done"}, 1, "", "invalid pane agent state: done"},
		{[]string{"pane", "report-agent", "w2:p2", "--source", "s", "--bogus", "x"}, 2, "", "unknown option: --bogus"},
		{[]string{"agent"}, 2, "", "usage"},
		{[]string{"bogus", "verb"}, 2, "", "invalid command"},
	}
	for _, tt := range tests {
		out, errOut, code := runCLI(t, tt.args...)
		if code != tt.code || !strings.Contains(out, tt.inStdout) || !strings.Contains(errOut, tt.inStderr) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", tt.args, code, out, errOut)
		}
	}
}

func TestCLIServerNotRunningAndMismatch(t *testing.T) {
	t.Setenv("HERDR_SOCKET_PATH", filepath.Join(t.TempDir(), "none.sock"))
	_, errOut, code := runCLI(t, "agent", "list")
	var resp struct {
		ID    string `json:"id"`
		Error struct{ Code, Message string }
	}
	if code != 1 || json.Unmarshal([]byte(errOut), &resp) != nil || resp.ID != "cli:agent:list" || resp.Error.Code != "server_not_running" || !strings.Contains(resp.Error.Message, "run `herdr` to start") {
		t.Fatalf("exit %d stderr %q", code, errOut)
	}
	srv := simtest.New(t, nil, func(s *sockettest.Server) { s.Protocol = 22 })
	t.Setenv("HERDR_SOCKET_PATH", srv.Path())
	_, errOut, code = runCLI(t, "agent", "list")
	if code != 1 || !strings.Contains(errOut, `"protocol_mismatch"`) || !strings.Contains(errOut, "older than server protocol 22") {
		t.Fatalf("mismatch: exit %d stderr %q", code, errOut)
	}
}

func TestParseFault(t *testing.T) {
	good := map[string]string{
		"agent.list:hang": "agent.list", "*:latency=20ms": "", "ping:garbage": "ping", "pane.close:error=confirmation_required:needs confirm": "pane.close",
		"x:drop": "x", "x:drop-mid": "x", "x:wrong-id": "x", "x:oversize=100": "x",
	}
	for spec, method := range good {
		m, f, err := parseFault(spec)
		if err != nil || m != method || f == (sockettest.Fault{}) {
			t.Errorf("parseFault(%q) = %q, a fault %v, %v; want %q, a fault", spec, m, f != (sockettest.Fault{}), err, method)
		}
	}
	for _, bad := range []string{"nocolon", "x:latency=forever", "x:oversize=-1", "x:error=", "x:explode"} {
		if _, _, err := parseFault(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestServe(t *testing.T) {
	dir, _ := os.MkdirTemp("", "hs")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "herdr.sock")
	cmd := exec.Command(os.Args[0], "serve", "--socket", path, "--fault", "pane.close:error=confirmation_required:closing this pane would close a worktree group")
	cmd.Env = append(os.Environ(), "HERDR_SIM_BE_MAIN=1")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stdout)
	var lines []string
	for len(lines) < 3 && sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if strings.Join(lines, "\n") != "HERDR_ENV=1\nHERDR_SOCKET_PATH="+path+"\nHERDR_PANE_ID=w1:p1" {
		t.Fatalf("environment lines %q", lines)
	}
	// Ready: the socket exists and answers a raw ping with protocol 20.
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte(`{"id":"1","method":"ping","params":{}}` + "\n"))
	reply, _ := bufio.NewReader(c).ReadString('\n')
	c.Close()
	var pong struct {
		Result struct{ Protocol int } `json:"result"`
	}
	if jsonx.Unmarshal([]byte(reply), &pong) != nil || pong.Result.Protocol != 20 {
		t.Fatalf("ping reply %q", reply)
	}
	t.Setenv("HERDR_SOCKET_PATH", path)
	if _, errOut, code := runCLI(t, "pane", "close", "w1:p4"); code != 1 || !strings.Contains(errOut, "confirmation_required") {
		t.Fatalf("fault flag: exit %d %q", code, errOut)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(time.Minute): // a hang guard, not a timing bound
		t.Fatal("herdr-sim did not stop on SIGTERM")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("socket left behind: %v", err)
	}
}

func TestHelpAndVersion(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string // in stdout
	}{
		{[]string{"--help"}, 0, "herdr-sim serve [flags]"},
		{[]string{"-h"}, 0, "herdr-sim version"},
		{[]string{"help"}, 0, "herdr-sim help [serve|turns|demo]"},
		{[]string{"help", "turns"}, 0, "usage: herdr-sim turns"},
		{[]string{"help", "demo"}, 0, "usage: herdr-sim demo"},
		{[]string{"demo", "-h"}, 0, "-link"},
		{[]string{"help", "serve"}, 0, "-world string"},
		{[]string{"serve", "-h"}, 0, "usage: herdr-sim serve [flags]"},
		{[]string{"version"}, 0, "herdr-sim " + buildinfo.Version()},
		{[]string{"--version"}, 0, "herdr-sim " + buildinfo.Version()},
		{[]string{"serve", "-bogus"}, 2, ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := Run(tt.args, &out, &errOut); code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tt.code, errOut.String())
			}
			if !strings.Contains(out.String(), tt.want) {
				t.Errorf("stdout lacks %q:\n%s", tt.want, out.String())
			}
			if tt.code == 0 && errOut.Len() > 0 {
				t.Errorf("stderr = %q, want empty", errOut.String())
			}
		})
	}
}

// requestLines lists the logged request lines for a failure message.
func requestLines(reqs []sockettest.Request) []string {
	lines := make([]string, len(reqs))
	for i, r := range reqs {
		lines[i] = r.Line
	}
	return lines
}
