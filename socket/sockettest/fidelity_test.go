package sockettest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// worldOf builds a one-tab world with one agent pane per kind, named
// a0, a1, … in order.
func worldOf(t *testing.T, status string, kinds ...string) *sockettest.World {
	t.Helper()
	panes := ""
	for i, k := range kinds {
		if i > 0 {
			panes += ","
		}
		panes += fmt.Sprintf(`{"agent":{"kind":%q,"name":"a%d","status":%q}}`, k, i, status)
	}
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[` + panes + `]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// Issue 10 item 2: the built-in agent kinds are Herdr 0.8.2's, aliases
// included (upstream src/detect/mod.rs).
func TestBuiltinAgentKinds(t *testing.T) {
	accepted := []string{"pi", "claude", "codex", "gemini", "cursor", "devin", "agy", "cline", "omp", "mastracode",
		"opencode", "copilot", "kimi", "kiro", "droid", "amp", "grok", "hermes", "kilo", "qodercli", "qwen", "maki",
		"claude-code", "antigravity", "kiro-cli", "github-copilot", "Claude", "codex.exe", "qoder"}
	refused := []string{"goose", "crush", "aider", "my-hook-bot", "claudex"}
	kinds := append(append([]string(nil), accepted...), refused...)
	srv := sockettest.New(t, worldOf(t, "idle", kinds...))
	c := srv.Client()
	for i, k := range kinds {
		_, err := c.AgentPrompt(context.Background(), schema.AgentPromptParams{Target: fmt.Sprintf("a%d", i), Text: "hello"})
		want := ""
		if i >= len(accepted) {
			want = "agent_not_ready"
		}
		if codeOf(err) != want || (want == "" && err != nil) {
			t.Errorf("prompt to kind %q: %v, want %q", k, err, want)
		}
	}
}
