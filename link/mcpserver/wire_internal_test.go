package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
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
		var got []byte
		if tc.params == "" {
			got = notificationLine(tc.method)
		} else {
			got = notificationParamsLine(tc.method, json.RawMessage(tc.params))
		}
		if string(got) != tc.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tc.method, tc.params, got, tc.want)
		}
	}
}

// The stream writes what jsonrpc2's Notify sends with params: it used to
// refuse every notification with params, so no progress ever reached a
// client.
func TestStreamWritesNotificationWithParams(t *testing.T) {
	var out strings.Builder
	s := &stream{w: &out}
	p := json.RawMessage(`{"progressToken":"a","progress":5}`)
	s.out = outgoing{req: &jsonrpc2.Request{Method: "notifications/progress", Notif: true, Params: &p}}
	if err := s.WriteObject(nil); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, `"params":{"progressToken":"a","progress":5}`) {
		t.Fatalf("wrote %q", got)
	}
}
