package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The Anthropic Messages API: POST /v1/messages.

type anthMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type anthRequest struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	Messages []anthMessage     `json:"messages"`
	Tools    []json.RawMessage `json:"tools"`
}

type anthBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	ToolName  string          `json:"tool_name"` // tool_reference
}

type anthTool struct {
	Type         string `json:"type"`
	Name         string `json:"name"`
	DeferLoading bool   `json:"defer_loading"`
}

// blocks reads content that is either a string or an array of blocks.
func anthBlocks(raw json.RawMessage) ([]anthBlock, error) {
	raw = trimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []anthBlock{{Type: "text", Text: s}}, nil
	}
	var bs []anthBlock
	if err := json.Unmarshal(raw, &bs); err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	return bs, nil
}

func parseAnthropic(body []byte, p *parsed) error {
	var r anthRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return err
	}
	p.model, p.stream, p.raw = r.Model, r.Stream, body
	loaded := map[string]bool{}
	lastAssistant := -1
	for i, m := range r.Messages {
		if m.Role == "assistant" {
			lastAssistant = i
		}
	}
	for i, m := range r.Messages {
		bs, err := anthBlocks(m.Content)
		if err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
		var texts []string
		fresh := i > lastAssistant
		for _, b := range bs {
			switch b.Type {
			case "text":
				if m.Role == "user" {
					texts = append(texts, b.Text)
				}
			case "tool_result":
				p.resultCount++
				inner, err := anthBlocks(b.Content)
				if err != nil {
					return fmt.Errorf("message %d tool_result: %w", i, err)
				}
				var sb strings.Builder
				for _, ib := range inner {
					switch ib.Type {
					case "text":
						sb.WriteString(ib.Text)
					case "tool_reference":
						loaded[ib.ToolName] = true
					}
				}
				if fresh && m.Role == "user" {
					p.newResults = append(p.newResults, Result{CallID: b.ToolUseID, Text: sb.String(), Bytes: sb.Len(), IsError: b.IsError})
				}
			}
		}
		if len(texts) > 0 {
			t := strings.Join(texts, "\n")
			if len(p.userTexts) == 0 {
				p.firstUser = t
			}
			p.userTexts = append(p.userTexts, t)
		}
	}
	for i, raw := range r.Tools {
		var t anthTool
		if err := json.Unmarshal(raw, &t); err != nil {
			return fmt.Errorf("tool %d: %w", i, err)
		}
		if t.Name == "" {
			return fmt.Errorf("tool %d: no name", i)
		}
		p.topBytes = append(p.topBytes, compactLen(raw))
		p.tools = append(p.tools, ToolDef{Name: t.Name, Bytes: compactLen(raw), Deferred: t.DeferLoading && !loaded[t.Name], top: i})
	}
	return nil
}

func writeAnthropic(w http.ResponseWriter, p *parsed, rep Reply) {
	var block map[string]any
	var delta map[string]any
	stop := "end_turn"
	if rep.Kind == "call" {
		stop = "tool_use"
		block = map[string]any{"type": "tool_use", "id": rep.CallID, "name": rep.Tool, "input": map[string]any{}}
		delta = map[string]any{"type": "input_json_delta", "partial_json": string(rep.Args)}
	} else {
		block = map[string]any{"type": "text", "text": ""}
		delta = map[string]any{"type": "text_delta", "text": rep.Text}
	}
	msgID := "msg_" + rep.CallID
	if rep.CallID == "" {
		msgID = "msg_fakemodel"
	}
	usage := map[string]any{"input_tokens": 1 + len(p.raw)/4, "output_tokens": 8}
	if !p.stream {
		full := block
		if rep.Kind == "call" {
			full = map[string]any{"type": "tool_use", "id": rep.CallID, "name": rep.Tool, "input": json.RawMessage(rep.Args)}
		} else {
			full = map[string]any{"type": "text", "text": rep.Text}
		}
		writeJSON(w, map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": p.model,
			"content": []any{full}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	sw := newSSE(w)
	sw.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": p.model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": usage["input_tokens"], "output_tokens": 1}}})
	sw.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": block})
	sw.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta})
	sw.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	sw.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 8}})
	sw.event("message_stop", map[string]any{"type": "message_stop"})
}

// sse writes server-sent events.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

func (s *sse) event(name string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if s.f != nil {
		s.f.Flush()
	}
}

func (s *sse) data(line string) {
	fmt.Fprintf(s.w, "data: %s\n\n", line)
	if s.f != nil {
		s.f.Flush()
	}
}

func trimSpace(b []byte) []byte {
	return []byte(strings.TrimSpace(string(b)))
}
