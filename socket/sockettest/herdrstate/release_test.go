package herdrstate_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest/herdrstate"
)

// pane.release_agent as a real Herdr 0.8.2 answers Crush's reports and
// release (observed against a real Herdr 0.8.2, run headless): the release takes
// effect only from the reporting source, for its agent, with a newer
// seq; it clears the agent and its name; a late report with an older
// seq stays ignored, a newer one claims the pane again without the
// name. A detected process of that kind keeps its agent and name.
func TestPaneReleaseAgent(t *testing.T) {
	type step struct{ method, params, want string } // want: an error code, or "" for ok
	rep := func(pane, src, agent, state string, seq int) step {
		return step{schema.MethodPaneReportAgent, fmt.Sprintf(`{"pane_id":%q,"source":%q,"agent":%q,"state":%q,"seq":%d}`, pane, src, agent, state, seq), ""}
	}
	rel := func(pane, src, agent string, seq int) step {
		s := fmt.Sprintf(`{"pane_id":%q,"source":%q,"agent":%q,"seq":%d}`, pane, src, agent, seq)
		if seq < 0 {
			s = fmt.Sprintf(`{"pane_id":%q,"source":%q,"agent":%q}`, pane, src, agent)
		}
		return step{schema.MethodPaneReleaseAgent, s, ""}
	}
	name := func(target, n string) step {
		return step{schema.MethodAgentRename, fmt.Sprintf(`{"target":%q,"name":%q}`, target, n), ""}
	}
	tests := []struct {
		name                string
		steps               []step
		pane                string
		agent, status, with string // the pane's agent ("" none) and status; with: the agent name still bound ("" none)
	}{
		{"Crush's lifecycle: init, working, named, released", []step{
			rep("w1:p4", "crush", "crush", "idle", 10), rep("w1:p4", "crush", "crush", "working", 11), name("w1:p4", "hl-crush"),
			rel("w1:p4", "crush", "crush", 13)}, "w1:p4", "", "unknown", ""},
		{"a late report with an older seq after the release", []step{
			rep("w1:p4", "crush", "crush", "working", 11), name("w1:p4", "hl-crush"), rel("w1:p4", "crush", "crush", 13),
			rep("w1:p4", "crush", "crush", "idle", 12)}, "w1:p4", "", "unknown", ""},
		{"a newer report claims the pane again, without the name", []step{
			rep("w1:p4", "crush", "crush", "working", 11), name("w1:p4", "hl-crush"), rel("w1:p4", "crush", "crush", 13),
			rep("w1:p4", "crush", "crush", "working", 20)}, "w1:p4", "crush", "working", ""},
		{"another source", []step{rep("w1:p4", "crush", "crush", "idle", 10), name("w1:p4", "hl-crush"), rel("w1:p4", "other", "crush", 20)},
			"w1:p4", "crush", "idle", "hl-crush"},
		{"another agent", []step{rep("w1:p4", "crush", "crush", "idle", 10), name("w1:p4", "hl-crush"), rel("w1:p4", "crush", "pi", 20)},
			"w1:p4", "crush", "idle", "hl-crush"},
		{"a stale seq", []step{rep("w1:p4", "crush", "crush", "idle", 10), rel("w1:p4", "crush", "crush", 5)}, "w1:p4", "crush", "idle", ""},
		{"the same seq", []step{rep("w1:p4", "crush", "crush", "idle", 10), rel("w1:p4", "crush", "crush", 10)}, "w1:p4", "crush", "idle", ""},
		{"no seq after a seq", []step{rep("w1:p4", "crush", "crush", "idle", 10), rel("w1:p4", "crush", "crush", -1)}, "w1:p4", "crush", "idle", ""},
		{"nothing to release", []step{rel("w1:p4", "crush", "crush", 1)}, "w1:p4", "", "unknown", ""},
		{"Herdr's own integration", []step{rep("w1:p3", "herdr:pi", "pi", "working", 1), rel("w1:p3", "herdr:pi", "pi", 2)},
			"w1:p3", "pi", "working", ""},
		{"a detected process of the kind keeps its agent and name", []step{
			rep("w1:p2", "hooks", "codex", "working", 1), rel("w1:p2", "hooks", "codex", 2)}, "w1:p2", "codex", "idle", "reviewer"},
		{"an unknown pane", []step{{schema.MethodPaneReleaseAgent, `{"pane_id":"w9:p9","source":"crush","agent":"crush"}`, "pane_not_found"}},
			"w1:p4", "", "unknown", ""},
		{"an empty agent label", []step{{schema.MethodPaneReleaseAgent, `{"pane_id":"w1:p4","source":"crush","agent":" "}`, "invalid_agent"}},
			"w1:p4", "", "unknown", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := herdrstate.DefaultWorld()
			env := &herdrstate.Env{Version: "0.8.2", Protocol: 20, Tick: 1, Done: make(chan struct{}), Waiting: new(atomic.Int64)}
			do := func(method, params string) (jsonx.RawMessage, string) {
				res, e := w.Handle(t.Context(), env, method, jsonx.RawMessage(params))
				if e != nil {
					return nil, e.Code
				}
				b, err := jsonx.Marshal(res)
				if err != nil {
					t.Fatal(err)
				}
				return b, ""
			}
			for _, s := range tt.steps {
				if _, code := do(s.method, s.params); code != s.want {
					t.Fatalf("%s %s: error %q, want %q", s.method, s.params, code, s.want)
				}
			}
			b, code := do(schema.MethodPaneGet, fmt.Sprintf(`{"pane_id":%q}`, tt.pane))
			if code != "" {
				t.Fatal(code)
			}
			var info schema.ResultPaneInfo
			if err := jsonx.Unmarshal(b, &info); err != nil {
				t.Fatal(err)
			}
			agent := ""
			if info.Pane.Agent != nil {
				agent = *info.Pane.Agent
			}
			if agent != tt.agent || string(info.Pane.AgentStatus) != tt.status {
				t.Errorf("pane agent %q status %q, want %q %q", agent, info.Pane.AgentStatus, tt.agent, tt.status)
			}
			bound := func(n string) bool {
				_, code := do(schema.MethodAgentGet, fmt.Sprintf(`{"target":%q}`, n))
				return code == ""
			}
			if got, want := bound("hl-crush"), tt.with == "hl-crush"; got != want {
				t.Errorf("name hl-crush bound %v, want %v", got, want)
			}
			if tt.with != "" && !bound(tt.with) {
				t.Errorf("name %s no longer bound", tt.with)
			}
		})
	}
}
