package hosttest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
)

// Claude Code: the user-scope MCP registration (what
// `claude mcp add --scope user herdr_link -- BIN` writes) in $HOME/.claude.json,
// the model at ANTHROPIC_BASE_URL, headless `claude -p`.
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
			{Name: "toolsearch", Env: []string{"ENABLE_TOOL_SEARCH=true"}, ListChanged: true,
				Note: "default: MCP tools deferred behind ToolSearch"},
			{Name: "direct", Env: []string{"ENABLE_TOOL_SEARCH=false"}, ListChanged: true,
				Note: "ENABLE_TOOL_SEARCH=false: MCP tools listed directly"},
		},
		Env: func(s *Session) []string {
			return []string{
				"ANTHROPIC_BASE_URL=" + s.ModelURL,
				"ANTHROPIC_API_KEY=" + claudeKey,
				"DISABLE_AUTOUPDATER=1",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
				"DISABLE_TELEMETRY=1",
			}
		},
		Command: func(s *Session) (*exec.Cmd, error) {
			cfg := map[string]any{
				"hasCompletedOnboarding": true,
				"customApiKeyResponses":  map[string]any{"approved": []string{claudeKey[len(claudeKey)-20:]}, "rejected": []string{}},
				"projects":               map[string]any{s.Work: map[string]any{"hasTrustDialogAccepted": true}},
				"mcpServers": map[string]any{
					"herdr_link": map[string]any{"type": "stdio", "command": s.LinkBin, "args": []string{}, "env": map[string]string{}},
				},
			}
			b, err := json.MarshalIndent(cfg, "", "  ")
			if err != nil {
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(s.Home, ".claude.json"), b, 0o600); err != nil {
				return nil, err
			}
			args := []string{"-p", s.Prompt, "--allowedTools", "mcp__herdr_link", "--output-format", "stream-json", "--verbose"}
			return exec.Command(s.HostBin, append(args, s.Mode.Args...)...), nil
		},
	})
}
