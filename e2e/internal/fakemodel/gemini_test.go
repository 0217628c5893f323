package fakemodel

import (
	"encoding/json"
	"strings"
	"testing"
)

// geminiActive is a Gemini CLI request after activation: a function
// response for the gateway and the active tools.
const geminiActive = `{"contents":[{"role":"user","parts":[{"text":"find reviewer"}]},
 {"role":"model","parts":[{"functionCall":{"id":"call_fm0001","name":"mcp_herdr_link_herdr_link","args":{}}}]},
 {"role":"user","parts":[{"functionResponse":{"id":"call_fm0001","name":"mcp_herdr_link_herdr_link","response":{"output":"{\"status\":\"active\"}"}}}]}],
 "tools":[{"functionDeclarations":[{"name":"mcp_herdr_link_herdr_link","parametersJsonSchema":{"type":"object"}},{"name":"mcp_herdr_link_herdr_link_peers"}]}]}`

func FuzzParseGemini(f *testing.F) {
	fuzzRequest(f, "gemini", parseGemini, geminiActive, `{"contents":[{"role":"user","parts":[{"text":"x"}]}]}`)
}

func TestGeminiPaths(t *testing.T) {
	for _, tt := range []struct{ path, method, model string }{
		{"/v1beta/models/gemini-2.5-flash:streamGenerateContent", "streamGenerateContent", "gemini-2.5-flash"},
		{"/v1beta/models/m:generateContent", "generateContent", "m"},
		{"/v1beta/models/m:countTokens", "countTokens", "m"},
		{"/v1/chat/completions", "", ""},
		{"/v1/x:generateContent", "", ""},
	} {
		if m := geminiMethod(tt.path); m != tt.method {
			t.Errorf("geminiMethod(%q) = %q, want %q", tt.path, m, tt.method)
		}
		if tt.method != "" && geminiModel(tt.path) != tt.model {
			t.Errorf("geminiModel(%q) = %q, want %q", tt.path, geminiModel(tt.path), tt.model)
		}
	}
}

// TestGeminiConversation: the script over the Gemini API, streaming, as
// Gemini CLI drives it: the gateway, then peers through the active tool.
func TestGeminiConversation(t *testing.T) {
	s := New(t, Script{Steps: []Step{{Call: Gateway}, {Call: Peers}, {Text: "done"}}})
	decl := func(n string) map[string]any {
		return map[string]any{"name": n, "parametersJsonSchema": map[string]any{"type": "object"}}
	}
	contents := []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "peers?"}}}}
	type call struct {
		id, name, text string
		args           map[string]any
	}
	turn := func(names ...string) call {
		var ds []any
		for _, n := range names {
			ds = append(ds, decl(n))
		}
		resp := post(t, s.URL+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
			map[string]any{"contents": contents, "tools": []any{map[string]any{"functionDeclarations": ds}}})
		var c call
		for _, ev := range readSSE(t, resp.Body) {
			parts := ev["candidates"].([]any)[0].(map[string]any)["content"].(map[string]any)["parts"].([]any)
			p := parts[0].(map[string]any)
			if fc, ok := p["functionCall"].(map[string]any); ok {
				c.id, c.name = fc["id"].(string), fc["name"].(string)
				c.args, _ = fc["args"].(map[string]any)
			}
			if txt, ok := p["text"].(string); ok {
				c.text += txt
			}
		}
		if c.name != "" {
			contents = append(contents,
				map[string]any{"role": "model", "parts": []any{map[string]any{"functionCall": map[string]any{"id": c.id, "name": c.name, "args": c.args}}}},
				map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"id": c.id, "name": c.name,
					"response": map[string]any{"output": `{"status":"active"}`}}}}})
		}
		return c
	}
	if c := turn("mcp_herdr_link_herdr_link"); c.name != "mcp_herdr_link_herdr_link" {
		t.Fatalf("step 1 = %v, want a call of mcp_herdr_link_herdr_link", c)
	}
	if c := turn("mcp_herdr_link_herdr_link", "mcp_herdr_link_herdr_link_peers"); c.name != "mcp_herdr_link_herdr_link_peers" {
		t.Fatalf("step 2 = %v, want a call of mcp_herdr_link_herdr_link_peers", c)
	}
	if c := turn("mcp_herdr_link_herdr_link", "mcp_herdr_link_herdr_link_peers"); c.text != "done" {
		t.Fatalf("step 3 = %v, want text \"done\"", c)
	}
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("logged %d requests, want 3", len(reqs))
	}
	if reqs[1].API != "gemini" || !reqs[1].Stream || len(reqs[1].Results) != 1 {
		t.Fatalf("second request: api %q, stream %v, %d results; want gemini, true, 1", reqs[1].API, reqs[1].Stream, len(reqs[1].Results))
	}
	if r := reqs[1].Results[0]; r.Action != "activate" || r.Text != `{"status":"active"}` {
		t.Fatalf("result %s with output %q, want the activation, its output unwrapped to {\"status\":\"active\"}", r.Action, r.Text)
	}
	if reqs[2].LinkDefBytes == 0 || !strings.Contains(strings.Join(reqs[2].LinkTools, ","), Peers) {
		t.Fatalf("third request: link tools %q (%d bytes), want %s among them", reqs[2].LinkTools, reqs[2].LinkDefBytes, Peers)
	}
}

// TestGeminiNonStreaming: generateContent answers one JSON object, and
// countTokens is a side request.
func TestGeminiNonStreaming(t *testing.T) {
	s := New(t, Script{Steps: []Step{{Text: "hello"}}})
	body := map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "hi"}}}},
		"tools": []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "mcp_herdr_link_herdr_link"}}}}}
	resp := post(t, s.URL+"/v1beta/models/m:generateContent", body)
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	parts := out["candidates"].([]any)[0].(map[string]any)["content"].(map[string]any)["parts"].([]any)
	if parts[0].(map[string]any)["text"] != "hello" {
		t.Fatalf("answer %v", out)
	}
	_ = post(t, s.URL+"/v1beta/models/m:countTokens", body)
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("logged %d requests, want 2", len(reqs))
	}
	if reqs[0].Stream || reqs[0].Model != "m" || reqs[1].Main {
		t.Fatalf("log: first stream %v, model %q; second main %v; want false, m; false", reqs[0].Stream, reqs[0].Model, reqs[1].Main)
	}
}
