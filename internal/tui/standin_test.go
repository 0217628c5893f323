package tui_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// standIn is a minimal model server for the TUIs (until the tests use
// internal/fakemodel): every streaming request gets a five-event text
// answer, others a short JSON one.
func standIn(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body struct {
			Stream bool `json:"stream"`
		}
		_ = json.Unmarshal(raw, &body)
		sse := func(ev string, data any) {
			b, _ := json.Marshal(data)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev, b)
		}
		switch {
		case strings.HasSuffix(r.URL.Path, "/messages") && body.Stream:
			w.Header().Set("content-type", "text/event-stream")
			sse("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 1, "output_tokens": 1}}})
			sse("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
			for i := 0; i < 3; i++ {
				sse("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": fmt.Sprintf("part%d ", i)}})
			}
			sse("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
			sse("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 3}})
			sse("message_stop", map[string]any{"type": "message_stop"})
		case strings.HasSuffix(r.URL.Path, "/messages"):
			w.Header().Set("content-type", "application/json")
			fmt.Fprint(w, `{"id":"msg_x","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`)
		case strings.HasSuffix(r.URL.Path, "/responses"):
			w.Header().Set("content-type", "text/event-stream")
			sse("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_1", "object": "response", "status": "in_progress", "output": []any{}}})
			sse("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": map[string]any{"type": "message", "id": "m1", "role": "assistant", "status": "in_progress", "content": []any{}}})
			for i := 0; i < 3; i++ {
				sse("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": "m1", "output_index": 0, "content_index": 0, "delta": fmt.Sprintf("part%d ", i)})
			}
			done := map[string]any{"type": "message", "id": "m1", "role": "assistant", "status": "completed", "content": []any{map[string]any{"type": "output_text", "text": "part0 part1 part2 ", "annotations": []any{}}}}
			sse("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": done})
			sse("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp_1", "object": "response", "status": "completed", "output": []any{done},
				"usage": map[string]any{"input_tokens": 1, "output_tokens": 1, "total_tokens": 2, "input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}}})
		default:
			w.Header().Set("content-type", "application/json")
			fmt.Fprint(w, `{"object":"list","data":[]}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}
