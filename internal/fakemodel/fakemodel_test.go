package fakemodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// Request shapes as the pinned hosts send them (keys, nesting, block and
// item types as captured from Claude Code 2.1.328, Codex 0.171.0 and
// OpenCode 1.18.33), with their prose replaced.

// Claude Code with tool search: the gateway was loaded by a ToolSearch
// call (tool_reference), then called; its result is the last message.
const claudeToolSearch = `{"model":"claude-x","stream":true,"max_tokens":128000,
 "system":[{"type":"text","text":"billing header"},{"type":"text","text":"You are an agent.","cache_control":{"type":"ephemeral"}}],
 "messages":[
  {"role":"user","content":[{"type":"text","text":"<system-reminder>\nreminder\n</system-reminder>\n"},{"type":"text","text":"coordinate with the reviewer"}]},
  {"role":"system","content":"The following deferred tools are now available via ToolSearch:\nCronCreate\nmcp__herdr_link__herdr_link"},
  {"role":"assistant","content":[{"id":"call_a","input":{"query":"select:mcp__herdr_link__herdr_link","max_results":5},"name":"ToolSearch","type":"tool_use"}]},
  {"role":"user","content":[{"type":"tool_result","tool_use_id":"call_a","content":[{"type":"tool_reference","tool_name":"mcp__herdr_link__herdr_link"}]},{"type":"text","text":"Tool loaded."}]},
  {"role":"assistant","content":[{"id":"call_b","input":{},"name":"mcp__herdr_link__herdr_link","type":"tool_use"}]},
  {"role":"user","content":[{"tool_use_id":"call_b","type":"tool_result","content":"{\"status\":\"active\"}","cache_control":{"type":"ephemeral"}}]}],
 "tools":[
  {"name":"Bash","description":"Run a command.","input_schema":{"type":"object"}},
  {"name":"ToolSearch","description":"Fetch deferred tools.","input_schema":{"type":"object","properties":{"query":{"type":"string"},"max_results":{"type":"number"}},"required":["query","max_results"]}},
  {"name":"mcp__herdr_link__herdr_link","description":"Herdr Link gateway.","input_schema":{"type":"object"},"defer_loading":true}],
 "metadata":{"user_id":"{}"},"thinking":{"type":"adaptive"}}`

// Codex: a namespace tool holding the herdr-link tools; results come back
// as function_call_output strings.
const codexActive = `{"model":"fake-model","stream":true,"tool_choice":"auto","parallel_tool_calls":true,"store":false,
 "input":[
  {"type":"message","id":"m1","role":"developer","content":[{"type":"input_text","text":"You are a coding agent."}]},
  {"type":"message","id":"m2","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"}]},
  {"type":"message","id":"m3","role":"user","content":[{"type":"input_text","text":"coordinate with the reviewer"}]},
  {"type":"function_call","status":"completed","id":"fc_1","name":"herdr_link","namespace":"mcp__herdr_link","arguments":"{}","call_id":"call_1"},
  {"type":"function_call_output","id":"fco_1","call_id":"call_1","output":"Wall time: 0.0036 seconds\nOutput:\n{\"status\":\"active\"}"}],
 "tools":[
  {"type":"function","name":"exec_command","description":"Run.","strict":false,"parameters":{"type":"object"}},
  {"type":"namespace","name":"multi_agent_v1","description":"Sub-agents.","tools":[{"type":"function","name":"spawn_agent","description":"Spawn.","strict":false,"parameters":{"type":"object"}}]},
  {"type":"namespace","name":"mcp__herdr_link","description":"Herdr Link instructions.","tools":[
    {"type":"function","name":"herdr_link","description":"Gateway.","strict":false,"parameters":{"type":"object"}},
    {"type":"function","name":"herdr_link_peers","description":"Peers.","strict":false,"parameters":{"type":"object"}}]},
  {"type":"web_search","external_web_access":false}]}`

// OpenCode (openai-compatible Chat Completions): server-prefixed names.
const opencodeActive = `{"model":"fake-model","max_tokens":32000,"tool_choice":"auto","stream":true,"stream_options":{"include_usage":true},
 "messages":[
  {"role":"system","content":"You are opencode."},
  {"role":"user","content":"coordinate with the reviewer"},
  {"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"herdr_link_herdr_link","arguments":"{}"}}]},
  {"role":"tool","tool_call_id":"call_1","content":"{\"status\":\"active\"}"}],
 "tools":[
  {"type":"function","function":{"name":"bash","description":"Run.","parameters":{"type":"object"}}},
  {"type":"function","function":{"name":"herdr_link_herdr_link","description":"Gateway.","parameters":{"type":"object"}}},
  {"type":"function","function":{"name":"herdr_link_herdr_link_send","description":"Send.","parameters":{"type":"object"}}}]}`

// OpenCode's title request: no tools, a side request.
const opencodeTitle = `{"model":"fake-model","max_tokens":32000,"stream":true,"messages":[
  {"role":"system","content":"You are a title generator."},{"role":"user","content":"Generate a title for this conversation:\n"},{"role":"user","content":"coordinate"}]}`

