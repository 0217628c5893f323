package mcpserver

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
)

// A result staged at the edge goes out in place of the stand-in the
// connection encoded, under the client's id, exactly as staged; a
// response whose result was not staged goes out as the connection wrote
// it (its HTML escapes undone); a request the edge does not know takes
// no staged result.
func TestStagedResult(t *testing.T) {
	tests := []struct {
		name   string
		id     string // the client's id
		stage  string // "" : nothing staged
		result json.RawMessage
		want   string
	}{
		{"staged", `7`, `{"text":"<a> & \u2028"}`, stagedResult, `{"jsonrpc":"2.0","id":7,"result":{"text":"<a> & \u2028"}}`},
		{"staged, id the library cannot hold", `-1.5`, `{"n":1}`, stagedResult, `{"jsonrpc":"2.0","id":-1.5,"result":{"n":1}}`},
		{"not staged", `"x"`, "", json.RawMessage(`{"text":"\u003ca\u003e"}`), `{"jsonrpc":"2.0","id":"x","result":{"text":"<a>"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			s := newStream(strings.NewReader(""), &out, 0, slog.New(slog.DiscardHandler))
			id, _, ok := s.ids.register([]byte(tt.id), nil)
			if !ok {
				t.Fatalf("register(%s) refused", tt.id)
			}
			if tt.stage != "" && !s.stage(id, []byte(tt.stage)) {
				t.Fatalf("stage(%v) = false, want true", id)
			}
			r := tt.result
			if err := s.WriteObject(&jsonrpc2.Response{ID: id, Result: &r}); err != nil {
				t.Fatalf("WriteObject: %v", err)
			}
			if got := strings.TrimSuffix(out.String(), "\n"); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	t.Run("unknown request", func(t *testing.T) {
		s := newStream(strings.NewReader(""), &bytes.Buffer{}, 0, slog.New(slog.DiscardHandler))
		if s.stage(jsonrpc2.ID{Num: 3}, []byte(`{}`)) {
			t.Errorf("stage of an unregistered id = true, want false")
		}
	})
}
