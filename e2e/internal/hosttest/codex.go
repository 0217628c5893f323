package hosttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Codex CLI: CODEX_HOME/config.toml with a Responses-API provider at the
// fake and the [mcp_servers.herdr_link] table `herdr-link config codex`
// prints; headless `codex exec`.
func init() {
	Register(&Host{
		Name:     "codex",
		Display:  "Codex CLI",
		Version:  "0.171.0",
		Packages: []string{"@openai/codex@0.171.0"},
		Bin:      "codex",
		Kind:     "codex",
		Modes: []Mode{
			{Name: "default", ListChanged: false, Note: "tools listed once per session; the gateway's action form does the work"},
			{Name: "list-changed", Args: []string{"--enable", "mcp_tool_list_changed"}, ListChanged: true,
				Note: "--enable mcp_tool_list_changed"},
		},
		Env: func(s *Session) []string {
			return []string{"CODEX_HOME=" + filepath.Join(s.Home, ".codex"), "HOSTTEST_MODEL_KEY=sk-hosttest-fake"}
		},
		Command: func(s *Session) (*exec.Cmd, error) {
			home := filepath.Join(s.Home, ".codex")
			if err := os.MkdirAll(home, 0o755); err != nil {
				return nil, err
			}
			// herdr-link's part is what `herdr-link config codex` prints.
			snippet, err := s.LinkConfig("codex")
			if err != nil {
				return nil, err
			}
			if !strings.HasPrefix(snippet, "[mcp_servers.herdr_link]") {
				return nil, fmt.Errorf("herdr-link config codex printed %q, want an [mcp_servers.herdr_link] table", snippet)
			}
			if s.ToolTimeout > 0 {
				snippet = strings.TrimSpace(snippet) + fmt.Sprintf("\ntool_timeout_sec = %d\n", int(s.ToolTimeout.Seconds()))
			}
			q := strconv.Quote
			cfg := fmt.Sprintf(`model = "fake-model"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false
suppress_unstable_features_warning = true

[model_providers.fake]
name = "fake"
base_url = %s
wire_api = "responses"
env_key = "HOSTTEST_MODEL_KEY"
request_max_retries = 0
stream_max_retries = 0

%s
# Headless (approval_policy "never") Codex refuses MCP tools that need
# approval (the gateway and herdr_link_close are destructive): approve
# herdr-link's tools.
default_tools_approval_mode = "approve"

[projects.%s]
trust_level = "trusted"
`, q(s.ModelURL+"/v1"), strings.TrimSpace(snippet), q(s.Work))
			if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
				return nil, err
			}
			args := append([]string{"exec", "--skip-git-repo-check"}, s.Mode.Args...)
			return exec.Command(s.HostBin, append(args, "--", s.Prompt)...), nil
		},
	})
}
