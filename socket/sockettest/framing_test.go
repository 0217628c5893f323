package sockettest_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

func TestMain(m *testing.M) { os.Exit(simtest.Main(m)) }

// exchange writes data on a fresh connection and reads everything the
// server writes until it closes the connection. A write the server cut
// short (it closes on an oversized line) is not an error.
func exchange(t *testing.T, srv *sockettest.Server, data []byte) string {
	t.Helper()
	c, err := srv.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(data); err != nil {
		t.Logf("write: %v", err)
	}
	out, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return string(out)
}

func TestSilentCloses(t *testing.T) { synctest.Test(t, testSilentCloses) }

func testSilentCloses(t *testing.T) {
	srv := simtest.New(t, nil, sockettest.InMemory, func(s *sockettest.Server) { s.ReadTimeout = 200 * time.Millisecond })
	tests := []struct {
		name string
		data []byte
	}{
		{"blank line", []byte("\n")},
		{"whitespace line", []byte("   \t\r\n")},
		{"invalid utf-8", []byte("{\"id\":\"\xff\",\"method\":\"ping\",\"params\":{}}\n")},
		{"request over 1 MiB", append(bytes.Repeat([]byte(" "), sockettest.MaxRequestBytes+1), '\n')},
	}
	for _, tt := range tests {
		bubbleStep(t, tt.name, func(t *testing.T) {
			if got := exchange(t, srv, tt.data); got != "" {
				t.Fatalf("reply %q, want none", got)
			}
		})
	}
	bubbleStep(t, "EOF before newline", func(t *testing.T) {
		c, err := srv.Dial()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = c.Write([]byte(`{"id":"1","method":"ping","params":{}}`))
		_ = closeWrite(c)
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		out, _ := io.ReadAll(c)
		if len(out) != 0 {
			t.Fatalf("reply %q, want none", out)
		}
	})
	bubbleStep(t, "first read timeout", func(t *testing.T) {
		c, err := srv.Dial()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		out, err := io.ReadAll(c)
		if err != nil || len(out) != 0 {
			t.Fatalf("reply %q (%v), want a silent close", out, err)
		}
	})
	bubbleStep(t, "exactly 1 MiB is read", func(t *testing.T) {
		req := []byte(`{"id":"big","method":"ping","params":{}}`)
		line := append(bytes.Repeat([]byte(" "), sockettest.MaxRequestBytes-len(req)), req...)
		if got := exchange(t, srv, append(line, '\n')); !strings.Contains(got, `"pong"`) {
			t.Fatalf("reply %q, want a pong", got)
		}
	})
}

func TestInvalidRequests(t *testing.T) {
	srv := simtest.New(t, nil)
	tests := []struct {
		name, line, want string
	}{
		{"not json", `not json`, "invalid request: "},
		{"missing params", `{"id":"1","method":"ping"}`, "invalid request: missing field `params` at line 1 column 26"},
		{"missing id", `{"method":"ping","params":{}}`, "missing field `id`"},
		{"missing method", `{"id":"1","params":{}}`, "missing field `method`"},
		{"unknown method", `{"id":"1","method":"bogus","params":{}}`, "unknown variant `bogus`, expected one of `ping`, `server.stop`"},
		{"case-mismatched method", `{"id":"1","method":"Ping","params":{}}`, "unknown variant `Ping`"},
		{"integer id", `{"id":1,"method":"ping","params":{}}`, "invalid type: integer `1`, expected a string at line 1 column 7"},
		{"null params", `{"id":"1","method":"agent.get","params":null}`, "invalid type: null, expected struct AgentTarget"},
		{"missing target", `{"id":"1","method":"agent.get","params":{}}`, "missing field `target`"},
		{"mistyped target", `{"id":"1","method":"agent.get","params":{"target":5}}`, "invalid type"},
		{"trailing data", `{"id":"1","method":"ping","params":{}} {}`, "trailing characters"},
		{"duplicate method", `{"id":"1","method":"ping","method":"ping","params":{}}`, "duplicate field `method`"},
		{"array", `[]`, "invalid type: sequence"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := exchange(t, srv, []byte(tt.line+"\n"))
			var resp schema.ErrorResponse
			if err := jsonx.Unmarshal([]byte(got), &resp); err != nil {
				t.Fatalf("reply %q: %v", got, err)
			}
			if resp.ID != "" || resp.Error.Code != "invalid_request" || !strings.Contains(resp.Error.Message, tt.want) {
				t.Fatalf("reply %q, want invalid_request with id \"\" containing %q", got, tt.want)
			}
			if strings.Count(got, "\n") != 1 || !strings.HasSuffix(got, "\n") {
				t.Fatalf("reply %q is not exactly one line", got)
			}
		})
	}
}

func TestLenientParsing(t *testing.T) {
	srv := simtest.New(t, nil)
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":"a","method":"ping","params":{"extra":1}}`,
		`  {"id":"a","method":"ping","params":[]}  `,
		`{"id":"a","method":"ping","params":{}}` + "\r",
		`{"id":"","method":"agent.list","params":{}}`,
	} {
		got := exchange(t, srv, []byte(line+"\n"))
		if strings.Contains(got, "error") || strings.Count(got, "\n") != 1 {
			t.Errorf("%s → %q, want one success line", line, got)
		}
	}
}