func compact(t *testing.T, s string) int {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return b.Len()
}

func TestParseRecordedShapes(t *testing.T) {
	s := &Server{opts: Options{Canonical: DefaultCanonical, SearchTools: DefaultSearchTools}}
	nsEntry := `{"type":"namespace","name":"mcp__herdr_link","description":"Herdr Link instructions.","tools":[
    {"type":"function","name":"herdr_link","description":"Gateway.","strict":false,"parameters":{"type":"object"}},
    {"type":"function","name":"herdr_link_peers","description":"Peers.","strict":false,"parameters":{"type":"object"}}]}`
	tests := []struct {
		name        string
		parse       func([]byte, *parsed) error
		body        string
		wantLink    []string
		wantBytes   int
		wantDeferN  int // deferred tools
		wantResults []Result
		wantCount   int
		wantLast    string
		wantFirst   string
		wantNS      string
	}{
		{name: "claude tool search", parse: parseAnthropic, body: claudeToolSearch,
			wantLink:  []string{Gateway},
			wantBytes: compact(t, `{"name":"mcp__herdr_link__herdr_link","description":"Herdr Link gateway.","input_schema":{"type":"object"},"defer_loading":true}`),
			// loaded by the tool_reference, so not deferred any more
			wantDeferN:  0,
			wantResults: []Result{{CallID: "call_b", Text: `{"status":"active"}`, Bytes: 19}},
			wantCount:   2,
			wantLast:    "Tool loaded.",
			wantFirst:   "<system-reminder>\nreminder\n</system-reminder>\n\ncoordinate with the reviewer"},
		{name: "codex namespace", parse: parseResponses, body: codexActive,
			wantLink:    []string{Gateway, Peers},
			wantBytes:   compact(t, nsEntry),
			wantResults: []Result{{CallID: "call_1", Text: "Wall time: 0.0036 seconds\nOutput:\n{\"status\":\"active\"}", Bytes: 53}},
			wantCount:   1,
			wantLast:    "coordinate with the reviewer",
			wantFirst:   "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>",
			wantNS:      "mcp__herdr_link"},
		{name: "opencode prefixed", parse: parseChat, body: opencodeActive,
			wantLink: []string{Gateway, Send},
			wantBytes: compact(t, `{"type":"function","function":{"name":"herdr_link_herdr_link","description":"Gateway.","parameters":{"type":"object"}}}`) +
				compact(t, `{"type":"function","function":{"name":"herdr_link_herdr_link_send","description":"Send.","parameters":{"type":"object"}}}`),
			wantResults: []Result{{CallID: "call_1", Text: `{"status":"active"}`, Bytes: 19}},
			wantCount:   1,
			wantLast:    "coordinate with the reviewer",
			wantFirst:   "coordinate with the reviewer"},
		{name: "opencode title (side)", parse: parseChat, body: opencodeTitle,
			wantLast: "coordinate", wantFirst: "Generate a title for this conversation:\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p parsed
			if err := tt.parse([]byte(tt.body), &p); err != nil {
				t.Fatal(err)
			}
			link, n := s.resolve(&p)
			if !reflect.DeepEqual(link, tt.wantLink) {
				t.Errorf("link tools %v, want %v", link, tt.wantLink)
			}
			if n != tt.wantBytes {
				t.Errorf("link bytes %d, want %d", n, tt.wantBytes)
			}
			deferred := 0
			for _, td := range p.tools {
				if td.Deferred {
					deferred++
				}
				if td.Canonical != "" && td.Namespace != tt.wantNS {
					t.Errorf("%s: namespace %q, want %q", td.Name, td.Namespace, tt.wantNS)
				}
			}
			if deferred != tt.wantDeferN {
				t.Errorf("%d deferred tools, want %d", deferred, tt.wantDeferN)
			}
			if !reflect.DeepEqual(p.newResults, tt.wantResults) {
				t.Errorf("results %+v, want %+v", p.newResults, tt.wantResults)
			}
			if p.resultCount != tt.wantCount {
				t.Errorf("result count %d, want %d", p.resultCount, tt.wantCount)
			}
			if got := p.userTexts[len(p.userTexts)-1]; got != tt.wantLast {
				t.Errorf("last user %q, want %q", got, tt.wantLast)
			}
			if p.firstUser != tt.wantFirst {
				t.Errorf("first user %q, want %q", p.firstUser, tt.wantFirst)
			}
		})
	}
}

