package hosttest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// OpenCode: $XDG_CONFIG_HOME/opencode/opencode.json = what
// `herdr-link config opencode` prints plus an openai-compatible provider at
// the fake (Chat Completions); headless `opencode run`.
func init() {
	Register(&Host{
		Name:     "opencode",
		Display:  "OpenCode",
		Version:  "1.18.33",
		Packages: []string{"opencode-ai@1.18.33"},
		Bin:      "opencode",
		Kind:     "opencode",
		Modes: []Mode{
			{Name: "default", ListChanged: true, Outside: true, Note: "refreshes on list_changed one model step late"},
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
			// herdr-link's part is what `herdr-link config opencode` prints;
			// the provider at the fake is merged in.
			snippet, err := s.LinkConfig("opencode")
			if err != nil {
				return nil, err
			}
			var cfg map[string]any
			if err := json.Unmarshal([]byte(snippet), &cfg); err != nil {
				return nil, fmt.Errorf("herdr-link config opencode: %w: %q", err, snippet)
			}
			if _, ok := cfg["mcp"].(map[string]any)["herdr_link"]; !ok {
				return nil, fmt.Errorf("herdr-link config opencode printed no mcp.herdr_link: %q", snippet)
			}
			cfg["provider"] = map[string]any{"fake": map[string]any{
				"npm": "@ai-sdk/openai-compatible", "name": "fake",
				"options": map[string]any{"baseURL": s.ModelURL + "/v1", "apiKey": "sk-hosttest-fake"},
				"models":  map[string]any{"fake-model": map[string]any{"name": "fake model"}},
			}}
			cfg["model"], cfg["small_model"] = "fake/fake-model", "fake/fake-model"
			cfg["autoupdate"], cfg["share"] = false, "disabled"
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
