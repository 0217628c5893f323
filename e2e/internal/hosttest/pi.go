package hosttest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"

	pi "github.com/herdr-link/herdr-link/adapters/pi"
)

// Pi, two generations: 0.73 has no MCP and runs herdr-link through the
// adapter in adapters/pi, installed where the docs/hosts.md's command puts it
// (herdr-link config pi > ~/.pi/agent/extensions/herdr-link.ts); 1.6 has
// built-in MCP, configured as herdr-link config pi-mcp prints it
// (~/.pi/agent/mcp.json, exposure "direct"). Both talk Chat Completions to
// the fake through ~/.pi/agent/models.json; headless `pi -p`.
func init() {
	Register(&Host{
		Name:     "pi073",
		Display:  "Pi 0.73 + adapter",
		Version:  "0.73.1",
		Packages: []string{"@mariozechner/pi-coding-agent@0.73.1"},
		Bin:      "pi",
		Kind:     "pi",
		Modes: []Mode{
			{Name: "adapter", ListChanged: false, Outside: true,
				Note: "no MCP: the adapter registers the tools; Pi takes new tools per prompt, so the activating prompt uses the gateway's action form"},
			{Name: "with-claude", ListChanged: false, Outside: true, Reviewer: "claude/direct",
				Note: "a Pi 0.73 user (adapter) and a Claude Code reviewer exchange messages; Pi closes the reviewer"},
		},
		Env:     piEnv,
		Command: piCommand(filepath.Join(".pi", "agent", "extensions", "herdr-link.ts"), pi.Extension),
	})
	Register(&Host{
		Name:     "pi16",
		Display:  "Pi 1.6",
		Version:  "1.6.0",
		Packages: []string{"@earendil-works/pi-coding-agent@1.6.0", "node@22.23.3"},
		Bin:      "pi",
		Kind:     "pi",
		Modes: []Mode{
			{Name: "mcp-direct", ListChanged: true, Note: `built-in MCP, mcp.json "exposure": "direct"; refreshes one model step late`},
		},
		Env:     piEnv,
		Command: piCommand(filepath.Join(".pi", "agent", "mcp.json"), func(bin string) string { return pi.MCPConfig("herdr_link", bin) }),
	})
}

func piEnv(*Session) []string { return []string{"PI_OFFLINE=1"} }

// piCommand writes models.json and herdr-link's registration (the text
// `herdr-link config pi` / `config pi-mcp` prints, from the same function)
// to file under HOME, and returns `pi -p PROMPT`.
func piCommand(file string, snippet func(bin string) string) func(s *Session) (*exec.Cmd, error) {
	return func(s *Session) (*exec.Cmd, error) {
		agent := filepath.Join(s.Home, ".pi", "agent")
		if err := os.MkdirAll(filepath.Dir(filepath.Join(s.Home, file)), 0o755); err != nil {
			return nil, err
		}
		models := map[string]any{"providers": map[string]any{"fake": map[string]any{
			"baseUrl": s.ModelURL + "/v1", "api": "openai-completions", "apiKey": "sk-hosttest-fake",
			"compat": map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false},
			"models": []any{map[string]any{"id": "fake-model", "reasoning": false}},
		}}}
		b, err := json.MarshalIndent(models, "", "  ")
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(agent, "models.json"), b, 0o600); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(s.Home, file), []byte(snippet(s.LinkBin)), 0o600); err != nil {
			return nil, err
		}
		cmd := exec.Command(s.HostBin, "--no-session", "--model", "fake/fake-model", "-p", s.Prompt)
		// Pi 1.6 needs Node 22, which the node package brings beside it.
		cmd.Env = []string{"PATH=" + filepath.Dir(s.HostBin) + string(os.PathListSeparator) + os.Getenv("PATH")}
		return cmd, nil
	}
}
