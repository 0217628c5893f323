package socket_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/internal/testsupport/lineserver"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestResolvePath(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		path string
		rule string
	}{
		{"socket path wins", map[string]string{"HERDR_SOCKET_PATH": "/run/x.sock", "HERDR_SESSION": "work", "HOME": "/h"}, "/run/x.sock", socket.RuleSocketPath},
		{"named session", map[string]string{"HERDR_SESSION": "work", "HOME": "/h"}, "/h/.config/herdr/sessions/work/herdr.sock", socket.RuleSession},
		{"default session name", map[string]string{"HERDR_SESSION": "default", "HOME": "/h"}, "/h/.config/herdr/herdr.sock", socket.RuleDefault},
		{"invalid session ignored", map[string]string{"HERDR_SESSION": "../x", "HOME": "/h"}, "/h/.config/herdr/herdr.sock", socket.RuleDefault},
		{"xdg config", map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/herdr/herdr.sock", socket.RuleDefault},
		{"no home", map[string]string{}, filepath.Join(os.TempDir(), "herdr", "herdr.sock"), socket.RuleDefault},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := socket.ResolvePath(env(tt.env))
			if err != nil {
				t.Fatalf("ResolvePath: %v", err)
			}
			if r.Path != tt.path || r.Rule != tt.rule {
				t.Fatalf("ResolvePath = %s by %s, want %s by %s", r.Path, r.Rule, tt.path, tt.rule)
			}
		})
	}
	c := &socket.Client{Path: "/explicit", Getenv: env(map[string]string{"HERDR_SOCKET_PATH": "/env"})}
	if r, _ := c.Resolve(); r.Path != "/explicit" || r.Rule != socket.RuleExplicit {
		t.Fatalf("Resolve = %s by %s, want /explicit by %s", r.Path, r.Rule, socket.RuleExplicit)
	}
	for name, ok := range map[string]bool{"a": true, "work.1_x-y": true, ".": false, "..": false, "": false, "a/b": false, strings.Repeat("a", 65): false} {
		if socket.ValidSessionName(name) != ok {
			t.Errorf("ValidSessionName(%q) != %v", name, ok)
		}
	}
}

func TestServerNotRunning(t *testing.T) {
	dir := t.TempDir()
	ctx := t.Context()
	tests := []struct {
		name string
		c    *socket.Client
		hint string
	}{
		{"missing socket", &socket.Client{Path: filepath.Join(dir, "none.sock")}, "herdr"},
		{"named session", &socket.Client{Getenv: env(map[string]string{"HERDR_SESSION": "work", "XDG_CONFIG_HOME": dir})}, "herdr session attach work"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.c.AgentList(ctx)
			var ue *socket.UnavailableError
			if !errors.Is(err, socket.ErrUnavailable) || !errors.As(err, &ue) || ue.Hint != tt.hint {
				t.Fatalf("err = %v", err)
			}
			if !strings.Contains(err.Error(), "no herdr server is running at ") || !strings.Contains(err.Error(), "run `"+tt.hint+"` to start or attach it") {
				t.Fatalf("message %q", err)
			}
			if socket.CodeOf(err) != "server_not_running" {
				t.Fatalf("code %q", socket.CodeOf(err))
			}
		})
	}
	// A socket file nobody listens on: connection refused, same error.
	stale := filepath.Join(dir, "stale.sock")
	ln, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := (&socket.Client{Path: stale}).Ping(ctx); !errors.Is(err, socket.ErrUnavailable) {
		t.Fatalf("refused: %v", err)
	}
}

// rawServer answers every connection with reply (after reading one line).
func rawServer(t *testing.T, reply func(req []byte) []byte) string {
	t.Helper()
	srv, err := lineserver.New(reply)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv.Path()
}

