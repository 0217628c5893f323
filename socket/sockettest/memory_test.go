package sockettest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// closeWrite half-closes a client connection, on a socket or in memory.
func closeWrite(c net.Conn) error {
	hc, ok := c.(interface{ CloseWrite() error })
	if !ok {
		return fmt.Errorf("%T cannot half-close", c)
	}
	return hc.CloseWrite()
}

// bubbleStep is t.Run for a test inside a synctest bubble, where subtests
// cannot start: f runs at once with the same t, after a log line that
// names the step.
func bubbleStep(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	t.Logf("step: %s", name)
	f(t)
}

// TestInMemoryServer: an in-memory server runs inside a synctest bubble,
// where its timeouts take exactly their time on the fake clock: Herdr's
// 5 s first read, a wait's timeout_ms, a client's deadline; a half-closed
// client still gets its reply; a refusing server refuses.
func TestInMemoryServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := simtest.New(t, nil, sockettest.InMemory)
		c := srv.Client()
		ctx := t.Context()
		if _, err := c.Ping(ctx); err != nil {
			t.Fatal(err)
		}
		// A silent client is closed without a reply after exactly 5 s.
		conn, err := srv.Dial()
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if out, _ := io.ReadAll(conn); len(out) != 0 || time.Since(start) != sockettest.FirstReadTimeout {
			t.Fatalf("silent client: %q after %v", out, time.Since(start))
		}
		conn.Close()
		// agent.wait times out after exactly its timeout_ms.
		ms := uint64(10 * 60 * 1000)
		long, cancelLong := context.WithTimeout(ctx, time.Hour)
		defer cancelLong()
		start = time.Now()
		err = c.Call(long, schema.MethodAgentWait, schema.AgentWaitParams{Target: "ops", Until: []schema.AgentStatus{schema.AgentStatusIdle}, TimeoutMS: &ms}, nil)
		if codeOf(err) != "timeout" || time.Since(start) < 10*time.Minute || time.Since(start) > 10*time.Minute+srv.Tick {
			t.Fatalf("agent.wait: %v after %v", err, time.Since(start))
		}
		// The client's own deadline.
		cctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
		defer cancel()
		start = time.Now()
		if err := c.Call(cctx, schema.MethodAgentWait, schema.AgentWaitParams{Target: "ops", Until: []schema.AgentStatus{schema.AgentStatusIdle}}, nil); !errors.Is(err, socket.ErrTimeout) || time.Since(start) != 30*time.Millisecond {
			t.Fatalf("client deadline: %v after %v", err, time.Since(start))
		}
		// Half-closed after the request: the reply still comes.
		conn, err = srv.Dial()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write([]byte(`{"id":"1","method":"ping","params":{}}` + "\n")); err != nil {
			t.Fatal(err)
		}
		if err := closeWrite(conn); err != nil {
			t.Fatal(err)
		}
		if out, _ := io.ReadAll(conn); !strings.Contains(string(out), `"pong"`) {
			t.Fatalf("half-closed: %q", out)
		}
		conn.Close()
		// Refusing, then accepting again.
		if err := srv.SetRefuse(true); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Ping(ctx); !errors.Is(err, socket.ErrUnavailable) {
			t.Fatalf("refusing: %v", err)
		}
		if err := srv.SetRefuse(false); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Ping(ctx); err != nil {
			t.Fatalf("after refusing: %v", err)
		}
	})
}
