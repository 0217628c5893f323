package mcpserver

import (
	"encoding/json"
	"testing"
)

// A notification with params (a wait's progress) is written in the one
// wire style, its params as the connection encoded them; one without
// params has no params member.
func TestNotificationLines(t *testing.T) {
	tests := []struct {
		method, params, want string
	}{
		{"notifications/progress", `{"progressToken":"tok-1","progress":5.0001,"message":"waiting for the outcome"}`,
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-1","progress":5.0001,"message":"waiting for the outcome"}}`},
		{"notifications/progress", `{"progressToken":7,"progress":10}`, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":10}}`},
		{"notifications/tools/list_changed", "", `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`},
	}
	for _, tc := range tests {
		var params json.RawMessage
		if tc.params != "" {
			params = json.RawMessage(tc.params)
		}
		if got := notificationLine(tc.method, params); string(got) != tc.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tc.method, tc.params, got, tc.want)
		}
	}
}
