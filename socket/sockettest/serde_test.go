package sockettest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// Requests serde rejects are rejected, with
// serde's wording and column (the end of the line for everything that went
// through the flatten buffer), never Go's.
func TestSerdeRejections(t *testing.T) {
	srv := simtest.New(t, nil)
	statuses := "expected one of `idle`, `working`, `blocked`, `done`, `unknown`"
	tests := []struct {
		name, line, want string
	}{
		{"wait until bogus", `{"id":"1","method":"agent.wait","params":{"target":"brain","until":["bogus"]}}`,
			"unknown variant `bogus`, " + statuses},
		{"prompt wait until bogus", `{"id":"1","method":"agent.prompt","params":{"target":"brain","text":"x","wait":{"until":["idle","nope"]}}}`,
			"unknown variant `nope`, " + statuses},
		{"subscription status bogus", `{"id":"1","method":"events.subscribe","params":{"subscriptions":[{"type":"pane.agent_status_changed","pane_id":"w1:p1","agent_status":"bogus"}]}}`,
			"unknown variant `bogus`, " + statuses},
		{"pane.read source bogus", `{"id":"1","method":"pane.read","params":{"pane_id":"w1:p1","source":"bogus"}}`,
			"unknown variant `bogus`, expected one of `visible`, `recent`, `recent_unwrapped`, `detection`"},
		{"snake_case subscription", `{"id":"1","method":"events.subscribe","params":{"subscriptions":[{"type":"pane_agent_status_changed","pane_id":"w1:p1"}]}}`,
			"unknown variant `pane_agent_status_changed`, expected one of `workspace.created`, `workspace.updated`"},
		{"unknown subscription", `{"id":"1","method":"events.subscribe","params":{"subscriptions":[{"type":"pane.exploded"}]}}`,
			"unknown variant `pane.exploded`, expected one of"},
		{"subscription without type", `{"id":"1","method":"events.subscribe","params":{"subscriptions":[{"pane_id":"w1:p1"}]}}`,
			"missing field `type`"},
		{"nested missing pane_id", `{"id":"1","method":"events.subscribe","params":{"subscriptions":[{"type":"pane.agent_status_changed"}]}}`,
			"missing field `pane_id`"},
		{"two-value enum", `{"id":"1","method":"pane.read","params":{"pane_id":"w1:p1","source":"recent","format":"html"}}`,
			"unknown variant `html`, expected `text` or `ansi`"},
		{"mistyped target", `{"id":"1","method":"agent.get","params":{"target":5}}`, "invalid type: integer `5`, expected a string"},
		{"string timeout", `{"id":"1","method":"agent.wait","params":{"target":"brain","timeout_ms":"soon"}}`, `invalid type: string "soon", expected u64`},
		{"negative timeout", `{"id":"1","method":"agent.wait","params":{"target":"brain","timeout_ms":-1}}`, "invalid value: integer `-1`, expected u64"},
		{"float timeout", `{"id":"1","method":"agent.wait","params":{"target":"brain","timeout_ms":1.5}}`, "invalid type: floating point `1.5`, expected u64"},
		{"u32 overflow", `{"id":"1","method":"pane.read","params":{"pane_id":"w1:p1","source":"recent","lines":4294967296}}`, "invalid value: integer `4294967296`, expected u32"},
		{"until not a list", `{"id":"1","method":"agent.wait","params":{"target":"brain","until":"idle"}}`, `invalid type: string "idle", expected a sequence`},
		{"wait not an object", `{"id":"1","method":"agent.prompt","params":{"target":"brain","text":"x","wait":true}}`, "invalid type: boolean `true`, expected struct AgentPromptWaitOptions"},
		{"missing target", `{"id":"1","method":"agent.get","params":{}}`, "missing field `target`"},
		{"unknown method", `{"id":"1","method":"bogus","params":{}}`, "unknown variant `bogus`, expected one of `ping`"},
		{"send_text without text", `{"id":"1","method":"pane.send_text","params":{"pane_id":"w1:p1"}}`, "missing field `text`"},
		{"send_keys without keys", `{"id":"1","method":"pane.send_keys","params":{"pane_id":"w1:p1"}}`, "missing field `keys`"},
		{"send_keys keys null", `{"id":"1","method":"pane.send_keys","params":{"pane_id":"w1:p1","keys":null}}`, "invalid type: null, expected a sequence"},
		{"send_keys key not a string", `{"id":"1","method":"agent.send_keys","params":{"target":"brain","keys":["Enter",13]}}`, "invalid type: integer `13`, expected a string"},
		{"send_input without pane", `{"id":"1","method":"pane.send_input","params":{"text":"x"}}`, "missing field `pane_id`"},
		{"report_agent state done", `{"id":"1","method":"pane.report_agent","params":{"pane_id":"w1:p1","source":"s","agent":"a","state":"done"}}`,
			"unknown variant `done`, expected one of `idle`, `working`, `blocked`, `unknown`"},
		{"report_agent without source", `{"id":"1","method":"pane.report_agent","params":{"pane_id":"w1:p1","agent":"a","state":"idle"}}`, "missing field `source`"},
		{"report_agent negative seq", `{"id":"1","method":"pane.report_agent","params":{"pane_id":"w1:p1","source":"s","agent":"a","state":"idle","seq":-1}}`, "invalid value: integer `-1`, expected u64"},
		{"params before method", `{"id":"1","params":{},"method":"bogus"}`, "unknown variant `bogus`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := exchange(t, srv, []byte(tt.line+"\n"))
			var resp schema.ErrorResponse
			if err := jsonx.Unmarshal([]byte(got), &resp); err != nil {
				t.Fatalf("reply %q: %v", got, err)
			}
			suffix := fmt.Sprintf(" at line 1 column %d", len(tt.line))
			msg := resp.Error.Message
			if resp.ID != "" || resp.Error.Code != "invalid_request" || !strings.HasPrefix(msg, "invalid request: "+tt.want) || !strings.HasSuffix(msg, suffix) {
				t.Fatalf("reply %q\nwant invalid_request, id \"\", %q…%q", got, "invalid request: "+tt.want, suffix)
			}
			if strings.Contains(msg, "Go struct") || strings.Contains(msg, "unmarshal") {
				t.Fatalf("Go wording in %q", msg)
			}
		})
	}
	// The id is decoded in place, so its errors carry its own column; a
	// syntax error carries the column of the offending character.
	for line, want := range map[string]string{
		`{"id":1,"method":"ping","params":{}}`: "invalid request: invalid type: integer `1`, expected a string at line 1 column 7",
		`not json`:                             "invalid request: expected ident at line 1 column 2",
	} {
		got := exchange(t, srv, []byte(line+"\n"))
		var resp schema.ErrorResponse
		_ = jsonx.Unmarshal([]byte(got), &resp)
		if resp.Error.Message != want {
			t.Errorf("%s → %q, want %q", line, resp.Error.Message, want)
		}
	}
}