func TestOneRequestPerConnection(t *testing.T) {
	srv := simtest.New(t, nil)
	got := exchange(t, srv, []byte(`{"id":"1","method":"ping","params":{}}`+"\n"+`{"id":"2","method":"ping","params":{}}`+"\n"))
	if strings.Count(got, "\n") != 1 || !strings.Contains(got, `"id":"1"`) {
		t.Fatalf("reply %q, want only the first request answered", got)
	}
}

func TestPing(t *testing.T) {
	tests := []struct {
		name     string
		protocol uint32
		version  string
		caps     *schema.ServerCapabilities
		want     string
	}{
		{"default", 0, "", &schema.ServerCapabilities{LiveHandoff: true, DetachedServerDaemon: true},
			// Byte for byte the facts sheet's example (serde's field order).
			`{"id":"p","result":{"type":"pong","version":"0.8.2","protocol":20,"capabilities":{"live_handoff":true,"detached_server_daemon":true}}}`},
		{"protocol 22, no capabilities", 22, "0.9.1", nil,
			`{"id":"p","result":{"type":"pong","version":"0.9.1","protocol":22,"capabilities":null}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := simtest.New(t, nil, func(s *sockettest.Server) {
				if tt.protocol != 0 {
					s.Protocol, s.Version = tt.protocol, tt.version
				}
				s.Capabilities = tt.caps
			})
			got := strings.TrimSpace(exchange(t, srv, []byte(`{"id":"p","method":"ping","params":{}}`+"\n")))
			if got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestSocketFile(t *testing.T) {
	srv := simtest.New(t, nil)
	fi, err := os.Stat(srv.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want a socket with 0600", fi.Mode())
	}
	// A live socket makes a second server fail.
	other := sockettest.NewUnstartedServer(nil)
	if err := other.StartAt(srv.Path()); !errors.Is(err, sockettest.ErrBusy) {
		t.Fatalf("start on a live socket: %v, want ErrBusy", err)
	}
	// A stale socket file is replaced.
	dir, _ := os.MkdirTemp("", "hs")
	defer os.RemoveAll(dir)
	stale := filepath.Join(dir, "herdr.sock")
	ln, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	s2 := sockettest.NewUnstartedServer(nil)
	if err := s2.StartAt(stale); err != nil {
		t.Fatalf("start over a stale socket: %v", err)
	}
	if _, err := s2.Client().Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	s2.Close()
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket file left after Close: %v", err)
	}
}

func TestConcurrentClients(t *testing.T) {
	srv := simtest.New(t, nil)
	c := srv.Client()
	var wg sync.WaitGroup
	errs := make(chan error, 64*5)
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ctx := t.Context()
			for j := 0; j < 5; j++ {
				switch (i + j) % 4 {
				case 0:
					if _, err := c.AgentList(ctx); err != nil {
						errs <- err
					}
				case 1:
					if _, err := c.AgentGet(ctx, "brain"); err != nil {
						errs <- err
					}
				case 2:
					if _, err := c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "reviewer", Text: fmt.Sprint("hi ", i, j)}); err != nil {
						errs <- err
					}
				case 3:
					if _, err := c.SessionSnapshot(ctx); err != nil {
						errs <- err
					}
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := len(srv.Requests()); n < 64*5 {
		t.Fatalf("logged %d requests, want at least %d", n, 64*5)
	}
}

func TestPollRead(t *testing.T) { synctest.Test(t, testPollRead) }

func testPollRead(t *testing.T) {
	srv := simtest.New(t, nil, sockettest.InMemory, func(s *sockettest.Server) { s.PollRead = true })
	// A request written at once is usually read at the first poll.
	c, err := srv.Dial()
	if err != nil {
		t.Fatal(err)
	}
	// A request that arrives late pays the 100 ms sleep.
	time.Sleep(30 * time.Millisecond)
	start := time.Now()
	_, _ = c.Write([]byte(`{"id":"1","method":"ping","params":{}}` + "\n"))
	out, _ := io.ReadAll(c)
	c.Close()
	if !strings.Contains(string(out), "pong") {
		t.Fatalf("reply %q", out)
	}
	if srv.PollPenalties() != 1 {
		t.Fatalf("penalties = %d, want 1", srv.PollPenalties())
	}
	if el := time.Since(start); el < 30*time.Millisecond {
		t.Fatalf("late request answered after %v; the poll sleep should delay it", el)
	}
}

func TestServerStop(t *testing.T) {
	srv := simtest.New(t, nil)
	c := srv.Client()
	ctx := t.Context()
	if err := c.Call(ctx, schema.MethodServerStop, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AgentList(ctx); !errors.Is(err, socket.ErrServerUnavailable) {
		t.Fatalf("after server.stop: %v, want server_unavailable", err)
	}
	if _, err := c.Ping(ctx); err != nil {
		t.Fatalf("ping after server.stop: %v", err)
	}
}
