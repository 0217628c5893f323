package herdrlink

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/herdr-link/herdr-link/e2e/internal/bins"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// binary is herdr-link, built once for all the e2e packages (package
// bins); herdr-sim and herdr-bench are beside it.
var binary string

func TestMain(m *testing.M) {
	dir, err := bins.Dir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "herdr-link")
	os.Exit(simtest.Main(m))
}

const e2eWorld = `{"workspaces":[
 {"id":"w1","label":"app","tabs":[{"id":"w1:t1","panes":[
   {"id":"w1:p1","agent":{"kind":"claude","name":"brain","status":"working"}},
   {"id":"w1:p2","agent":{"kind":"codex","name":"reviewer","status":"idle"}},
   {"id":"w1:p3","agent":{"kind":"claude","name":"stuck","status":"blocked"}}
 ]}]},
 {"id":"w2","label":"infra","tabs":[{"id":"w2:t1","panes":[{"id":"w2:p1","agent":{"kind":"claude","name":"ops","status":"idle"}}]}]}]}`

type session struct {
	*mcp.ClientSession
	listChanged *atomic.Int32
}

// connect starts the built binary as the MCP server of pane, as a host
// would, and connects the official Go SDK client to it.
func connect(t *testing.T, srv *sockettest.Server, pane string, extraEnv ...string) session {
	t.Helper()
	return connectWith(t, srv, pane, nil, extraEnv...)
}

// connectArgs is connect with command-line flags for the server.
func connectArgs(t *testing.T, srv *sockettest.Server, pane string, args []string) session {
	t.Helper()
	return connectWith(t, srv, pane, args)
}

// hangBound bounds the helpers' waits for a server or a call, and the
// waits for outcomes that must come: only a hang reaches it, however
// loaded the machine (it is longer than any server's -timeout here).
const hangBound = time.Minute

// until polls cond every 10 ms for at most d.
func until(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

func connectWith(t *testing.T, srv *sockettest.Server, pane string, args []string, extraEnv ...string) session {
	t.Helper()
	var changed atomic.Int32
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed.Add(1) },
	})
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "HERDR_LINK_LOG=warn")
	if srv != nil {
		cmd.Env = append(cmd.Env, srv.Env(pane)...)
	}
	cmd.Env = append(cmd.Env, extraEnv...)
	ctx, cancel := context.WithTimeout(t.Context(), hangBound)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return session{cs, &changed}
}

// connectEnv connects to a server started with env added to this
// process's, its stderr collected in the builder returned (read it once
// the session is closed); the caller closes the session.
func connectEnv(t *testing.T, env ...string) (session, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(binary)
	cmd.Env = append(os.Environ(), env...)
	stderr := new(strings.Builder)
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return session{cs, new(atomic.Int32)}, stderr
}

func toolNames(t *testing.T, s session) string {
	t.Helper()
	res, err := s.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return strings.Join(names, ",")
}

func call(t *testing.T, s session, name string, args map[string]any) (string, bool, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), hangBound)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var sc map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &sc)
	}
	return text, res.IsError, sc
}

