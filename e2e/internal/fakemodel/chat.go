package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// OpenAI Chat Completions: POST /v1/chat/completions (OpenCode's
// openai-compatible provider, and many others).

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
}

type chatRequest struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	Messages []chatMessage     `json:"messages"`
	Tools    []json.RawMessage `json:"tools"`
}

type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

func parseChat(body []byte, p *parsed) error {
	var r chatRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return err
	}
	p.model, p.stream, p.raw = r.Model, r.Stream, body
	trailing := 0 // messages after the model's last one are new
	for i, m := range r.Messages {
		if m.Role == "assistant" {
			trailing = i + 1
		}
	}
	for i, m := range r.Messages {
		switch m.Role {
		case "tool":
			p.resultCount++
		case "user":
			t, err := respText(m.Content)
			if err != nil {
				return fmt.Errorf("message %d: %w", i, err)
			}
			if len(p.userTexts) == 0 {
				p.firstUser = t
			}
			p.userTexts = append(p.userTexts, t)
		}
	}
	for i, m := range r.Messages[trailing:] {
		if m.Role != "tool" {
			continue
		}
		t, err := respText(m.Content)
		if err != nil {
			return fmt.Errorf("tool message %d: %w", trailing+i, err)
		}
		p.newResults = append(p.newResults, Result{CallID: m.ToolCallID, Text: t, Bytes: len(t)})
	}
	for i, raw := range r.Tools {
		var t chatTool
		if err := json.Unmarshal(raw, &t); err != nil {
			return fmt.Errorf("tool %d: %w", i, err)
		}
		if t.Function.Name == "" {
			return fmt.Errorf("tool %d: no function name", i)
		}
		p.topBytes = append(p.topBytes, compactLen(raw))
		p.tools = append(p.tools, ToolDef{Name: t.Function.Name, Bytes: compactLen(raw), top: i})
	}
	return nil
}

func writeChat(w http.ResponseWriter, p *parsed, rep Reply) {
	id := "chatcmpl-fm" + rep.CallID
	created := time.Now().Unix()
	usage := map[string]any{"prompt_tokens": 1 + len(p.raw)/4, "completion_tokens": 8, "total_tokens": 9 + len(p.raw)/4}
	finish := "stop"
	msg := map[string]any{"role": "assistant", "content": rep.Text}
	var calls []any
	if rep.Kind == "call" {
		finish = "tool_calls"
		calls = []any{map[string]any{"index": 0, "id": rep.CallID, "type": "function",
			"function": map[string]any{"name": rep.Tool, "arguments": string(rep.Args)}}}
		msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}
	}
	if !p.stream {
		writeJSON(w, map[string]any{"id": id, "object": "chat.completion", "created": created, "model": p.model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	sw := newSSE(w)
	chunk := func(delta map[string]any, finish any, usage any) {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": p.model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		if usage != nil {
			c["usage"] = usage
		}
		sw.event("", c)
	}
	if rep.Kind == "call" {
		chunk(map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}, nil, nil)
	} else {
		chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil)
		chunk(map[string]any{"content": rep.Text}, nil, nil)
	}
	chunk(map[string]any{}, finish, usage)
	sw.data("[DONE]")
}
