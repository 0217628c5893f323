package socket_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/testsupport/lineserver"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// Version tolerance: a method Herdr does not know is reported
// as such; nothing else about the error changes.
func TestMethodUnsupported(t *testing.T) {
	srv := simtest.New(t, nil)
	srv.SetMissing(schema.MethodAgentRename)
	c := srv.Client()
	_, err := c.AgentRename(t.Context(), "brain", nil)
	var mu *socket.MethodUnsupportedError
	if !errors.As(err, &mu) || mu.Method != schema.MethodAgentRename || !errors.Is(err, socket.ErrMethodUnsupported) ||
		!errors.Is(err, socket.ErrInvalidRequest) || socket.CodeOf(err) != "method_unsupported" {
		t.Fatalf("err = %v (%T)", err, err)
	}
	// Another invalid_request stays one.
	err = c.Call(t.Context(), schema.MethodAgentGet, map[string]int{"target": 1}, nil)
	if errors.Is(err, socket.ErrMethodUnsupported) || !errors.Is(err, socket.ErrInvalidRequest) {
		t.Fatalf("a params error: %v", err)
	}
	// Unknown variant of a different method (a stale server listing) is
	// not this method missing.
	e := socket.Refusal("agent.get", &schema.ErrorBody{Code: "invalid_request", Message: "invalid request: unknown variant `bogus`, expected one of `ping`"})
	if errors.Is(e, socket.ErrMethodUnsupported) {
		t.Fatalf("misread %v", e)
	}
}

// Unknown result fields, unknown result type tags and pong capabilities
// of any shape never break a call; a known tag of another result does.
func TestResultTolerance(t *testing.T) {
	tests := []struct {
		name, reply string
		call        func(*socket.Client) error
		wantErr     error
	}{
		{"extra agent fields", `{"id":"%ID%","result":{"type":"agent_info","agent":{"terminal_id":"term_1","agent_status":"blocked","workspace_id":"w1","tab_id":"w1:t1","pane_id":"w1:p1","focused":false,"state_change_seq":1,"revision":0,"completion_seq":4,"agent_instance_id":{"a":[1]}},"hint":"x"}}`,
			func(c *socket.Client) error { _, err := c.AgentGet(t.Context(), "x"); return err }, nil},
		{"unknown status", `{"id":"%ID%","result":{"type":"agent_info","agent":{"terminal_id":"term_1","agent_status":"thinking","workspace_id":"w1","tab_id":"w1:t1","pane_id":"w1:p1","focused":false,"state_change_seq":1,"revision":0}}}`,
			func(c *socket.Client) error { _, err := c.AgentGet(t.Context(), "x"); return err }, nil},
		{"unknown result tag", `{"id":"%ID%","result":{"type":"agent_info_v2","agent":{"terminal_id":"term_1","agent_status":"idle","workspace_id":"w1","tab_id":"w1:t1","pane_id":"w1:p1","focused":false,"state_change_seq":1,"revision":0}}}`,
			func(c *socket.Client) error { _, err := c.AgentGet(t.Context(), "x"); return err }, nil},
		{"known wrong tag", `{"id":"%ID%","result":{"type":"pane_info","pane":{}}}`,
			func(c *socket.Client) error { _, err := c.AgentGet(t.Context(), "x"); return err }, socket.ErrProtocol},
		{"pong without capabilities", `{"id":"%ID%","result":{"type":"pong","version":"0.9.9","protocol":24}}`,
			func(c *socket.Client) error { _, err := c.Ping(t.Context()); return err }, nil},
		{"pong with odd capabilities", `{"id":"%ID%","result":{"type":"pong","version":"1.0.0","protocol":30,"capabilities":{"live_handoff":"yes","detached_server_daemon":true,"graphics":{"max":2},"endpoint_protocol_generation":null}}}`,
			func(c *socket.Client) error { _, err := c.Ping(t.Context()); return err }, nil},
		{"pong with capabilities a list", `{"id":"%ID%","result":{"type":"pong","version":"1.0.0","protocol":30,"capabilities":[1]}}`,
			func(c *socket.Client) error { _, err := c.Ping(t.Context()); return err }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := lineserver.New(func(line []byte) []byte {
				var req struct{ ID string }
				_ = jsonx.Unmarshal(line, &req)
				return []byte(strings.ReplaceAll(tt.reply, "%ID%", req.ID) + "\n")
			})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			c := &socket.Client{Path: srv.Path(), Protocol: socket.ProtocolOff}
			err = tt.call(c)
			if (tt.wantErr == nil) != (err == nil) || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
	// Capabilities are read as far as they make sense.
	srv, _ := lineserver.New(func(line []byte) []byte {
		var req struct{ ID string }
		_ = jsonx.Unmarshal(line, &req)
		return []byte(`{"id":"` + req.ID + `","result":{"type":"pong","version":"1.0.0","protocol":30,"capabilities":{"live_handoff":"yes","detached_server_daemon":true}}}` + "\n")
	})
	defer srv.Close()
	pong, err := (&socket.Client{Path: srv.Path(), Protocol: socket.ProtocolOff}).Ping(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if pong.Capabilities == nil {
		t.Fatal("pong has no capabilities, want live_handoff and detached_server_daemon")
	}
	if pong.Capabilities.LiveHandoff || !pong.Capabilities.DetachedServerDaemon || pong.Protocol != 30 {
		t.Fatalf("pong live_handoff %v, detached_server_daemon %v, protocol %d; want false (not a bool on the wire), true, 30",
			pong.Capabilities.LiveHandoff, pong.Capabilities.DetachedServerDaemon, pong.Protocol)
	}
}

// Every protocol the simulator knows answers ping with its own pong, and a
// strict client accepts each.
func TestEveryProtocolAccepted(t *testing.T) {
	for p := uint32(sockettest.MinProtocol); p <= sockettest.MaxProtocol; p++ {
		srv := simtest.New(t, nil, func(s *sockettest.Server) {
			if err := s.UseProtocol(p); err != nil {
				t.Fatal(err)
			}
		})
		c := srv.Client()
		pong, err := c.ServerInfo(t.Context())
		want, _ := sockettest.PongFor(p)
		if err != nil {
			t.Errorf("protocol %d: server.info: %v", p, err)
		} else if pong.Protocol != p || pong.Version != want.Version || pong.Capabilities == nil {
			t.Errorf("protocol %d: pong protocol %d, version %q, has capabilities %v; want %d, %q, true",
				p, pong.Protocol, pong.Version, pong.Capabilities != nil, p, want.Version)
		}
		if _, err := c.AgentList(t.Context()); err != nil {
			t.Errorf("protocol %d: agent.list: %v", p, err)
		}
	}
	if _, err := sockettest.PongFor(18); err == nil {
		t.Error("PongFor(18) answered")
	}
}
