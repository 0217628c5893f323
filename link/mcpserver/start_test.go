package mcpserver_test

import (
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/link/mcpserver"
)

// No tool's inputSchema combines schemas at its root: the Anthropic API
// rejects oneOf, anyOf and allOf there, and Claude Code drops such a tool
// silently. Exclusive arguments are the server's to check.
func TestFlatInputSchemas(t *testing.T) {
	h := start(t, hopt{})
	h.call(1, "initialize", `{"protocolVersion":"2025-11-25"}`)
	lists := []string{h.call(2, "tools/list", "")[0]}
	h.call(3, "tools/call", `{"name":"herdr_link"}`)
	lists = append(lists, h.call(4, "tools/list", "")[0])
	n := 0
	for _, l := range lists {
		var r struct {
			Result struct {
				Tools []struct {
					Name        string         `json:"name"`
					InputSchema map[string]any `json:"inputSchema"`
				} `json:"tools"`
			} `json:"result"`
		}
		if err := jsonx.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		for _, tl := range r.Result.Tools {
			n++
			if tl.InputSchema["type"] != "object" {
				t.Errorf("%s: inputSchema type %v", tl.Name, tl.InputSchema["type"])
			}
			for _, k := range []string{"oneOf", "anyOf", "allOf", "not", "if", "then", "else"} {
				if _, ok := tl.InputSchema[k]; ok {
					t.Errorf("%s: inputSchema has %q at its root", tl.Name, k)
				}
			}
		}
	}
	if n != 7 {
		t.Errorf("checked %d tool definitions, want 7 (1 dormant, 6 active)", n)
	}
}

// Start through the tool and the gateway: the result names the agent and
// its state, never an id; the new agent is a peer at once; bad
// combinations are the server's errors.
func TestStartTool(t *testing.T) {
	dir := t.TempDir()
	h := start(t, hopt{opts: func(o *mcpserver.Options) {
		o.Link = relink(t, o.Link, func(c *link.Config) { c.Dir, c.Home, c.StartPoll = dir, dir, time.Millisecond })
	}})
	h.call(1, "initialize", `{"protocolVersion":"2025-11-25"}`)
	h.call(2, "tools/call", `{"name":"herdr_link"}`)
	calls := []struct {
		args string
		want string
	}{
		{`{"name":"herdr_link_start","arguments":{"name":"tester","kind":"claude","message":"run the tests"}}`, `"status":"started","agent":"tester","state":"idle","id":"hl_`},
		{`{"name":"herdr_link","arguments":{"action":"start","name":"tester2","kind":"codex","placement":"tab"}}`, `{"status":"started","agent":"tester2","state":"idle"}`},
		{`{"name":"herdr_link","arguments":{"action":"start","arguments":{"name":"tester3","kind":"codex","beside":"tester","placement":"down"}}}`, `"agent":"tester3"`},
		{`{"name":"herdr_link_start","arguments":{"name":"tester","kind":"claude"}}`, `START_NAME_TAKEN`},
		{`{"name":"herdr_link_start","arguments":{"name":"x1","kind":"claude","agent":"rev"}}`, `START_INPUT_INVALID`},
		{`{"name":"herdr_link_start","arguments":{"name":"x1"}}`, `START_INPUT_INVALID`},
		{`{"name":"herdr_link_start","arguments":{"name":"x1","agent":"rev"}}`, `START_CONFIG_NOT_FOUND`},
		{`{"name":"herdr_link_start","arguments":{"name":"x1","kind":"nosuch"}}`, `START_INPUT_INVALID`},
		{`{"name":"herdr_link_start","arguments":{"name":"x1","kind":"claude","args":"--yolo"}}`, `INVALID_ARGUMENT: start needs`},
		{`{"name":"herdr_link_start","arguments":{"name":"x1","kind":"claude","shell":"sh -c"}}`, `INVALID_ARGUMENT: start needs`},
		{`{"name":"herdr_link_start","arguments":{"kind":"claude"}}`, `INVALID_ARGUMENT: start needs`},
	}
	for i, c := range calls {
		out := h.call(10+i, "tools/call", c.args)
		line := out[len(out)-1]
		if !strings.Contains(line, c.want) && !strings.Contains(line, jsonEsc(c.want)) {
			t.Errorf("%s:\n got %s\nwant %s", c.args, line, c.want)
		}
		// Message ids are herdr-link's own (random: one may hold "w2").
		bare := normalize(line)
		for _, id := range h.world.IDs() {
			if strings.Contains(bare, id) {
				t.Errorf("%s: the result holds the id %q: %s", c.args, id, line)
			}
		}
	}
	out := h.call(50, "tools/call", `{"name":"herdr_link_peers"}`)
	for _, n := range []string{"tester", "tester2", "tester3"} {
		if !strings.Contains(out[len(out)-1], `\"name\":\"`+n+`\"`) && !strings.Contains(out[len(out)-1], `"name":"`+n+`"`) {
			t.Errorf("%s is not a peer: %s", n, out[len(out)-1])
		}
	}
}
