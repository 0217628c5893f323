package hosttest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Qwen Code (a Gemini CLI fork): ~/.qwen/settings.json holds what
// `herdr-link config qwen` prints, plus the OpenAI-compatible provider at
// the fake (Chat Completions); headless `qwen -p … --yolo`. It needs
// Node 22, which the node package brings beside it.
func init() {
	Register(&Host{
		Name:     "qwen",
		Display:  "Qwen Code",
		Version:  "0.24.4",
		Packages: []string{"@qwen-code/qwen-code@0.24.4", "node@22.23.3"},
		Bin:      "qwen",
		Kind:     "qwen",
		Modes: []Mode{
			{Name: "direct", ListChanged: false, Outside: true, Note: `settings tools.toolSearch.enabled=false: MCP tools listed directly, once per session; the gateway's action form does the work`},
		},
		Env: func(s *Session) []string {
			return []string{"OPENAI_BASE_URL=" + s.ModelURL + "/v1", "OPENAI_API_KEY=sk-hosttest-fake", "OPENAI_MODEL=fake-model"}
		},
		Command: geminiLike("qwen", ".qwen", func(m Mode) map[string]any {
			extra := map[string]any{
				"security": map[string]any{"auth": map[string]any{"selectedType": "openai"}},
				"model":    map[string]any{"name": "fake-model"},
			}
			if m.Name == "direct" {
				extra["tools"] = map[string]any{"toolSearch": map[string]any{"enabled": false}}
			}
			return extra
		}, []string{"--auth-type", "openai", "--model", "fake-model"}),
	})
}

// geminiLike writes HOME/dir/settings.json = what `herdr-link config
// host` prints merged with the mode's extra settings, and returns `bin ARGS… --yolo -p PROMPT`
// with the host's own folder first on PATH (its Node).
func geminiLike(host, dir string, extra func(Mode) map[string]any, args []string) func(s *Session) (*exec.Cmd, error) {
	return func(s *Session) (*exec.Cmd, error) {
		snippet, err := s.LinkConfig(host)
		if err != nil {
			return nil, err
		}
		var cfg map[string]any
		if err := json.Unmarshal([]byte(snippet), &cfg); err != nil {
			return nil, fmt.Errorf("herdr-link config %s: %w: %q", host, err, snippet)
		}
		if _, ok := cfg["mcpServers"].(map[string]any)["herdr_link"]; !ok {
			return nil, fmt.Errorf("herdr-link config %s printed no mcpServers.herdr_link: %q", host, snippet)
		}
		for k, v := range extra(s.Mode) {
			cfg[k] = v
		}
		b, err := json.MarshalIndent(cfg, "", "  ")
		if err != nil {
			return nil, err
		}
		d := filepath.Join(s.Home, dir)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(d, "settings.json"), b, 0o600); err != nil {
			return nil, err
		}
		a := append(append([]string{}, args...), s.Mode.Args...)
		cmd := exec.Command(s.HostBin, append(a, "--yolo", "-p", s.Prompt)...)
		cmd.Env = []string{"PATH=" + filepath.Dir(s.HostBin) + string(os.PathListSeparator) + os.Getenv("PATH")}
		return cmd, nil
	}
}