// Long: one MCP session's script, step after step; each step needs the
// state the previous one left.
func TestEndToEndWithGoSDK(t *testing.T) {
	w, err := sockettest.ParseWorld([]byte(e2eWorld))
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = time.Millisecond })
	brain := connect(t, srv, "w1:p1")
	if got := toolNames(t, brain); got != "herdr_link" {
		t.Fatalf("dormant tools %q", got)
	}
	text, isErr, sc := call(t, brain, "herdr_link", map[string]any{})
	if isErr || sc["status"] != "active" || !strings.Contains(text, link.Contract) {
		t.Fatalf("activation: %v %q", isErr, text)
	}
	deadline := time.Now().Add(5 * time.Second)
	for brain.listChanged.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if brain.listChanged.Load() != 1 {
		t.Fatalf("list_changed received %d times", brain.listChanged.Load())
	}
	if got := toolNames(t, brain); got != "herdr_link,herdr_link_peers,herdr_link_start,herdr_link_send,herdr_link_wait,herdr_link_close" {
		t.Fatalf("active tools %q", got)
	}
	_, isErr, sc = call(t, brain, "herdr_link_peers", nil)
	if isErr || fmt.Sprint(sc["peers"]) != "[map[name:reviewer state:idle] map[name:stuck state:blocked]]" {
		t.Fatalf("peers %v", sc)
	}
	// Cross-workspace privacy: ops is in w2.
	text, isErr, _ = call(t, brain, "herdr_link_send", map[string]any{"to": "ops", "message": "hi"})
	text2, _, _ := call(t, brain, "herdr_link_send", map[string]any{"to": "nobody", "message": "hi"})
	if !isErr || text != "PEER_NOT_FOUND: no live agent with that name in this workspace" || text2 != text {
		t.Fatalf("cross-workspace send: %q vs %q", text, text2)
	}
	// Send, receive, reply.
	_, isErr, sent := call(t, brain, "herdr_link_send", map[string]any{"to": "reviewer", "message": "review please"})
	if isErr || sent["status"] != "sent" || sent["delivery"] != "submitted" {
		t.Fatalf("send %v", sent)
	}
	env, ok := link.Extract(w.Typed("w1:p2"))
	if !ok || env.ID != sent["id"] || env.From != "brain" {
		t.Fatalf("reviewer's pane: %q", w.Typed("w1:p2"))
	}
	reviewer := connect(t, srv, "w1:p2")
	_, isErr, held := call(t, reviewer, "herdr_link", map[string]any{"action": "send", "arguments": map[string]any{"to": env.From, "message": "done", "reply_to": env.ID}})
	if isErr || held["delivery"] != link.DeliveryHeld {
		t.Fatalf("reply to the working brain: %v", held)
	}
	// brain's turn ends: the held reply is typed.
	if err := w.SetStatus("w1:p1", "idle"); err != nil {
		t.Fatal(err)
	}
	var back link.Envelope
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if back, ok = link.Extract(w.Typed("w1:p1")); ok {
			break
		}
	}
	if !ok || back.ReplyTo != env.ID || back.From != "reviewer" {
		t.Fatalf("brain's pane: %q", w.Typed("w1:p1"))
	}
	// Each error a model can see.
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"herdr_link_send", map[string]any{"to": "stuck", "message": "x", "when": "now"}, "SEND_FAILED: "},
		{"herdr_link_send", map[string]any{"to": "reviewer", "message": "\n"}, "INVALID_ARGUMENT: "},
		{"herdr_link_close", map[string]any{"agent": "ops"}, "PEER_NOT_FOUND: "},
	}
	for _, c := range cases {
		if text, isErr, _ := call(t, brain, c.tool, c.args); !isErr || !strings.HasPrefix(text, c.want) {
			t.Errorf("%s %v: %q", c.tool, c.args, text)
		}
	}
	// Sent with the default, a message to the blocked agent waits.
	if _, isErr, sc := call(t, brain, "herdr_link_send", map[string]any{"to": "stuck", "message": "x"}); isErr || sc["delivery"] != link.DeliveryHeld {
		t.Errorf("send to the blocked agent: %v", sc)
	}
	srv.SetFault("", sockettest.Fault{Hang: true})
	start := time.Now()
	if text, isErr, _ := call(t, brain, "herdr_link_peers", nil); !isErr || !strings.HasPrefix(text, "NOT_IN_HERDR: ") || time.Since(start) > 7*time.Second {
		t.Errorf("hung Herdr: %q after %v", text, time.Since(start))
	}
	srv.ClearFaults()
	// Close.
	if text, isErr, _ := call(t, brain, "herdr_link_close", map[string]any{"agent": "reviewer"}); isErr || !strings.Contains(text, `"closed"`) {
		t.Fatalf("close: %q", text)
	}
	if _, ok := w.Agent("reviewer"); ok {
		t.Fatal("reviewer still there")
	}
	// An unknown tool is a protocol error.
	if _, err := brain.CallTool(t.Context(), &mcp.CallToolParams{Name: "nope"}); err == nil {
		t.Fatal("unknown tool accepted")
	}
}

func TestOutsideHerdr(t *testing.T) {
	s := connect(t, nil, "", "HERDR_ENV=", "HERDR_PANE_ID=")
	if got := toolNames(t, s); got != "" {
		t.Fatalf("tools outside Herdr: %q", got)
	}
	if text, isErr, _ := call(t, s, "herdr_link", nil); !isErr || !strings.HasPrefix(text, "NOT_IN_HERDR: ") {
		t.Fatalf("call outside Herdr: %q", text)
	}
	// The empty list comes with the reason, where hosts show it.
	if in := s.InitializeResult().Instructions; !strings.Contains(in, "HERDR_ENV is not set") || !strings.Contains(in, "env_vars") {
		t.Fatalf("instructions outside Herdr: %q", in)
	}
}

// In a Herdr pane whose socket is not where the environment says, the
// tool list is empty and instructions and the log say why, without the
// path or pane id; nothing is dialled at start-up.
func TestSocketMissingExplained(t *testing.T) {
	dir := t.TempDir()
	s, stderr := connectEnv(t, "HERDR_ENV=1", "HERDR_PANE_ID=w1:p1", "HERDR_SOCKET_PATH="+filepath.Join(dir, "herdr.sock"))
	cs := s.ClientSession
	if got := toolNames(t, s); got != "" {
		t.Fatalf("tools: %q", got)
	}
	in := cs.InitializeResult().Instructions
	if !strings.Contains(in, "no Herdr socket exists at the path HERDR_SOCKET_PATH names") || strings.Contains(in, dir) || strings.Contains(in, "w1:p1") {
		t.Fatalf("instructions: %q", in)
	}
	cs.Close()
	// The host did pass HERDR_SOCKET_PATH on: the log names the path as
	// what is wrong, not the host's configuration.
	if log := stderr.String(); !strings.Contains(log, "no Herdr socket") || strings.Contains(log, "herdr-link config codex") {
		t.Fatalf("stderr: %s", log)
	}
}

