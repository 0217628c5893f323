package socket_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// CallRaw returns the exact lines and classifies the answer as every call
// does; Trace sees every exchange, raw or typed.
func TestCallRawAndTrace(t *testing.T) {
	srv := simtest.New(t, nil)
	var traced []string
	c := &socket.Client{Path: srv.Path(), Protocol: socket.ProtocolOff, Trace: func(req, resp []byte) {
		traced = append(traced, string(req)+" => "+string(resp))
	}}
	ctx := t.Context()
	tests := []struct {
		name, id, method string
		params           any
		wantReq          string // exact request line
		wantResp         string // substring of the response line
		wantErr          error
	}{
		{"ok", "x:1", schema.MethodAgentGet, schema.AgentTarget{Target: "brain"}, `{"id":"x:1","method":"agent.get","params":{"target":"brain"}}`, `"name":"brain"`, nil},
		{"refusal", "x:2", schema.MethodAgentGet, schema.AgentTarget{Target: "nobody"}, `{"id":"x:2","method":"agent.get","params":{"target":"nobody"}}`, `"code":"agent_not_found"`, socket.ErrAgentNotFound},
		{"numbered", "", schema.MethodPing, nil, `{"id":"herdr-link:1","method":"ping","params":{}}`, `"type":"pong"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var into schema.ResultAgentInfo
			req, resp, err := c.CallRaw(ctx, tt.id, tt.method, tt.params, &into)
			if string(req) != tt.wantReq {
				t.Errorf("request %s, want %s", req, tt.wantReq)
			}
			if !strings.Contains(string(resp), tt.wantResp) {
				t.Errorf("response %s lacks %s", resp, tt.wantResp)
			}
			if (tt.wantErr == nil) != (err == nil) || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
				t.Errorf("err %v, want %v", err, tt.wantErr)
			}
			if tt.name == "ok" {
				if into.Agent.Name == nil {
					t.Errorf("decoded agent name = nil, want brain")
				} else if *into.Agent.Name != "brain" {
					t.Errorf("decoded agent name = %q, want brain", *into.Agent.Name)
				}
			}
		})
	}
	// A wrong id is a protocol error, whatever the line says.
	srv.SetFault(schema.MethodAgentGet, sockettest.Fault{WrongID: true})
	if _, _, err := c.CallRaw(ctx, "x:3", schema.MethodAgentGet, schema.AgentTarget{Target: "brain"}, nil); !errors.Is(err, socket.ErrProtocol) {
		t.Errorf("wrong id: %v", err)
	}
	srv.SetFault(schema.MethodAgentGet, sockettest.Fault{})
	// Typed calls are traced too.
	traced = nil
	if _, err := c.AgentList(ctx); err != nil {
		t.Fatal(err)
	}
	if len(traced) != 1 || !strings.Contains(traced[0], `"method":"agent.list"`) || !strings.Contains(traced[0], `"type":"agent_list"`) {
		t.Errorf("trace %q", traced)
	}
}
