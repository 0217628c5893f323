package hosttest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Grok CLI (@vibe-kit/grok-cli): MCP servers live in the project's
// .grok/settings.json (what `herdr-link config grok` prints); the model
// is any OpenAI-compatible Chat Completions endpoint (GROK_BASE_URL,
// GROK_API_KEY); headless `grok -p`.
func init() {
	Register(&Host{
		Name:     "grok",
		Display:  "Grok CLI",
		Version:  "0.0.34",
		Packages: []string{"@vibe-kit/grok-cli@0.0.34"},
		Bin:      "grok",
		Kind:     "grok",
		Modes: []Mode{
			{Name: "default", ListChanged: false, Outside: false,
				Note: "tools listed once per process (list_changed ignored); the gateway's action form does the work"},
		},
		Env: func(s *Session) []string {
			return []string{"GROK_BASE_URL=" + s.ModelURL + "/v1", "GROK_API_KEY=sk-hosttest-fake", "GROK_MODEL=fake-model"}
		},
		Command: func(s *Session) (*exec.Cmd, error) {
			snippet, err := s.LinkConfig("grok")
			if err != nil {
				return nil, err
			}
			var cfg map[string]any
			if err := json.Unmarshal([]byte(snippet), &cfg); err != nil {
				return nil, fmt.Errorf("herdr-link config grok: %w: %q", err, snippet)
			}
			if _, ok := cfg["mcpServers"].(map[string]any)["herdr_link"]; !ok {
				return nil, fmt.Errorf("herdr-link config grok printed no mcpServers.herdr_link: %q", snippet)
			}
			dir := filepath.Join(s.Work, ".grok")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(snippet), 0o600); err != nil {
				return nil, err
			}
			return exec.Command(s.HostBin, append([]string{"--max-tool-rounds", "12", "-p", s.Prompt}, s.Mode.Args...)...), nil
		},
	})
}
