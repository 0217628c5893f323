package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/google/go-cmp/cmp"
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

// Long: one table of recorded request shapes, one case per host and API.
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
				t.Errorf("results mismatch (-want +got):\n%s", cmp.Diff(tt.wantResults, p.newResults))
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
		{"herdr_link-herdr_link", Gateway},
		{"herdr_link-herdr_link_send", Send},
		{"mcp_herdr_link_herdr_link_close", Close},
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

// String shows a turn as a failure message reads it: the call, or the text.
func (c toolCall) String() string {
	if c.name == "" {
		return fmt.Sprintf("text %q", c.text)
	}
	call := fmt.Sprintf("%s(%s)", c.name, c.args)
	if c.namespace != "" {
		call = c.namespace + "." + call
	}
	if c.text != "" {
		call += fmt.Sprintf(" and text %q", c.text)
	}
	return call
}

// resultSummary shows logged tool results as action/bytes for a failure
// message.
func resultSummary(rs []Result) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%s/%dB", r.Action, r.Bytes)
	}
	return "[" + strings.Join(parts, " ") + "]"
}
