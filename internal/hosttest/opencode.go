package hosttest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// OpenCode: $XDG_CONFIG_HOME/opencode/opencode.json with an
// openai-compatible provider at the fake (Chat Completions) and herdr-link
// as a local MCP server; headless `opencode run`.
func init() {
	Register(&Host{
		Name:     "opencode",
		Display:  "OpenCode",
		Version:  "1.18.33",
		Packages: []string{"opencode-ai@1.18.33"},
		Bin:      "opencode",
		Kind:     "opencode",
		Modes: []Mode{
			{Name: "default", ListChanged: true, Note: "refreshes on list_changed one model step late"},
		},
		Env: func(s *Session) []string {
			return []string{
				"OPENCODE_DISABLE_MODELS_FETCH=1",
				"OPENCODE_DISABLE_AUTOUPDATE=1",
				"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
				"OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
			}
		},
		Command: func(s *Session) (*exec.Cmd, error) {
			dir := filepath.Join(s.Home, ".config", "opencode")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
			cfg := map[string]any{
				"$schema": "https://opencode.ai/config.json",
				"provider": map[string]any{"fake": map[string]any{
					"npm": "@ai-sdk/openai-compatible", "name": "fake",
					"options": map[string]any{"baseURL": s.ModelURL + "/v1", "apiKey": "sk-hosttest-fake"},
					"models":  map[string]any{"fake-model": map[string]any{"name": "fake model"}},
				}},
				"model": "fake/fake-model", "small_model": "fake/fake-model",
				"autoupdate": false, "share": "disabled",
				"mcp": map[string]any{"herdr_link": map[string]any{"type": "local", "command": []string{s.LinkBin}}},
			}
			b, err := json.MarshalIndent(cfg, "", "  ")
			if err != nil {
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(dir, "opencode.json"), b, 0o600); err != nil {
				return nil, err
			}
			// The prompt goes on stdin: `opencode run MESSAGE…` quotes an
			// argument that has spaces and escapes its quotes, so a delivered
			// envelope would reach the model as "{\"protocol\":…}".
			cmd := exec.Command(s.HostBin, append([]string{"run", "--format", "json"}, s.Mode.Args...)...)
			cmd.Stdin = strings.NewReader(s.Prompt)
			return cmd, nil
		},
	})
}
