package herdrstate_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest/herdrstate"
)

// releaseStep is one request of a release case; want is its error code,
// "" for an ok answer.
type releaseStep struct{ method, params, want string }

func report(pane, src, agent, state string, seq int) releaseStep {
	return releaseStep{schema.MethodPaneReportAgent, fmt.Sprintf(`{"pane_id":%q,"source":%q,"agent":%q,"state":%q,"seq":%d}`, pane, src, agent, state, seq), ""}
}

// release is a pane.release_agent step; a negative seq sends none.
func release(pane, src, agent string, seq int) releaseStep {
	if seq < 0 {
		return releaseStep{schema.MethodPaneReleaseAgent, fmt.Sprintf(`{"pane_id":%q,"source":%q,"agent":%q}`, pane, src, agent), ""}
	}
	return releaseStep{schema.MethodPaneReleaseAgent, fmt.Sprintf(`{"pane_id":%q,"source":%q,"agent":%q,"seq":%d}`, pane, src, agent, seq), ""}
}

func rename(target, n string) releaseStep {
	return releaseStep{schema.MethodAgentRename, fmt.Sprintf(`{"target":%q,"name":%q}`, target, n), ""}
}

// releaseCases: after the steps, pane shows agent ("" none) with status,
// and the name with is still bound ("" none; hl-crush is bound only when
// it is with).
var releaseCases = []struct {
	name                string
	steps               []releaseStep
	pane                string
	agent, status, with string
}{
	{"Crush's lifecycle: init, working, named, released", []releaseStep{
		report("w1:p4", "crush", "crush", "idle", 10), report("w1:p4", "crush", "crush", "working", 11), rename("w1:p4", "hl-crush"),
		release("w1:p4", "crush", "crush", 13)}, "w1:p4", "", "unknown", ""},
	{"a late report with an older seq after the release", []releaseStep{
		report("w1:p4", "crush", "crush", "working", 11), rename("w1:p4", "hl-crush"), release("w1:p4", "crush", "crush", 13),
		report("w1:p4", "crush", "crush", "idle", 12)}, "w1:p4", "", "unknown", ""},
	{"a newer report claims the pane again, without the name", []releaseStep{
		report("w1:p4", "crush", "crush", "working", 11), rename("w1:p4", "hl-crush"), release("w1:p4", "crush", "crush", 13),
		report("w1:p4", "crush", "crush", "working", 20)}, "w1:p4", "crush", "working", ""},
	{"another source", []releaseStep{report("w1:p4", "crush", "crush", "idle", 10), rename("w1:p4", "hl-crush"), release("w1:p4", "other", "crush", 20)},
		"w1:p4", "crush", "idle", "hl-crush"},
	{"another agent", []releaseStep{report("w1:p4", "crush", "crush", "idle", 10), rename("w1:p4", "hl-crush"), release("w1:p4", "crush", "pi", 20)},
		"w1:p4", "crush", "idle", "hl-crush"},
	{"a stale seq", []releaseStep{report("w1:p4", "crush", "crush", "idle", 10), release("w1:p4", "crush", "crush", 5)}, "w1:p4", "crush", "idle", ""},
	{"the same seq", []releaseStep{report("w1:p4", "crush", "crush", "idle", 10), release("w1:p4", "crush", "crush", 10)}, "w1:p4", "crush", "idle", ""},
	{"no seq after a seq", []releaseStep{report("w1:p4", "crush", "crush", "idle", 10), release("w1:p4", "crush", "crush", -1)}, "w1:p4", "crush", "idle", ""},
	{"nothing to release", []releaseStep{release("w1:p4", "crush", "crush", 1)}, "w1:p4", "", "unknown", ""},
	{"Herdr's own integration", []releaseStep{report("w1:p3", "herdr:pi", "pi", "working", 1), release("w1:p3", "herdr:pi", "pi", 2)},
		"w1:p3", "pi", "working", ""},
	{"a detected process of the kind keeps its agent and name", []releaseStep{
		report("w1:p2", "hooks", "codex", "working", 1), release("w1:p2", "hooks", "codex", 2)}, "w1:p2", "codex", "idle", "reviewer"},
	{"an unknown pane", []releaseStep{{schema.MethodPaneReleaseAgent, `{"pane_id":"w9:p9","source":"crush","agent":"crush"}`, "pane_not_found"}},
		"w1:p4", "", "unknown", ""},
	{"an empty agent label", []releaseStep{{schema.MethodPaneReleaseAgent, `{"pane_id":"w1:p4","source":"crush","agent":" "}`, "invalid_agent"}},
		"w1:p4", "", "unknown", ""},
}

// pane.release_agent as a real Herdr 0.8.2 answers Crush's reports and
// release (observed against a real Herdr 0.8.2, run headless): the
// release takes effect only from the reporting source, for its agent,
// with a newer seq; it clears the agent and its name; a late report with
// an older seq stays ignored, a newer one claims the pane again without
// the name. A detected process of that kind keeps its agent and name.
func TestPaneReleaseAgent(t *testing.T) {
	for _, tt := range releaseCases {
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
			var info schema.ResultPaneInfo
			if err := jsonx.Unmarshal(b, &info); code != "" || err != nil {
				t.Fatalf("pane.get: %s %v", code, err)
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
