package fakemodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"github.com/google/go-cmp/cmp"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

type toolCall struct{ name, namespace, args, id, text string }

// readSSE returns the data payloads of an event stream.
func readSSE(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		d, ok := strings.CutPrefix(line, "data: ")
		if !ok || d == "[DONE]" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(d), &m); err != nil {
			t.Fatalf("SSE data is not JSON: %q: %v", d, err)
		}
		out = append(out, m)
	}
	return out
}

func post(t *testing.T, url string, body any) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		msg, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: %s: %s", url, resp.Status, msg)
	}
	return resp
}

// anthropicTurn sends a Messages request and decodes the streamed answer.
func anthropicTurn(t *testing.T, url string, tools []any, msgs []any) toolCall {
	resp := post(t, url+"/v1/messages", map[string]any{"model": "m", "stream": true, "max_tokens": 100, "tools": tools, "messages": msgs})
	var c toolCall
	var js strings.Builder
	sawStop := false
	for _, ev := range readSSE(t, resp.Body) {
		switch ev["type"] {
		case "content_block_start":
			b := ev["content_block"].(map[string]any)
			if b["type"] == "tool_use" {
				c.name, c.id = b["name"].(string), b["id"].(string)
			}
		case "content_block_delta":
			d := ev["delta"].(map[string]any)
			if d["type"] == "input_json_delta" {
				js.WriteString(d["partial_json"].(string))
			} else {
				c.text += d["text"].(string)
			}
		case "message_stop":
			sawStop = true
		}
	}
	if !sawStop {
		t.Fatal("no message_stop")
	}
	c.args = js.String()
	return c
}

func tool(name string) map[string]any {
	return map[string]any{"name": name, "description": "d", "input_schema": map[string]any{"type": "object"}}
}

