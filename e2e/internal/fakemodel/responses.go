package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The OpenAI Responses API: POST /v1/responses (what Codex speaks).

type respRequest struct {
	Model  string            `json:"model"`
	Stream bool              `json:"stream"`
	Input  json.RawMessage   `json:"input"`
	Tools  []json.RawMessage `json:"tools"`
}

type respItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	CallID  string          `json:"call_id"`
	Output  json.RawMessage `json:"output"`
}

type respPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type respTool struct {
	Type  string            `json:"type"`
	Name  string            `json:"name"`
	Tools []json.RawMessage `json:"tools"`
	// Chat-style nesting some clients send.
	Function *struct {
		Name string `json:"name"`
	} `json:"function"`
}

// respText reads content or output that is a string or an array of parts.
func respText(raw json.RawMessage) (string, error) {
	raw = trimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []respPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// Long: one switch over the Responses API's input item types, in the API's
// order.
func parseResponses(body []byte, p *parsed) error {
	var r respRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return err
	}
	p.model, p.stream, p.raw = r.Model, r.Stream, body
	in := trimSpace(r.Input)
	var items []respItem
	switch {
	case len(in) == 0 || string(in) == "null":
	case in[0] == '"':
		var s string
		if err := json.Unmarshal(in, &s); err != nil {
			return fmt.Errorf("input: %w", err)
		}
		items = []respItem{{Type: "message", Role: "user", Content: in}}
	default:
		if err := json.Unmarshal(in, &items); err != nil {
			return fmt.Errorf("input: %w", err)
		}
	}
	trailing := 0 // items after the model's last output are new
	for i := range items {
		if items[i].Type == "" && items[i].Role != "" {
			items[i].Type = "message"
		}
		switch it := items[i]; {
		case it.Type == "message" && it.Role == "assistant",
			it.Type == "function_call", it.Type == "custom_tool_call", it.Type == "reasoning":
			trailing = i + 1
		}
	}
	for i, it := range items {
		switch it.Type {
		case "message":
			if it.Role != "user" {
				continue
			}
			t, err := respText(it.Content)
			if err != nil {
				return fmt.Errorf("input %d: %w", i, err)
			}
			if len(p.userTexts) == 0 {
				p.firstUser = t
			}
			p.userTexts = append(p.userTexts, t)
		case "function_call_output", "custom_tool_call_output":
			p.resultCount++
		}
	}
	for _, it := range items[trailing:] {
		if it.Type != "function_call_output" && it.Type != "custom_tool_call_output" {
			continue
		}
		t, err := respText(it.Output)
		if err != nil {
			return fmt.Errorf("function_call_output: %w", err)
		}
		p.newResults = append(p.newResults, Result{CallID: it.CallID, Text: t, Bytes: len(t)})
	}
	for i, raw := range r.Tools {
		var t respTool
		if err := json.Unmarshal(raw, &t); err != nil {
			return fmt.Errorf("tool %d: %w", i, err)
		}
		p.topBytes = append(p.topBytes, compactLen(raw))
		if t.Type == "namespace" {
			for j, craw := range t.Tools {
				var c respTool
				if err := json.Unmarshal(craw, &c); err != nil {
					return fmt.Errorf("tool %d.%d: %w", i, j, err)
				}
				p.tools = append(p.tools, ToolDef{Name: c.Name, Namespace: t.Name, Bytes: compactLen(craw), top: i})
			}
			continue
		}
		name := t.Name
		if name == "" && t.Function != nil {
			name = t.Function.Name
		}
		if name == "" {
			name = t.Type // built-ins such as web_search
		}
		p.tools = append(p.tools, ToolDef{Name: name, Bytes: compactLen(raw), top: i})
	}
	return nil
}

func writeResponses(w http.ResponseWriter, p *parsed, rep Reply) {
	respID := "resp_fm_" + rep.CallID
	var item map[string]any
	if rep.Kind == "call" {
		item = map[string]any{"type": "function_call", "id": "fc_" + rep.CallID, "call_id": rep.CallID,
			"name": rep.Tool, "arguments": string(rep.Args), "status": "completed"}
		if rep.Namespace != "" {
			item["namespace"] = rep.Namespace
		}
	} else {
		item = map[string]any{"type": "message", "id": "msg_" + respID, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": rep.Text, "annotations": []any{}}}}
	}
	usage := map[string]any{"input_tokens": 1 + len(p.raw)/4, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 8, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 9 + len(p.raw)/4}
	resp := func(status string, output []any) map[string]any {
		m := map[string]any{"id": respID, "object": "response", "status": status, "model": p.model, "output": output}
		if status == "completed" {
			m["usage"] = usage
		}
		return m
	}
	if !p.stream {
		writeJSON(w, resp("completed", []any{item}))
		return
	}
	sw := newSSE(w)
	seq := 0
	ev := func(typ string, m map[string]any) {
		m["type"] = typ
		m["sequence_number"] = seq
		seq++
		sw.event(typ, m)
	}
	ev("response.created", map[string]any{"response": resp("in_progress", []any{})})
	ev("response.in_progress", map[string]any{"response": resp("in_progress", []any{})})
	if rep.Kind == "call" {
		added := map[string]any{}
		for k, v := range item {
			added[k] = v
		}
		added["arguments"], added["status"] = "", "in_progress"
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": added})
		ev("response.function_call_arguments.delta", map[string]any{"output_index": 0, "item_id": item["id"], "delta": string(rep.Args)})
		ev("response.function_call_arguments.done", map[string]any{"output_index": 0, "item_id": item["id"], "arguments": string(rep.Args)})
	} else {
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{
			"type": "message", "id": item["id"], "role": "assistant", "status": "in_progress", "content": []any{}}})
		ev("response.content_part.added", map[string]any{"output_index": 0, "item_id": item["id"], "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		ev("response.output_text.delta", map[string]any{"output_index": 0, "item_id": item["id"], "content_index": 0, "delta": rep.Text})
		ev("response.output_text.done", map[string]any{"output_index": 0, "item_id": item["id"], "content_index": 0, "text": rep.Text})
		ev("response.content_part.done", map[string]any{"output_index": 0, "item_id": item["id"], "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": rep.Text, "annotations": []any{}}})
	}
	ev("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	ev("response.completed", map[string]any{"response": resp("completed", []any{item})})
}
