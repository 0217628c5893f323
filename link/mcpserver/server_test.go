package mcpserver_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/link/mcpserver"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

func TestInitializeRevisions(t *testing.T) {
	tests := map[string]string{
		"2024-11-05": "2024-11-05", "2025-03-26": "2025-03-26", "2025-06-18": "2025-06-18", "2025-11-25": "2025-11-25",
		"2026-07-28": "2025-11-25", "1999-01-01": "2025-11-25", "": "2025-11-25",
	}
	for asked, want := range tests {
		h := start(t, hopt{})
		out := h.call(1, "initialize", fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{}}`, asked))
		var r struct {
			Result struct {
				ProtocolVersion string
				Capabilities    map[string]any
				ServerInfo      struct{ Name, Version string }
			}
		}
		if err := jsonx.Unmarshal([]byte(out[0]), &r); err != nil || r.Result.ProtocolVersion != want || r.Result.ServerInfo.Name != "herdr-link" || r.Result.ServerInfo.Version != "test" {
			t.Errorf("asked %q: %s", asked, out[0])
		}
		if !strings.Contains(out[0], `"capabilities":{"tools":{"listChanged":true}}`) {
			t.Errorf("capabilities: %s", out[0])
		}
	}
}

func TestActivation(t *testing.T) {
	forms := []struct {
		name, tool, args string
	}{
		{"gateway {}", "herdr_link", `{}`},
		{"gateway activate", "herdr_link", `{"action":"activate"}`},
		{"gateway no arguments", "herdr_link", ``},
		{"direct peers", "herdr_link_peers", `{}`},
		{"direct send", "herdr_link_send", `{"to":"reviewer","message":"hi"}`},
		{"direct close", "herdr_link_close", `{"agent":"nobody"}`},
		{"gateway action", "herdr_link", `{"action":"peers"}`},
		{"invalid arguments", "herdr_link_send", `{"to":1}`},
	}
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			h := start(t, hopt{})
			h.call(1, "initialize", `{"protocolVersion":"2025-06-18"}`)
			// Listing has no side effects.
			for i := 0; i < 3; i++ {
				if out := h.call(10+i, "tools/list", ""); len(out) != 1 || strings.Count(out[0], `"name":"herdr_link`) != 1 {
					t.Fatalf("dormant list: %v", out)
				}
			}
			params := fmt.Sprintf(`{"name":%q}`, f.tool)
			if f.args != "" {
				params = fmt.Sprintf(`{"name":%q,"arguments":%s}`, f.tool, f.args)
			}
			out := h.call(2, "tools/call", params)
			if len(out) != 2 || out[0] != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
				t.Fatalf("want list_changed then the response, got %v", out)
			}
			list := h.call(3, "tools/list", "")
			names := regexp.MustCompile(`"name":"(herdr_link[a-z_]*)"`).FindAllStringSubmatch(list[0], -1)
			var got []string
			for _, n := range names {
				got = append(got, n[1])
			}
			if strings.Join(got, ",") != "herdr_link,herdr_link_peers,herdr_link_start,herdr_link_send,herdr_link_wait,herdr_link_close" {
				t.Fatalf("active list %v", got)
			}
			// Exactly one list_changed per connection.
			out = h.call(4, "tools/call", `{"name":"herdr_link","arguments":{}}`)
			out = append(out, h.call(5, "tools/call", `{"name":"herdr_link_peers"}`)...)
			for _, l := range out {
				if strings.Contains(l, "list_changed") {
					t.Fatalf("a second list_changed: %v", out)
				}
			}
		})
	}
}

func TestToolDefinitions(t *testing.T) {
	h := start(t, hopt{})
	h.call(1, "initialize", `{"protocolVersion":"2025-11-25"}`)
	h.call(2, "tools/call", `{"name":"herdr_link"}`)
	var r struct {
		Result struct {
			Tools []struct {
				Name         string
				Title        string
				Description  string
				InputSchema  map[string]any
				OutputSchema map[string]any
				Annotations  map[string]any
			}
		}
	}
	if err := jsonx.Unmarshal([]byte(h.call(3, "tools/list", "")[0]), &r); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]bool{ // readOnly, destructive
		"herdr_link": {false, true}, "herdr_link_peers": {true, false}, "herdr_link_send": {false, false}, "herdr_link_wait": {true, false}, "herdr_link_close": {false, true},
	}
	for _, tool := range r.Result.Tools {
		w := want[tool.Name]
		if tool.Title == "" || tool.Annotations["title"] == "" || tool.Annotations["readOnlyHint"] != w[0] || tool.Annotations["destructiveHint"] != w[1] {
			t.Errorf("%s: title %q annotations %v", tool.Name, tool.Title, tool.Annotations)
		}
		for _, k := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if _, ok := tool.Annotations[k]; !ok {
				t.Errorf("%s: annotation %s not explicit", tool.Name, k)
			}
		}
		if tool.InputSchema["type"] != "object" || tool.OutputSchema["type"] != "object" {
			t.Errorf("%s: schemas %v %v", tool.Name, tool.InputSchema, tool.OutputSchema)
		}
		if len(tool.Name) > 64 || !regexp.MustCompile(`^[a-z0-9_]+$`).MatchString(tool.Name) {
			t.Errorf("tool name %q", tool.Name)
		}
	}
	// No description repeats the contract, or any rule of it verbatim.
	for _, tool := range r.Result.Tools {
		for _, rule := range strings.Split(link.Contract, "\n") {
			if len(rule) > 20 && strings.Contains(tool.Description, rule) {
				t.Errorf("%s's description repeats the contract: %q", tool.Name, rule)
			}
		}
	}
}