// In a herdr-core terminal (HC_TERMINAL_ID, none of the Herdr TUI's pane
// variables) the instructions, the call error and the log name herdr-core
// as not supported yet, not a host that failed to pass Herdr's
// environment on, and never show the terminal id.
func TestHerdrCoreNamed(t *testing.T) {
	const term = "hc-term-4711"
	s, stderr := connectEnv(t, "HERDR_ENV=", "HERDR_PANE_ID=", "HERDR_SOCKET_PATH=", "HC_TERMINAL_ID="+term, "HC_SESSION=main")
	cs := s.ClientSession
	if got := toolNames(t, s); got != "" {
		t.Fatalf("tools in a herdr-core terminal: %q", got)
	}
	text, isErr, _ := call(t, s, "herdr_link", nil)
	in := cs.InitializeResult().Instructions
	cs.Close()
	for what, got := range map[string]string{"instructions": in, "call": text, "stderr": stderr.String()} {
		for _, w := range []string{"herdr-core terminal", "speaks the Herdr TUI's socket", "not supported yet"} {
			if !strings.Contains(got, w) {
				t.Errorf("%s lacks %q: %s", what, w, got)
			}
		}
		for _, w := range []string{"did not pass", term} {
			if strings.Contains(got, w) {
				t.Errorf("%s holds %q: %s", what, w, got)
			}
		}
	}
	if !isErr || !strings.HasPrefix(text, "NOT_IN_HERDR: ") {
		t.Errorf("call: error %v, text %q, want NOT_IN_HERDR", isErr, text)
	}
}

// The process exits 0 within 1 s of stdin EOF or SIGTERM, even with a call
// in flight against a hung Herdr; stdout carries only protocol lines.
func TestProcessLifecycle(t *testing.T) {
	for _, how := range []string{"eof", "sigterm"} {
		t.Run(how, func(t *testing.T) {
			srv := simtest.New(t, nil)
			srv.SetFault("", sockettest.Fault{Hang: true})
			cmd := exec.Command(binary, "-log-level", "debug")
			cmd.Env = append(os.Environ(), srv.Env("w1:p1")...)
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			var stderr strings.Builder
			cmd.Stderr = &stderr
			start := time.Now()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if el := time.Since(start); el > 200*time.Millisecond {
				t.Logf("process start took %v", el)
			}
			fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
			fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"herdr_link_peers"}}`)
			sc := bufio.NewScanner(stdout)
			var lines []string
			for len(lines) < 2 && sc.Scan() { // the initialize response and list_changed
				lines = append(lines, sc.Text())
			}
			time.Sleep(50 * time.Millisecond)
			stopAt := time.Now()
			if how == "eof" {
				stdin.Close()
			} else {
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
			for sc.Scan() {
				lines = append(lines, sc.Text())
			}
			err := cmd.Wait()
			if el := time.Since(stopAt); el > time.Second {
				t.Fatalf("exit took %v", el)
			}
			if err != nil {
				t.Fatalf("exit: %v\n%s", err, stderr.String())
			}
			for _, l := range lines {
				if !json.Valid([]byte(l)) || !strings.Contains(l, `"jsonrpc":"2.0"`) {
					t.Fatalf("non-protocol stdout line %q", l)
				}
			}
			if !strings.Contains(stderr.String(), "level=") {
				t.Fatalf("no logs on stderr: %q", stderr.String())
			}
		})
	}
}

func TestDemoCommand(t *testing.T) {
	out, err := exec.Command(filepath.Join(filepath.Dir(binary), "herdr-sim"), "demo").CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	for _, never := range []string{"interrupting", `"delivery":"queued"`} {
		if strings.Contains(string(out), never) {
			t.Errorf("demo output holds %q:\n%s", never, out)
		}
	}
	for _, want := range []string{`PEER_NOT_FOUND`, `"status":"sent"`, `"delivery":"submitted"`, `"delivery":"held"`, `(matches: true)`, "once the reviewer had finished it",
		"The reviewer's model received 2 separate turns:", "turn 1: 1 envelope(s)", "turn 2: 1 envelope(s)", `"status":"closed"`, `[herdr_link, herdr_link_peers, herdr_link_start, herdr_link_send, herdr_link_wait, herdr_link_close]`,
		`{"status":"started","agent":"tester","state":"idle"`, `tester's model received its first turn, from "brain"`, `brain's model received tester's reply (reply_to matches: true)`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}
