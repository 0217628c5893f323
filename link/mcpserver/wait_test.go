package mcpserver_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/link/mcpserver"
)

// herdr_link_wait over MCP: pending at its timeout, progress reported
// when the call asks for it (with the token as sent), an id that is not a
// request of the caller refused, and the gateway's wait action the same.
func TestWaitTool(t *testing.T) {
	h := start(t, hopt{opts: func(o *mcpserver.Options) {
		o.Link = relink(t, o.Link, func(c *link.Config) { c.ProgressEvery = 40 * time.Millisecond })
	}})
	h.call(1, "initialize", `{"protocolVersion":"2025-06-18"}`)
	out := h.call(2, "tools/call", `{"name":"herdr_link_send","arguments":{"to":"stuck","message":"when you can"}}`)
	id := regexp.MustCompile(`hl_[a-z0-9]+_[a-z0-9]+`).FindString(out[len(out)-1])
	if id == "" || !strings.Contains(out[len(out)-1], `"delivery\":\"held\"`) {
		t.Fatalf("send: %v", out)
	}
	out = h.call(3, "tools/call", `{"name":"herdr_link_wait","arguments":{"id":"`+id+`","timeout_s":0.3},"_meta":{"progressToken":"tok-7"}}`)
	last := out[len(out)-1]
	if !strings.Contains(last, `\"state\":\"pending\"`) || !strings.Contains(last, `\"peer\":\"stuck\"`) {
		t.Fatalf("wait result %s", last)
	}
	progress := 0
	for _, l := range out[:len(out)-1] {
		if strings.Contains(l, `"method":"notifications/progress"`) && strings.Contains(l, `"progressToken":"tok-7"`) {
			progress++
		}
	}
	if progress == 0 {
		t.Errorf("no progress notification before the result: %v", out)
	}
	// Without a token: no progress.
	out = h.call(4, "tools/call", `{"name":"herdr_link","arguments":{"action":"wait","id":"`+id+`","timeout_s":0.1}}`)
	if len(out) != 1 || !strings.Contains(out[0], `pending`) {
		t.Errorf("gateway wait without a token: %v", out)
	}
	for _, bad := range []string{`{"id":"hl_zz_00"}`, `{"id":"w1:p2"}`, `{}`, `{"id":"` + id + `","timeout_s":51}`, `{"id":"` + id + `","timeout_s":"5"}`, `{"ID":"` + id + `"}`} {
		out = h.call(5, "tools/call", `{"name":"herdr_link_wait","arguments":`+bad+`}`)
		if !strings.Contains(out[len(out)-1], `INVALID_ARGUMENT`) || strings.Contains(out[len(out)-1], "w1:") {
			t.Errorf("wait %s: %s", bad, out[len(out)-1])
		}
	}
}