// panicky makes every Herdr call panic.
type panicky struct{ link.Herdr }

func (panicky) ListAgents(context.Context) ([]link.Agent, error) { panic("boom") }

func TestToolPanicIsContained(t *testing.T) {
	h := start(t, hopt{opts: func(o *mcpserver.Options) {
		o.Link = mustLink(t, link.Config{Herdr: panicky{}, PaneID: "w1:p1"})
	}})
	h.call(1, "initialize", `{"protocolVersion":"2025-06-18"}`)
	out := h.call(2, "tools/call", `{"name":"herdr_link_peers"}`)
	if !strings.Contains(out[len(out)-1], `"isError":true`) {
		t.Fatalf("panic result %v", out)
	}
	h.call(3, "ping", "")
}

// TestModelFacingTextHasNoIDs is the privacy property over every tool
// path: whatever is called, through which tool, from which pane, against
// which Herdr answer, no tools/call result and no tools/list text contains
// an id of the world.
func TestModelFacingTextHasNoIDs(t *testing.T) {
	faults := []sockettest.Fault{
		{},
		{Error: &schema.ErrorBody{Code: "agent_prompt_failed", Message: "w1:p2 term_63a1 w1"}},
		{Garbage: true},
		{DropMidResponse: true},
	}
	calls := []string{`{"name":"herdr_link"}`, `{"name":"herdr_link","arguments":{"action":"peers"}}`, `{"name":"herdr_link_peers"}`}
	for _, to := range []string{"reviewer", "stuck", "ops", "nobody", "w1:p2", "w2", "BAD"} {
		calls = append(calls,
			fmt.Sprintf(`{"name":"herdr_link_send","arguments":{"to":%q,"message":"hi"}}`, to),
			fmt.Sprintf(`{"name":"herdr_link","arguments":{"action":"send","to":%q,"message":" "}}`, to),
			fmt.Sprintf(`{"name":"herdr_link_send","arguments":{"to":%q,"message":"x","reply_to":"w1:p1"}}`, to),
			fmt.Sprintf(`{"name":"herdr_link_close","arguments":{"agent":%q}}`, to),
		)
	}
	idRE := regexp.MustCompile(`[A-Za-z0-9_:]+`)
	checked := 0
	for _, pane := range []string{"w1:p1", "w1:p3", "w1:p4", "w2:p1", "w9:p9"} {
		for fi, f := range faults {
			h := start(t, hopt{pane: pane, timeout: time.Second})
			ids := map[string]bool{}
			for _, id := range h.world.IDs() {
				ids[id] = true
			}
			h.call(1, "initialize", `{"protocolVersion":"2025-06-18"}`)
			for _, m := range []string{schema.MethodAgentPrompt, schema.MethodPaneClose, schema.MethodAgentRename} {
				h.srv.SetFault(m, f)
			}
			for i, c := range calls {
				for _, l := range h.call(100+i, "tools/call", c) {
					// herdr-link's own message ids are not Herdr ids.
					l = hlIDRE.ReplaceAllString(l, "hl_ID")
					for _, tok := range idRE.FindAllString(l, -1) {
						if ids[tok] || strings.HasPrefix(tok, "term_") {
							t.Errorf("pane %s fault %d call %s: %s leaks %q", pane, fi, c, l, tok)
						}
					}
					checked++
				}
			}
			for _, tok := range idRE.FindAllString(h.call(2, "tools/list", "")[0], -1) {
				if ids[tok] {
					t.Errorf("tools/list leaks %q", tok)
				}
			}
		}
	}
	t.Logf("%d model-facing lines checked", checked)
}
