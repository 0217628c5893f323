package herdrstate_test

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest/herdrstate"
)

// TestHandle: the state answers checked requests without a server or a
// connection: a result, or Herdr's error body.
func TestHandle(t *testing.T) {
	w := herdrstate.DefaultWorld()
	env := &herdrstate.Env{Version: "0.8.2", Protocol: 20, Tick: 1, Done: make(chan struct{}), Waiting: new(atomic.Int64)}
	tests := []struct {
		method, params string
		want           string // the result's JSON, or the error code
	}{
		{schema.MethodAgentGet, `{"target":"reviewer"}`, `"pane_id":"w1:p2"`},
		{schema.MethodAgentGet, `{"target":"nobody"}`, "agent_not_found"},
		{schema.MethodPaneGet, `{"pane_id":"w9:p9"}`, "pane_not_found"},
		{schema.MethodSessionSnapshot, `{}`, `"version":"0.8.2","protocol":20`},
		{schema.MethodAgentPrompt, `{"target":"reviewer","text":""}`, "empty_agent_prompt"},
		{"pane.split", `{}`, `"type":"pane_info"`}, // the focused pane splits
		{"pane.send_text", `{"pane_id":"w1:p1","text":"x"}`, `{"type":"ok"}`},
		{"pane.report_agent_session", `{"pane_id":"w1:p1","source":"s","agent":"a"}`, "not_implemented_in_simulator"},
	}
	for _, tt := range tests {
		res, e := w.Handle(t.Context(), env, tt.method, jsonx.RawMessage(tt.params))
		got := ""
		if e != nil {
			got = e.Code
		} else {
			b, err := jsonx.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			got = string(b)
		}
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s %s: %s, want %s", tt.method, tt.params, got, tt.want)
		}
	}
}

func TestWaits(t *testing.T) {
	tests := []struct {
		method, params string
		want           bool
	}{
		{schema.MethodAgentWait, `{"target":"a"}`, true},
		{schema.MethodAgentPrompt, `{"target":"a","text":"x"}`, false},
		{schema.MethodAgentPrompt, `{"target":"a","text":"x","wait":null}`, false},
		{schema.MethodAgentPrompt, `{"target":"a","text":"x","wait":{}}`, true},
		{schema.MethodAgentGet, `{"target":"a"}`, false},
	}
	for _, tt := range tests {
		if got := herdrstate.Waits(tt.method, jsonx.RawMessage(tt.params)); got != tt.want {
			t.Errorf("Waits(%s, %s) = %v", tt.method, tt.params, got)
		}
	}
}
