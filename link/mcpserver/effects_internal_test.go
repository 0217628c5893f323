package mcpserver

import (
	"github.com/google/go-cmp/cmp"
	"testing"

	"github.com/herdr-link/herdr-link/internal/jsonx"
)

// effect is what one action can do to the world, stated here independently
// of the annotations in tools.go.
type effect struct {
	writes     bool // changes something outside the server (types into a pane, closes one)
	destroys   bool // the change cannot be undone (a closed pane and its agent are gone)
	repeatSafe bool // a second identical call has no further effect
}

var actionEffects = map[string]effect{
	"activate": {repeatSafe: true},             // switches this connection's tool list only
	"peers":    {repeatSafe: true},             // reads Herdr
	"send":     {writes: true},                 // every call delivers one more message
	"start":    {writes: true},                 // opens a pane and starts an agent; undoes only its own failures
	"close":    {writes: true, destroys: true}, // a name can pass to a new agent between calls
	"wait":     {repeatSafe: true},             // reads the outcome of one of the caller's requests
}

// Arguments under which each action is valid, to find out which actions a
// tool really dispatches.
var actionArgs = map[string]string{
	"activate": `{}`,
	"peers":    `{}`,
	"send":     `{"to":"reviewer","message":"hi"}`,
	"close":    `{"agent":"reviewer"}`,
	"start":    `{"name":"tester","kind":"claude"}`,
	"wait":     `{"id":"hl_a1_b2"}`,
}

// dispatchable lists the actions a tool runs, by feeding its parser every
// action in every argument form it accepts.
func dispatchable(t *testing.T, tool string) []string {
	t.Helper()
	seen := map[string]bool{}
	for action, args := range actionArgs {
		forms := []string{args}
		if action != "activate" {
			forms = append(forms,
				`{"action":"`+action+`","arguments":`+args+`}`,
				`{"action":"`+action+`",`+args[1:],
			)
		} else {
			forms = append(forms, `{"action":"activate"}`)
		}
		for _, f := range forms {
			if f == `{"action":"peers",}` {
				f = `{"action":"peers"}`
			}
			c, err := parseCall(tool, jsonx.RawMessage(f))
			if err == nil {
				seen[c.action] = true
			}
		}
	}
	var out []string
	for a := range seen {
		out = append(out, a)
	}
	return out
}

// No tool may claim more safety than its actions have: a tool that can
// write is not read-only, one that can destroy is destructive, one with a
// non-repeatable action is not idempotent. Hosts auto-approve on these
// hints (Codex shows only the gateway before a refresh).
func TestAnnotationsMatchEffects(t *testing.T) {
	for _, tl := range toolList(true, true, true) {
		actions := dispatchable(t, tl.Name)
		if len(actions) == 0 {
			t.Fatalf("%s dispatches no action", tl.Name)
		}
		var need effect
		need.repeatSafe = true
		for _, a := range actions {
			e, ok := actionEffects[a]
			if !ok {
				t.Fatalf("%s dispatches %q, which has no stated effect", tl.Name, a)
			}
			need.writes = need.writes || e.writes
			need.destroys = need.destroys || e.destroys
			need.repeatSafe = need.repeatSafe && e.repeatSafe
		}
		an := tl.Annotations
		if an.ReadOnlyHint && need.writes {
			t.Errorf("%s claims readOnlyHint but can %v", tl.Name, actions)
		}
		if !an.DestructiveHint && need.destroys {
			t.Errorf("%s claims destructiveHint false but can %v", tl.Name, actions)
		}
		if an.IdempotentHint && !need.repeatSafe {
			t.Errorf("%s claims idempotentHint but can %v", tl.Name, actions)
		}
		// And not more caution than needed on a read-only tool, which
		// hosts would otherwise ask about for nothing.
		if !need.writes && (!an.ReadOnlyHint || an.DestructiveHint) {
			t.Errorf("%s only reads, yet is annotated readOnlyHint %v, destructiveHint %v; want true, false", tl.Name, an.ReadOnlyHint, an.DestructiveHint)
		}
		if an.Title == "" || an.Title != tl.Title {
			t.Errorf("%s: annotation title %q, tool title %q", tl.Name, an.Title, tl.Title)
		}
	}
	// The dormant gateway is the same tool: same annotations.
	if d := gatewayTool(false).Annotations; d != gatewayTool(true).Annotations {
		t.Errorf("dormant gateway annotations mismatch (-active +dormant):\n%s", cmp.Diff(gatewayTool(true).Annotations, d))
	}
}

// The gateway really reaches every action (the probe above must not
// silently find fewer).
func TestGatewayDispatchesEverything(t *testing.T) {
	if got := len(dispatchable(t, ToolGateway)); got != 6 {
		t.Fatalf("gateway dispatches %d actions, want 6", got)
	}
	for tool, want := range map[string]string{ToolPeers: "peers", ToolStart: "start", ToolSend: "send", ToolWait: "wait", ToolClose: "close"} {
		if got := dispatchable(t, tool); len(got) != 1 || got[0] != want {
			t.Errorf("%s dispatches %v", tool, got)
		}
	}
}