func TestResponseErrors(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name  string
		reply string
		want  error
	}{
		{"not json", "hello\n", socket.ErrMalformedResponse},
		{"no id", `{"result":{"type":"pong"}}` + "\n", socket.ErrMalformedResponse},
		{"neither result nor error", `{"id":"herdr-link:1"}` + "\n", socket.ErrMalformedResponse},
		{"foreign id", `{"id":"zzz","result":{"type":"pong","version":"x","protocol":20}}` + "\n", socket.ErrProtocol},
		{"wrong result type", `{"id":"herdr-link:1","result":{"type":"ok"}}` + "\n", socket.ErrProtocol},
		{"empty", "", socket.ErrEmptyResponse},
		{"no newline", `{"id":"herdr-link:1","result":{"type":"pong","version":"x","protocol":20}}`, socket.ErrTruncatedResponse},
		{"invalid_request with empty id", `{"id":"","error":{"code":"invalid_request","message":"invalid request: x"}}` + "\n", socket.ErrInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := rawServer(t, func([]byte) []byte { return []byte(tt.reply) })
			c := &socket.Client{Path: path, Protocol: socket.ProtocolOff}
			if _, err := c.Ping(ctx); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestDeadlines runs on the fake clock of a synctest bubble, so each bound
// is met exactly, however loaded the machine.
func TestDeadlines(t *testing.T) { synctest.Test(t, testDeadlines) }

func testDeadlines(t *testing.T) {
	srv := simtest.New(t, nil, sockettest.InMemory)
	srv.SetFault("", sockettest.Fault{Hang: true})
	c := srv.Client()
	c.Timeout = 200 * time.Millisecond
	// The client's default timeout applies when ctx has none.
	start := time.Now()
	_, err := c.Ping(t.Context())
	if !errors.Is(err, socket.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if el := time.Since(start); el != 200*time.Millisecond {
		t.Fatalf("timed out after %v, want 200ms", el)
	}
	// The caller's deadline wins.
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start = time.Now()
	if _, err := c.Ping(ctx); !errors.Is(err, socket.ErrTimeout) || time.Since(start) != 50*time.Millisecond {
		t.Fatalf("ctx deadline: %v after %v", err, time.Since(start))
	}
	// Cancellation closes the connection at once.
	ctx2, cancel2 := context.WithCancel(t.Context())
	go func() { time.Sleep(30 * time.Millisecond); cancel2() }()
	start = time.Now()
	if _, err := c.Ping(ctx2); !errors.Is(err, context.Canceled) || time.Since(start) != 30*time.Millisecond {
		t.Fatalf("cancel: %v after %v", err, time.Since(start))
	}
}

func TestProtocolCheck(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		protocol uint32
		policy   socket.ProtocolPolicy
		wantErr  bool
		wantText string
	}{
		{20, socket.ProtocolStrict, false, ""},
		{22, socket.ProtocolStrict, false, ""},
		{19, socket.ProtocolStrict, false, ""},
		{23, socket.ProtocolStrict, false, ""},
		{250, socket.ProtocolStrict, false, ""},
		{18, socket.ProtocolStrict, true, "needs protocol 19 or newer (Herdr 0.8.0 or later): upgrade Herdr"},
		{18, socket.ProtocolLenient, false, ""},
		{18, socket.ProtocolOff, false, ""},
	}
	for _, tt := range tests {
		srv := simtest.New(t, nil, func(s *sockettest.Server) { s.Protocol = tt.protocol })
		c := srv.Client()
		c.Protocol = tt.policy
		var warned string
		c.Warn = func(m string) { warned = m }
		_, err := c.AgentList(ctx)
		if tt.wantErr != (err != nil) || (err != nil && (!errors.Is(err, socket.ErrProtocolMismatch) || !strings.Contains(err.Error(), tt.wantText))) {
			t.Errorf("protocol %d policy %d: err = %v", tt.protocol, tt.policy, err)
		}
		if tt.policy == socket.ProtocolLenient && !strings.Contains(warned, "protocol 18") {
			t.Errorf("lenient: no warning (%q)", warned)
		}
		// Ping at most once per client.
		_, _ = c.AgentList(ctx)
		pings := 0
		for _, m := range srv.Methods() {
			if m == "ping" {
				pings++
			}
		}
		want := 1
		if tt.policy == socket.ProtocolOff {
			want = 0
		}
		if pings != want {
			t.Errorf("protocol %d policy %d: %d pings, want %d", tt.protocol, tt.policy, pings, want)
		}
	}
}

func TestCallAnyMethod(t *testing.T) {
	srv := simtest.New(t, nil)
	c := srv.Client()
	var r schema.ResponseResult
	if err := c.Call(t.Context(), schema.MethodWorkspaceList, nil, &r); err != nil {
		t.Fatal(err)
	}
	if r.WorkspaceList == nil {
		t.Fatal("workspace.list result has no workspace list, want one")
	}
	// A request Herdr cannot parse comes back as invalid_request.
	err := c.Call(t.Context(), schema.MethodAgentGet, map[string]int{"target": 1}, nil)
	if !errors.Is(err, socket.ErrInvalidRequest) {
		t.Fatalf("err = %v", err)
	}
	// Params that cannot be encoded fail before dialing.
	srv.ResetRequests()
	if err := c.Call(t.Context(), "ping", func() {}, nil); err == nil || len(srv.Requests()) != 0 {
		t.Fatalf("unencodable params: %v, %d requests", err, len(srv.Requests()))
	}
}

// A failure after the request line was written in full carries
// ErrAfterWrite (Herdr may have acted on it); one before it does not.
func TestAfterWrite(t *testing.T) {
	ctx := t.Context()
	after := []struct {
		name  string
		fault sockettest.Fault
		want  error
	}{
		{"hang", sockettest.Fault{Hang: true}, socket.ErrTimeout},
		{"drop", sockettest.Fault{DropBeforeResponse: true}, socket.ErrEmptyResponse},
		{"mid", sockettest.Fault{DropMidResponse: true}, socket.ErrTruncatedResponse},
		{"garbage", sockettest.Fault{Garbage: true}, socket.ErrMalformedResponse},
		{"wrong id", sockettest.Fault{WrongID: true}, socket.ErrProtocol},
	}
	for _, tt := range after {
		t.Run(tt.name, func(t *testing.T) {
			srv := simtest.New(t, nil)
			c := srv.Client()
			c.Timeout = 200 * time.Millisecond
			if _, err := c.AgentList(ctx); err != nil {
				t.Fatal(err)
			}
			srv.SetFault(schema.MethodAgentGet, tt.fault)
			_, err := c.AgentGet(ctx, "brain")
			if !errors.Is(err, socket.ErrAfterWrite) || !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v after the write", err, tt.want)
			}
		})
	}
	// A wrong result type is a failure after the write too.
	path := rawServer(t, func([]byte) []byte { return []byte(`{"id":"herdr-link:1","result":{"type":"ok"}}` + "\n") })
	if _, err := (&socket.Client{Path: path, Protocol: socket.ProtocolOff}).Ping(ctx); !errors.Is(err, socket.ErrAfterWrite) || !errors.Is(err, socket.ErrProtocol) {
		t.Fatalf("wrong type: %v", err)
	}
	// Refusals are answers, not unknown outcomes.
	srv := simtest.New(t, nil)
	if _, err := srv.Client().AgentGet(ctx, "nobody"); !errors.Is(err, socket.ErrAgentNotFound) || errors.Is(err, socket.ErrAfterWrite) {
		t.Fatalf("refusal: %v", err)
	}
	// Before the write: no server, a cancelled context, an oversize line.
	if _, err := (&socket.Client{Path: filepath.Join(t.TempDir(), "none.sock")}).Ping(ctx); err == nil || errors.Is(err, socket.ErrAfterWrite) {
		t.Fatalf("no server: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := srv.Client().Ping(cctx); err == nil || errors.Is(err, socket.ErrAfterWrite) {
		t.Fatalf("cancelled before: %v", err)
	}
	srv.ResetRequests()
	c := srv.Client()
	c.Protocol = socket.ProtocolOff
	_, err := c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "brain", Text: strings.Repeat("x", socket.MaxRequestBytes)})
	if !errors.Is(err, socket.ErrRequestTooLarge) || errors.Is(err, socket.ErrAfterWrite) || len(srv.Requests()) != 0 {
		t.Fatalf("oversize: %v, %d requests", err, len(srv.Requests()))
	}
}