func TestCanonicalName(t *testing.T) {
	tests := []struct{ name, want string }{
		{"herdr_link", Gateway},
		{"mcp__herdr_link__herdr_link", Gateway},
		{"mcp__herdr_link__herdr_link_peers", Peers},
		{"herdr_link_herdr_link", Gateway},
		{"herdr_link_herdr_link_close", Close},
		{"herdr_link_send", Send},
		{"herdr_link_peers_extra", ""},
		{"Bash", ""},
		{"myherdr_link", ""},
	}
	for _, tt := range tests {
		if got := canonicalName(tt.name, "", DefaultCanonical); got != tt.want {
			t.Errorf("canonicalName(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// --- a host simulator over HTTP, per API ---

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
		t.Fatalf("side request answered %+v", c)
	}
	c1 := anthropicTurn(t, s.URL, dormant, msgs)
	if c1.name != "mcp__herdr_link__herdr_link" || c1.args != "{}" {
		t.Fatalf("step 1: %+v", c1)
	}
	call(c1)
	result(c1.id, `{"status":"active"}`)
	// The host has not refreshed yet: the fake uses the gateway's action form.
	c2 := anthropicTurn(t, s.URL, dormant, msgs)
	if c2.name != "mcp__herdr_link__herdr_link" || c2.args != `{"action":"peers","arguments":{}}` {
		t.Fatalf("step 2: %+v", c2)
	}
	// A retry of the same request gets the same answer and does not advance.
	if again := anthropicTurn(t, s.URL, dormant, msgs); again != c2 {
		t.Fatalf("retry answered %+v, want %+v", again, c2)
	}
	call(c2)
	result(c2.id, `{"peers":[]}`)
	c3 := anthropicTurn(t, s.URL, active, msgs)
	if c3.name != "mcp__herdr_link__herdr_link_send" {
		t.Fatalf("step 3: %+v", c3)
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
		t.Fatalf("step 4: %+v", c4)
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
		t.Errorf("last request's results %+v", last.Results)
	}
	if reqs[3].Reply.Via != "gateway" || reqs[4].Results[0].Action != "peers" {
		t.Errorf("gateway fallback not logged: %+v / %+v", reqs[3].Reply, reqs[4].Results)
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
		t.Fatalf("want a ToolSearch select call, got %+v", out)
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
		t.Fatalf("after loading: %+v", out)
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
		t.Fatalf("step 1: %+v", c)
	}
	if c := turn([]any{ns("herdr_link", "herdr_link_close")}); c.name != "herdr_link_close" || c.namespace != "mcp__herdr_link" || c.args != `{"agent":"reviewer"}` {
		t.Fatalf("step 2: %+v", c)
	}
	if c := turn([]any{ns("herdr_link", "herdr_link_close")}); c.text != "closed" {
		t.Fatalf("step 3: %+v", c)
	}
	reqs := s.Requests()
	if reqs[2].Results[0].Action != "close" || reqs[2].LinkDefBytes == 0 {
		t.Fatalf("log: %+v", reqs[2])
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
		t.Fatalf("step 1: %+v", c)
	}
	// One step late, like OpenCode: the fallback keeps the script going.
	if c := turn([]any{fn("herdr_link_herdr_link")}); c.name != "herdr_link_herdr_link" || c.args != `{"action":"peers","arguments":{}}` {
		t.Fatalf("step 2: %+v", c)
	}
	if c := turn([]any{fn("herdr_link_herdr_link"), fn("herdr_link_herdr_link_peers")}); c.text != "done" {
		t.Fatalf("step 3: %+v", c)
	}
}

func TestUnavailableTool(t *testing.T) {
	s := New(t, Script{Steps: []Step{{Call: Peers, NoFallback: true}}})
	c := anthropicTurn(t, s.URL, []any{tool("mcp__herdr_link__herdr_link")}, []any{map[string]any{"role": "user", "content": "x"}})
	if c.name != "" || !strings.Contains(c.text, "not available") {
		t.Fatalf("answered %+v", c)
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

func TestEnvelopes(t *testing.T) {
	a := `{"protocol":"herdr-link/1","id":"hl_1","from":"a","to":"b","message":"x"}`
	b := `{"protocol":"herdr-link/1","id":"hl_2","from":"b","to":"a","reply_to":"hl_1","message":"y } {"}`
	tests := []struct {
		text string
		ids  []string
	}{
		{"", nil},
		{"prose\n" + a, []string{"hl_1"}},
		{"draft" + a + b + " trailing", []string{"hl_1", "hl_2"}},
		{`{"protocol":"herdr-link/1","id":""}`, nil},
		{`{"protocol":"other/1","id":"x"}`, nil},
		{`{"protocol":"herdr-link/1","id":"hl_3"`, nil},
	}
	for _, tt := range tests {
		var ids []string
		for _, e := range Envelopes(tt.text) {
			ids = append(ids, e.ID)
		}
		if !reflect.DeepEqual(ids, tt.ids) {
			t.Errorf("Envelopes(%q) = %v, want %v", tt.text, ids, tt.ids)
		}
	}
}

func TestParseScript(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string
	}{
		{`{"steps":[{"call":"herdr_link"},{"text":"done"}]}`, ""},
		{`{"steps":[{}]}`, "needs call or text"},
		{`{"steps":[{"call":"a","text":"b"}]}`, "both"},
		{`{"steps":[{"text":"b","args":{}}]}`, "no args"},
		{`{"steps":[],"extra":1}`, "unknown field"},
		{`{"steps":[]} {}`, "trailing"},
		{`[`, "script"},
	}
	for _, tt := range tests {
		_, err := ParseScript([]byte(tt.in))
		if (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("ParseScript(%s) error %v, want %q", tt.in, err, tt.wantErr)
		}
	}
}
