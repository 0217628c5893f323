package hosttest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// GitHub Copilot CLI: $COPILOT_HOME/mcp-config.json holds what
// `herdr-link config copilot` prints; the model is a "bring your own key"
// provider (COPILOT_PROVIDER_BASE_URL, Chat Completions) at the fake, and
// COPILOT_OFFLINE=true skips GitHub sign-in, telemetry, the GitHub MCP
// server and updates; headless `copilot -p … --allow-all-tools`.
func init() {
	Register(&Host{
		Name:     "copilot",
		Display:  "GitHub Copilot CLI",
		Version:  "1.0.102",
		Packages: []string{"@github/copilot@1.0.102"},
		Bin:      "copilot",
		Kind:     "copilot",
		Modes: []Mode{
			{Name: "byok", ListChanged: true, Note: "COPILOT_PROVIDER_BASE_URL + COPILOT_OFFLINE=true: no GitHub sign-in; refreshes on list_changed at once; server instructions only with --allow-all-mcp-server-instructions"},
		},
		Env: func(s *Session) []string {
			return []string{
				"COPILOT_HOME=" + filepath.Join(s.Home, ".copilot"),
				"COPILOT_PROVIDER_BASE_URL=" + s.ModelURL + "/v1",
				"COPILOT_PROVIDER_API_KEY=sk-hosttest-fake",
				"COPILOT_MODEL=fake-model",
				"COPILOT_OFFLINE=true",
				"COPILOT_AUTO_UPDATE=false",
			}
		},
		Command: func(s *Session) (*exec.Cmd, error) {
			snippet, err := s.LinkConfig("copilot")
			if err != nil {
				return nil, err
			}
			var cfg map[string]any
			if err := json.Unmarshal([]byte(snippet), &cfg); err != nil {
				return nil, fmt.Errorf("herdr-link config copilot: %w: %q", err, snippet)
			}
			if _, ok := cfg["mcpServers"].(map[string]any)["herdr_link"]; !ok {
				return nil, fmt.Errorf("herdr-link config copilot printed no mcpServers.herdr_link: %q", snippet)
			}
			dir := filepath.Join(s.Home, ".copilot")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(dir, "mcp-config.json"), []byte(snippet), 0o600); err != nil {
				return nil, err
			}
			args := []string{"--no-auto-update", "--allow-all-tools", "--no-ask-user", "--disable-builtin-mcps", "--output-format", "json", "-p", s.Prompt}
			return exec.Command(s.HostBin, append(args, s.Mode.Args...)...), nil
		},
	})
}
