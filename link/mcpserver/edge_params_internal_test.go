package mcpserver

import (
	"log/slog"
	"strings"
	"testing"
)

// The edge gives the connection a request without its params and holds
// them, as the client sent them, for the handler; a notification's params
// stay in its line.
func TestStreamHoldsRequestParams(t *testing.T) {
	tests := []struct {
		name, in   string
		wantLine   string
		wantParams string // "" for none held
	}{
		{"tools/call", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"herdr_link_peers","arguments":{"a":"<\u0041>"}}}`,
			`{"id":7,"method":"tools/call"}`, `{"name":"herdr_link_peers","arguments":{"a":"<\u0041>"}}`},
		{"no params", `{"jsonrpc":"2.0","id":"x","method":"ping"}`, `{"id":"x","method":"ping"}`, ""},
		{"null params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`, `{"id":1,"method":"tools/call"}`, "null"},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
			`{"method":"notifications/cancelled","params":{"requestId":3}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStream(strings.NewReader(tt.in+"\n"), &strings.Builder{}, 0, slog.New(slog.DiscardHandler))
			a, err := s.next()
			if err != nil {
				t.Fatalf("next: got error %v, want a message", err)
			}
			if got := string(a.line); got != tt.wantLine {
				t.Errorf("connection's line: got %s, want %s", got, tt.wantLine)
			}
			got := ""
			if p := s.params(a.id); p != nil && !a.notif {
				got = string(*p)
			}
			if got != tt.wantParams {
				t.Errorf("held params: got %q, want %q", got, tt.wantParams)
			}
			if !a.notif {
				_ = s.finish(a.id, reply{})
				if p := s.params(a.id); p != nil {
					t.Errorf("params after the response: got %s, want none", *p)
				}
			}
		})
	}
}