func TestAnthropicConversation(t *testing.T) {
	env := `{"protocol":"herdr-link/1","id":"hl_a1","from":"brain","to":"reviewer","message":"review please"}`
	prompt := "[herdr-link/1] Message from agent \"brain\"…\n" + env
	s := New(t, Script{Steps: []Step{
		{Call: Gateway},
		{Call: Peers},
		{Call: Send, Args: map[string]any{"to": "${envelope.from}", "message": "ok", "reply_to": "${envelope.id}"}},
		{Text: "replied to ${envelope.from}"},
	}})
	dormant := []any{tool("Bash"), tool("mcp__herdr_link__herdr_link")}
	active := append(dormant[:2:2], tool("mcp__herdr_link__herdr_link_peers"), tool("mcp__herdr_link__herdr_link_send"))
	msgs := []any{map[string]any{"role": "user", "content": prompt}}
	result := func(id, text string) {
		msgs = append(msgs, map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": text}}})
	}
	call := func(c toolCall) {
		msgs = append(msgs, map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": json.RawMessage(c.args)}}})
	}

	// A side request first (a title): not a step.
	if c := anthropicTurn(t, s.URL, nil, []any{map[string]any{"role": "user", "content": "title?"}}); c.text != "OK" {
		t.Fatalf("side request answered %v, want text \"OK\"", c)
	}
	c1 := anthropicTurn(t, s.URL, dormant, msgs)
	if c1.name != "mcp__herdr_link__herdr_link" || c1.args != "{}" {
		t.Fatalf("step 1 = %v, want mcp__herdr_link__herdr_link({})", c1)
	}
	call(c1)
	result(c1.id, `{"status":"active"}`)
	// The host has not refreshed yet: the fake uses the gateway's action form.
	c2 := anthropicTurn(t, s.URL, dormant, msgs)
	if c2.name != "mcp__herdr_link__herdr_link" || c2.args != `{"action":"peers","arguments":{}}` {
		t.Fatalf("step 2 = %v, want mcp__herdr_link__herdr_link({\"action\":\"peers\",\"arguments\":{}})", c2)
	}
	// A retry of the same request gets the same answer and does not advance.
	if again := anthropicTurn(t, s.URL, dormant, msgs); again != c2 {
		t.Fatalf("retry answer mismatch (-want +got):\n%s", cmp.Diff(c2, again, cmp.AllowUnexported(toolCall{})))
	}
	call(c2)
	result(c2.id, `{"peers":[]}`)
	c3 := anthropicTurn(t, s.URL, active, msgs)
	if c3.name != "mcp__herdr_link__herdr_link_send" {
		t.Fatalf("step 3 = %v, want a call of mcp__herdr_link__herdr_link_send", c3)
	}
	var args map[string]string
	if err := json.Unmarshal([]byte(c3.args), &args); err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"to": "brain", "message": "ok", "reply_to": "hl_a1"}; !reflect.DeepEqual(args, want) {
		t.Fatalf("send args %v, want %v", args, want)
	}
	call(c3)
	result(c3.id, `{"status":"sent"}`)
	if c4 := anthropicTurn(t, s.URL, active, msgs); c4.text != "replied to brain" || c4.name != "" {
		t.Fatalf("step 4 = %v, want only text \"replied to brain\"", c4)
	}
	if e := s.Errors(); len(e) != 0 {
		t.Fatalf("errors: %v", e)
	}
	reqs := s.Requests()
	if len(reqs) != 6 || reqs[0].Main || len(s.Main()) != 5 {
		t.Fatalf("%d requests (%d main), want 6 (5 main)", len(reqs), len(s.Main()))
	}
	last := reqs[5]
	if len(last.Results) != 1 || last.Results[0].Action != "send" || last.Results[0].Bytes != len(`{"status":"sent"}`) {
		t.Errorf("last request has %d results (first %s), want one send result of %d bytes", len(last.Results), resultSummary(last.Results), len(`{"status":"sent"}`))
	}
	if reqs[3].Reply.Via != "gateway" || reqs[4].Results[0].Action != "peers" {
		t.Errorf("gateway fallback: reply via %q, next results %s; want via gateway, then a peers result", reqs[3].Reply.Via, resultSummary(reqs[4].Results))
	}
	if !strings.Contains(last.LastUser, env) || !reflect.DeepEqual(last.LinkTools, []string{Gateway, Peers, Send}) {
		t.Errorf("last request: last user %q, link tools %v", last.LastUser, last.LinkTools)
	}
}

func TestToolSearch(t *testing.T) {
	s := New(t, Script{Steps: []Step{{Call: Gateway}, {Text: "done"}}})
	search := map[string]any{"name": "ToolSearch", "description": "d", "input_schema": map[string]any{"type": "object"}}
	sys := "Deferred tools:\nCronCreate\nmcp__herdr_link__herdr_link"
	msgs := []any{map[string]any{"role": "user", "content": "go"}}
	body := func(tools []any) map[string]any {
		return map[string]any{"model": "m", "stream": false, "system": sys, "tools": tools, "messages": msgs}
	}
	var out struct {
		Content []struct {
			Type  string          `json:"type"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
		StopReason string `json:"stop_reason"`
	}
	resp := post(t, s.URL+"/v1/messages", body([]any{search}))
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.StopReason != "tool_use" || out.Content[0].Name != "ToolSearch" || !strings.Contains(string(out.Content[0].Input), `"select:mcp__herdr_link__herdr_link"`) {
		t.Fatalf("got stop %q, %s(%s); want tool_use, ToolSearch with select:mcp__herdr_link__herdr_link", out.StopReason, out.Content[0].Name, out.Content[0].Input)
	}
	id := out.Content[0].ID
	msgs = append(msgs,
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": id, "name": "ToolSearch", "input": map[string]any{}}}},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id,
			"content": []any{map[string]any{"type": "tool_reference", "tool_name": "mcp__herdr_link__herdr_link"}}}}})
	gw := tool("mcp__herdr_link__herdr_link")
	gw["defer_loading"] = true
	resp = post(t, s.URL+"/v1/messages", body([]any{search, gw}))
	out.Content = nil
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Content[0].Name != "mcp__herdr_link__herdr_link" {
		t.Fatalf("after loading: called %s, want mcp__herdr_link__herdr_link", out.Content[0].Name)
	}
	if r := s.Requests(); r[0].Reply.Via != "search" || r[1].Reply.Via != "direct" {
		t.Fatalf("vias %q %q", r[0].Reply.Via, r[1].Reply.Via)
	}
}

func TestResponsesConversation(t *testing.T) {
	s := New(t, Script{Steps: []Step{{Call: Gateway}, {Call: Close, Args: map[string]any{"agent": "reviewer"}}, {Text: "closed"}}})
	ns := func(names ...string) map[string]any {
		var ts []any
		for _, n := range names {
			ts = append(ts, map[string]any{"type": "function", "name": n, "parameters": map[string]any{"type": "object"}})
		}
		return map[string]any{"type": "namespace", "name": "mcp__herdr_link", "description": "d", "tools": ts}
	}
	input := []any{map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "close reviewer"}}}}
	turn := func(tools []any) toolCall {
		resp := post(t, s.URL+"/v1/responses", map[string]any{"model": "m", "stream": true, "input": input, "tools": tools})
		var c toolCall
		completed := false
		for _, ev := range readSSE(t, resp.Body) {
			switch ev["type"] {
			case "response.output_item.done":
				it := ev["item"].(map[string]any)
				if it["type"] == "function_call" {
					c.name, c.args, c.id = it["name"].(string), it["arguments"].(string), it["call_id"].(string)
					c.namespace, _ = it["namespace"].(string)
				} else {
					c.text = it["content"].([]any)[0].(map[string]any)["text"].(string)
				}
			case "response.completed":
				completed = true
			}
		}
		if !completed {
			t.Fatal("no response.completed")
		}
		if c.name != "" {
			input = append(input, map[string]any{"type": "function_call", "name": c.name, "namespace": c.namespace, "arguments": c.args, "call_id": c.id},
				map[string]any{"type": "function_call_output", "call_id": c.id, "output": "Output:\n{}"})
		}
		return c
	}
	if c := turn([]any{ns("herdr_link")}); c.name != "herdr_link" || c.namespace != "mcp__herdr_link" {
		t.Fatalf("step 1 = %v, want a call of mcp__herdr_link.herdr_link", c)
	}
	if c := turn([]any{ns("herdr_link", "herdr_link_close")}); c.name != "herdr_link_close" || c.namespace != "mcp__herdr_link" || c.args != `{"agent":"reviewer"}` {
		t.Fatalf("step 2 = %v, want mcp__herdr_link.herdr_link_close({\"agent\":\"reviewer\"})", c)
	}
	if c := turn([]any{ns("herdr_link", "herdr_link_close")}); c.text != "closed" {
		t.Fatalf("step 3 = %v, want text \"closed\"", c)
	}
	reqs := s.Requests()
	if reqs[2].Results[0].Action != "close" || reqs[2].LinkDefBytes == 0 {
		t.Fatalf("third request: result %s, link tool definitions %d bytes; want a close result, some bytes", resultSummary(reqs[2].Results), reqs[2].LinkDefBytes)
	}
}

func TestChatConversation(t *testing.T) {
	s := New(t, Script{Steps: []Step{{Call: Gateway}, {Call: Peers}, {Text: "done"}}})
	fn := func(n string) map[string]any {
		return map[string]any{"type": "function", "function": map[string]any{"name": n, "parameters": map[string]any{"type": "object"}}}
	}
	msgs := []any{map[string]any{"role": "user", "content": "peers?"}}
	turn := func(tools []any) toolCall {
		resp := post(t, s.URL+"/v1/chat/completions", map[string]any{"model": "m", "stream": true, "messages": msgs, "tools": tools})
		var c toolCall
		finish := ""
		for _, ev := range readSSE(t, resp.Body) {
			ch := ev["choices"].([]any)[0].(map[string]any)
			if f, ok := ch["finish_reason"].(string); ok {
				finish = f
			}
			d := ch["delta"].(map[string]any)
			if tc, ok := d["tool_calls"].([]any); ok {
				f := tc[0].(map[string]any)
				c.id = f["id"].(string)
				c.name = f["function"].(map[string]any)["name"].(string)
				c.args = f["function"].(map[string]any)["arguments"].(string)
			}
			if txt, ok := d["content"].(string); ok {
				c.text += txt
			}
		}
		if finish == "" {
			t.Fatal("no finish_reason")
		}
		if c.name != "" {
			msgs = append(msgs, map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{"id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": c.args}}}},
				map[string]any{"role": "tool", "tool_call_id": c.id, "content": "{}"})
		}
		return c
	}
	if c := turn([]any{fn("herdr_link_herdr_link")}); c.name != "herdr_link_herdr_link" {
		t.Fatalf("step 1 = %v, want a call of herdr_link_herdr_link", c)
	}
	// One step late, like OpenCode: the fallback keeps the script going.
	if c := turn([]any{fn("herdr_link_herdr_link")}); c.name != "herdr_link_herdr_link" || c.args != `{"action":"peers","arguments":{}}` {
		t.Fatalf("step 2 = %v, want herdr_link_herdr_link({\"action\":\"peers\",\"arguments\":{}})", c)
	}
	if c := turn([]any{fn("herdr_link_herdr_link"), fn("herdr_link_herdr_link_peers")}); c.text != "done" {
		t.Fatalf("step 3 = %v, want text \"done\"", c)
	}
}

func TestUnavailableTool(t *testing.T) {
	s := New(t, Script{Steps: []Step{{Call: Peers, NoFallback: true}}})
	c := anthropicTurn(t, s.URL, []any{tool("mcp__herdr_link__herdr_link")}, []any{map[string]any{"role": "user", "content": "x"}})
	if c.name != "" || !strings.Contains(c.text, "not available") {
		t.Fatalf("answered %v, want only a text saying the tool is not available", c)
	}
	if e := s.Errors(); len(e) != 1 || !strings.Contains(e[0], "herdr_link_peers is not available") {
		t.Fatalf("errors %v", e)
	}
}

func TestMissingEnvelope(t *testing.T) {
	s := New(t, Script{Steps: []Step{{Call: Send, Args: map[string]any{"to": "${envelope.from}"}}}})
	anthropicTurn(t, s.URL, []any{tool("herdr_link_send")}, []any{map[string]any{"role": "user", "content": "no envelope here"}})
	if e := s.Errors(); len(e) != 1 || !strings.Contains(e[0], "no herdr-link/1 envelope") {
		t.Fatalf("errors %v", e)
	}
}

func TestBadRequests(t *testing.T) {
	s := New(t, Script{})
	for _, path := range []string{"/v1/messages", "/v1/responses", "/v1/chat/completions"} {
		resp, err := http.Post(s.URL+path, "application/json", strings.NewReader(`{"messages":"nope","input":7,"tools":[1]}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %s, want 400", path, resp.Status)
		}
	}
	if len(s.Errors()) != 3 {
		t.Errorf("errors %v, want 3", s.Errors())
	}
	resp, err := http.Post(s.URL+"/v1/messages/count_tokens", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ct map[string]int
	if err := json.NewDecoder(resp.Body).Decode(&ct); err != nil || ct["input_tokens"] < 1 {
		t.Errorf("count_tokens: %v %v", ct, err)
	}
}
