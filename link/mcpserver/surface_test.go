package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// Byte budgets of herdr-link's tool definitions in one Claude Code model
// request, the reference's figures measured in Claude Code 2.1.328.
const (
	claudeActiveBudget  = 2539
	claudeDormantBudget = 1093
)

// claudeCodeToolBytes is the size of the tool definitions as Claude Code
// 2.1.328 puts them into an Anthropic Messages request: per tool the
// object {"name":"mcp__<server>__<tool>","description":…,"input_schema":…},
// serialized compactly the way JavaScript's JSON.stringify does (no HTML
// escaping, key order kept). Checked against a captured request of that
// version: the dormant gateway of commit a8c0d48 computes to 889 bytes
// here and took 889 bytes there, and the active surface of commit 6d0ca26
// took 2,223 bytes there, as [TestClaudeCodeDefinitionBytes] computes it.
// Output schemas, titles and annotations are not sent to the model.
func claudeCodeToolBytes(t *testing.T, toolsListLine string) (map[string]int, []string) {
	t.Helper()
	var r struct {
		Result struct {
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(toolsListLine), &r); err != nil {
		t.Fatal(err)
	}
	sizes := map[string]int{}
	var names []string
	for _, tl := range r.Result.Tools {
		// Claude Code parses the schema and stringifies it again: same
		// key order, compact, no HTML escapes.
		var schemaBuf bytes.Buffer
		if err := json.Compact(&schemaBuf, tl.InputSchema); err != nil {
			t.Fatal(err)
		}
		schemaJS := jsStringifyStrings(t, schemaBuf.Bytes())
		var b bytes.Buffer
		b.WriteString(`{"name":`)
		b.Write(jsString(t, "mcp__herdr_link__"+tl.Name))
		b.WriteString(`,"description":`)
		b.Write(jsString(t, tl.Description))
		b.WriteString(`,"input_schema":`)
		b.Write(schemaJS)
		b.WriteString(`}`)
		sizes[tl.Name] = b.Len()
		names = append(names, tl.Name)
	}
	return sizes, names
}

// jsString encodes s as JSON.stringify does.
func jsString(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// jsStringifyStrings rewrites compact JSON the way JSON.stringify would
// write it: the server's encoder escapes <, > and & as \u003c, \u003e and
// \u0026, JavaScript does not. Any other \u escape would need more care,
// so it fails the test.
func jsStringifyStrings(t *testing.T, compact []byte) []byte {
	t.Helper()
	out := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(compact))
	if strings.Contains(out, `\u`) {
		t.Fatalf("unexpected \\u escape in %s", out)
	}
	return []byte(out)
}

// After list_changed, Claude Code 2.1.328 lists the Tier-1 tools but keeps
// sending the gateway's description from the first listing (observed: the
// active request held the dormant gateway text). The active budget
// therefore holds for either gateway description.
func TestClaudeCodeDefinitionBytes(t *testing.T) {
	h := start(t, hopt{})
	h.call(1, "initialize", `{"protocolVersion":"2025-11-25"}`)
	dormant, names := claudeCodeToolBytes(t, h.call(2, "tools/list", "")[0])
	if len(names) != 1 {
		t.Fatalf("dormant tools %v", names)
	}
	h.call(3, "tools/call", `{"name":"herdr_link"}`)
	active, names := claudeCodeToolBytes(t, h.call(4, "tools/list", "")[0])
	if len(names) != 6 {
		t.Fatalf("active tools %v", names)
	}
	tier1 := active["herdr_link_peers"] + active["herdr_link_start"] + active["herdr_link_send"] + active["herdr_link_wait"] + active["herdr_link_close"]
	t.Logf("per tool: %v (dormant gateway %d)", active, dormant["herdr_link"])
	gw := max(dormant["herdr_link"], active["herdr_link"])
	t.Logf("Claude Code tool definition bytes per request: dormant %d (budget %d); active %d with the active gateway text, %d with the dormant one (budget %d)",
		dormant["herdr_link"], claudeDormantBudget, tier1+active["herdr_link"], tier1+dormant["herdr_link"], claudeActiveBudget)
	if d := dormant["herdr_link"]; d > claudeDormantBudget {
		t.Errorf("dormant definitions take %d bytes, more than %d", d, claudeDormantBudget)
	}
	if a := tier1 + gw; a > claudeActiveBudget {
		t.Errorf("active definitions take %d bytes, more than %d", a, claudeActiveBudget)
	}
}

// TestJSStringify checks the re-encoding against a literal JSON.stringify
// output.
func TestJSStringify(t *testing.T) {
	in := `{"a":{"type":"string","enum":["x","y"],"description":"\u003cname\u003e \"q\""},"b":[1,{"c":true}],"d":null}`
	want := `{"a":{"type":"string","enum":["x","y"],"description":"<name> \"q\""},"b":[1,{"c":true}],"d":null}`
	if got := string(jsStringifyStrings(t, []byte(in))); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// modelViews is what a model sees of one tool result: hosts that show
// structuredContent when there is one (Claude Code 2.1.328, Codex), and
// hosts that show the text blocks (OpenCode, the Pi adapter).
func modelViews(t *testing.T, line string) (structured, text string, ok bool) {
	t.Helper()
	var r struct {
		Result *struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	if err := jsonx.Unmarshal([]byte(line), &r); err != nil || r.Result == nil || r.Result.Content == nil {
		return "", "", false
	}
	var texts []string
	for _, c := range r.Result.Content {
		texts = append(texts, c.Text)
	}
	text = strings.Join(texts, "\n")
	structured = text
	if len(r.Result.StructuredContent) > 0 {
		var s struct {
			Contract string `json:"contract"`
		}
		_ = jsonx.Unmarshal(r.Result.StructuredContent, &s)
		structured = string(r.Result.StructuredContent) + "\n" + s.Contract
	}
	return structured, text, true
}

// The contract reaches the model exactly once per connection, in the
// result of whichever call activates Herdr Link, on every kind of host.
func TestContractOncePerConnection(t *testing.T) {
	firsts := []struct{ name, params string }{
		{"gateway {}", `{"name":"herdr_link","arguments":{}}`},
		{"gateway action peers", `{"name":"herdr_link","arguments":{"action":"peers"}}`},
		{"gateway action send", `{"name":"herdr_link","arguments":{"action":"send","to":"reviewer","message":"hi"}}`},
		{"direct peers", `{"name":"herdr_link_peers"}`},
		{"direct send", `{"name":"herdr_link_send","arguments":{"to":"reviewer","message":"hi"}}`},
		{"direct close of nobody", `{"name":"herdr_link_close","arguments":{"agent":"nobody"}}`},
		{"invalid arguments", `{"name":"herdr_link_send","arguments":{"to":1}}`},
	}
	rest := []string{
		`{"name":"herdr_link","arguments":{}}`,
		`{"name":"herdr_link","arguments":{"action":"activate"}}`,
		`{"name":"herdr_link_peers"}`,
		`{"name":"herdr_link","arguments":{"action":"peers"}}`,
		`{"name":"herdr_link_send","arguments":{"to":"reviewer","message":"again"}}`,
		`{"name":"herdr_link_send","arguments":{"to":"ops","message":"hidden"}}`,
	}
	rule := strings.Split(link.Contract, "\n")[2] // rule 1
	for _, rev := range []string{"2025-11-25", "2025-06-18", "2025-03-26"} {
		for _, f := range firsts {
			t.Run(rev+"/"+f.name, func(t *testing.T) {
				h := start(t, hopt{})
				h.call(1, "initialize", fmt.Sprintf(`{"protocolVersion":%q}`, rev))
				var seenS, seenT []int
				for i, p := range append([]string{f.params}, rest...) {
					for _, l := range h.call(10+i, "tools/call", p) {
						s, tx, ok := modelViews(t, l)
						if !ok {
							continue
						}
						if strings.Contains(s, rule) {
							seenS = append(seenS, i)
						}
						if strings.Contains(tx, rule) {
							seenT = append(seenT, i)
						}
					}
				}
				for _, l := range h.call(2, "tools/list", "") {
					if strings.Contains(l, rule) {
						t.Errorf("tools/list repeats the contract")
					}
				}
				if fmt.Sprint(seenS) != "[0]" || fmt.Sprint(seenT) != "[0]" {
					t.Errorf("contract seen in results %v (structured view) and %v (text view), want only in the first", seenS, seenT)
				}
			})
		}
	}
}

// A first call that the client cancels is never answered, so it does not
// use up the contract: the next result carries it.
func TestContractAfterCancelledFirstCall(t *testing.T) {
	h := start(t, hopt{timeout: 5 * time.Second})
	h.call(1, "initialize", `{"protocolVersion":"2025-06-18"}`)
	h.srv.SetFault(schema.MethodAgentList, sockettest.Fault{Hang: true})
	h.send(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"herdr_link_peers"}}`)
	if l := h.next(); !strings.Contains(l, "list_changed") {
		t.Fatalf("want list_changed first, got %s", l)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow"}}`)
	h.quiet()
	h.srv.ClearFaults()
	out := h.call(3, "tools/call", `{"name":"herdr_link_peers"}`)
	s, tx, _ := modelViews(t, out[len(out)-1])
	if !strings.Contains(s, link.Contract[:60]) || !strings.Contains(tx, link.Contract[:60]) {
		t.Fatalf("the first answered result lacks the contract: %s", out[len(out)-1])
	}
}

// The activating result names the host quirks the model meets: Tier-1
// tools a step later, under a prefix or namespace, and the gateway's
// action form meanwhile.
func TestActivationResultExplainsLateAndPrefixedTools(t *testing.T) {
	h := start(t, hopt{})
	h.call(1, "initialize", `{"protocolVersion":"2025-11-25"}`)
	out := h.call(2, "tools/call", `{"name":"herdr_link"}`)
	s, tx, _ := modelViews(t, out[len(out)-1])
	for _, view := range []string{s, tx} {
		for _, want := range []string{"next step", "prefix", "namespace", "mcp__herdr_link__herdr_link_send", "herdr_link_herdr_link_send",
			`{"action":"peers"}`, `{"action":"send","to":"<name>","message":"<text>"}`, `{"action":"close","agent":"<name>"}`} {
			if !strings.Contains(view, want) && !strings.Contains(view, jsonEsc(want)) {
				t.Errorf("activation result lacks %q:\n%s", want, view)
			}
		}
	}
	list := h.call(3, "tools/list", "")[0]
	var r struct {
		Result struct {
			Tools []struct{ Name, Description string }
		}
	}
	_ = jsonx.Unmarshal([]byte(list), &r)
	if d := r.Result.Tools[0].Description; !strings.Contains(d, "a step later") || !strings.Contains(d, "prefix or namespace") || !strings.Contains(d, `{"action":"peers"}`) {
		t.Errorf("active gateway description: %s", d)
	}
}

// jsonEsc is s as it reads inside a JSON string written by a host.
func jsonEsc(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	out := strings.TrimSpace(b.String())
	return out[1 : len(out)-1]
}

// Codex 0.171.0 shows an MCP server as one namespace tool of the OpenAI
// Responses API: {"type":"namespace","name":"mcp__<server>","description":
// <the initialize instructions>,"tools":[{"type":"function","name",
// "description","strict":false,"parameters"}]}, the parameters re-encoded
// with sorted keys and "properties":{} added to object properties that
// have none. Checked against a captured request: the dormant namespace of
// commit 8134375 computes to 1,157 bytes here and took 1,157 there.
func codexNamespaceBytes(t *testing.T, initLine, toolsListLine string) int {
	t.Helper()
	var ini struct {
		Result struct {
			Instructions string `json:"instructions"`
		} `json:"result"`
	}
	var list struct {
		Result struct {
			Tools []struct {
				Name        string         `json:"name"`
				Description string         `json:"description"`
				InputSchema map[string]any `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(initLine), &ini); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(toolsListLine), &list); err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, tl := range list.Result.Tools {
		if props, ok := tl.InputSchema["properties"].(map[string]any); ok {
			for _, p := range props {
				if pm, ok := p.(map[string]any); ok && pm["type"] == "object" && pm["properties"] == nil {
					pm["properties"] = map[string]any{}
				}
			}
		}
		params := jsMarshal(t, tl.InputSchema) // Go sorts map keys, as Codex does
		tools = append(tools, `{"type":"function","name":`+string(jsString(t, tl.Name))+`,"description":`+string(jsString(t, tl.Description))+`,"strict":false,"parameters":`+params+`}`)
	}
	ns := `{"type":"namespace","name":"mcp__herdr_link","description":` + string(jsString(t, ini.Result.Instructions)) + `,"tools":[` + strings.Join(tools, ",") + `]}`
	return len(ns)
}

func jsMarshal(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(b.String())
}

// In Codex the dormant surface (instructions and gateway) stays within the
// reference's dormant figure too.
func TestCodexDormantBytes(t *testing.T) {
	h := start(t, hopt{})
	ini := h.call(1, "initialize", `{"protocolVersion":"2025-06-18"}`)[0]
	n := codexNamespaceBytes(t, ini, h.call(2, "tools/list", "")[0])
	t.Logf("Codex dormant namespace: %d bytes (budget %d)", n, claudeDormantBudget)
	if n > claudeDormantBudget {
		t.Errorf("Codex's dormant herdr-link namespace takes %d bytes, more than %d", n, claudeDormantBudget)
	}
}

// Outside a usable Herdr pane the tool list is empty and the initialize
// instructions are all herdr-link puts into a model request: for every
// gate failure they stay within the dormant budget, and a herdr-core
// terminal's are no longer than those it got before it was named (the
// HERDR_ENV advice).
func TestOutsideInstructionsBytes(t *testing.T) {
	before := len(jsString(t, link.Gate{Failed: link.FailedHerdrEnv}.Advice()))
	for _, f := range []string{link.FailedHerdrCore, link.FailedHerdrEnv, link.FailedHerdrEnvValue, link.FailedPaneID, link.FailedSocketPath, link.FailedSocket} {
		n := len(jsString(t, link.Gate{Failed: f}.Advice()))
		t.Logf("%s: %d bytes (budget %d)", f, n, claudeDormantBudget)
		if n > claudeDormantBudget {
			t.Errorf("instructions for a failed %s gate take %d bytes, more than %d", f, n, claudeDormantBudget)
		}
		if f == link.FailedHerdrCore && n > before {
			t.Errorf("herdr-core instructions take %d bytes, more than the %d of the HERDR_ENV advice", n, before)
		}
	}
}
