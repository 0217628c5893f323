package hosttest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Claude Code: registered with the command `herdr-link config claude`
// prints (a user-scope `claude mcp add`), the model at ANTHROPIC_BASE_URL,
// headless `claude -p`.
// claudeKey is the fake API key; interactive Claude Code asks about a new
// key unless its last 20 characters are in customApiKeyResponses.approved.
const claudeKey = "sk-ant-hosttest-0123456789abcdef"

func init() {
	Register(&Host{
		Name:     "claude",
		Display:  "Claude Code",
		Version:  "2.1.328",
		Packages: []string{"@anthropic-ai/claude-code@2.1.328"},
		Bin:      "claude",
		Kind:     "claude",
		Modes: []Mode{
			{Name: "toolsearch", Env: []string{"ENABLE_TOOL_SEARCH=true"}, ListChanged: true, Outside: true,
				Note: "default: MCP tools deferred behind ToolSearch"},
			{Name: "direct", Env: []string{"ENABLE_TOOL_SEARCH=false"}, ListChanged: true, Outside: true,
				Note: "ENABLE_TOOL_SEARCH=false: MCP tools listed directly"},
		},
		Env: func(s *Session) []string {
			env := []string{
				"ANTHROPIC_BASE_URL=" + s.ModelURL,
				"ANTHROPIC_API_KEY=" + claudeKey,
				"DISABLE_AUTOUPDATER=1",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
				"DISABLE_TELEMETRY=1",
			}
			if s.ToolTimeout > 0 {
				env = append(env, fmt.Sprintf("MCP_TOOL_TIMEOUT=%d", s.ToolTimeout.Milliseconds()))
			}
			return env
		},
		Command: func(s *Session) (*exec.Cmd, error) {
			if err := claudeRegister(s); err != nil {
				return nil, err
			}
			args := []string{"-p", s.Prompt, "--allowedTools", "mcp__herdr_link", "--output-format", "stream-json", "--verbose"}
			return exec.Command(s.HostBin, append(args, s.Mode.Args...)...), nil
		},
	})
}

// claudeRegister runs the command `herdr-link config claude` prints (the
// user-scope `claude mcp add`) in the session's HOME, then marks the
// onboarding, the API key and the folder's trust as done in the
// ~/.claude.json it wrote.
func claudeRegister(s *Session) error {
	snippet, err := s.LinkConfig("claude")
	if err != nil {
		return err
	}
	words := strings.Fields(snippet)
	if len(words) < 2 || words[0] != "claude" || words[len(words)-1] != s.LinkBin {
		return fmt.Errorf("herdr-link config claude printed %q, want a claude command ending in %s", snippet, s.LinkBin)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	add := exec.CommandContext(ctx, s.HostBin, words[1:]...)
	add.Dir = s.Work
	add.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.Home, "DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", s.Marker}
	if out, err := add.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", snippet, err, out)
	}
	path := filepath.Join(s.Home, ".claude.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("claude mcp add wrote no %s: %w", path, err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if _, ok := cfg["mcpServers"].(map[string]any)["herdr_link"]; !ok {
		return fmt.Errorf("%s: claude mcp add registered no herdr_link", path)
	}
	cfg["hasCompletedOnboarding"] = true
	cfg["customApiKeyResponses"] = map[string]any{"approved": []string{claudeKey[len(claudeKey)-20:]}, "rejected": []string{}}
	cfg["projects"] = map[string]any{s.Work: map[string]any{"hasTrustDialogAccepted": true}}
	if b, err = json.MarshalIndent(cfg, "", "  "); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}
