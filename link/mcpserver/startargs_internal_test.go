package mcpserver

import (
	"testing"

	"github.com/herdr-link/herdr-link/internal/jsonx"
)

// FuzzParseStart: any arguments either parse into a start with a name, or
// fail with the fixed text (never echoing the input).
func FuzzParseStart(f *testing.F) {
	f.Add(ToolStart, `{"name":"tester","kind":"claude","args":["a"],"placement":"tab"}`)
	f.Add(ToolGateway, `{"action":"start","arguments":{"name":"t","agent":"rev"}}`)
	f.Add(ToolGateway, `{"action":"start","name":"t","args":[1]}`)
	f.Add(ToolStart, `{"name":null,"kind":{}}`)
	f.Fuzz(func(t *testing.T, tool, args string) {
		if tool != ToolStart && tool != ToolGateway {
			return
		}
		c, err := parseCall(tool, jsonx.RawMessage(args))
		switch {
		case err != nil:
			if err != errStartArgs && err != errArgsObject && err != errAction && err != errSendArgs && err != errCloseArgs {
				t.Fatalf("unfixed error text %q", err)
			}
		case c.action == "start" && c.start.Name == "":
			t.Fatalf("a start without a name from %s", args)
		}
	})
}
