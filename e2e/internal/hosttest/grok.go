package hosttest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Grok CLI (@vibe-kit/grok-cli): its headless `grok -p` sends the first
// model request before its MCP servers are initialised and never exits
// (docs/hosts.md), so the runner drives its interactive TUI in a PTY
// (interactive.go): the project's .grok/settings.json holds what
// `herdr-link config grok` prints, through the MCP tap so that the
// prompt is typed once herdr-link has answered tools/list.
func init() {
	Register(&Host{
		Name:        "grok",
		Display:     "Grok CLI",
		Version:     "0.0.34",
		Packages:    []string{"@vibe-kit/grok-cli@0.0.34"},
		Bin:         "grok",
		Kind:        "grok",
		Interactive: &Interactive{Ready: "Ask me anything"},
		Modes: []Mode{
			{Name: "tui", Note: "interactive TUI in a PTY (headless -p cannot use MCP); tools listed once, no list_changed handler"},
		},
		Env: func(s *Session) []string {
			return []string{"GROK_BASE_URL=" + s.ModelURL + "/v1", "GROK_API_KEY=sk-hosttest-fake", "GROK_MODEL=grok-fake"}
		},
		Command: grokCommand,
	})
}

func grokCommand(s *Session) (*exec.Cmd, error) {
	tap, err := InstallTap(filepath.Join(s.Dir, "tap"), tapConfig{Real: s.LinkBin, Log: s.TapLog()})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, tap, "config", "grok").Output()
	if err != nil {
		return nil, fmt.Errorf("herdr-link config grok (through the tap): %w", err)
	}
	snippet := string(out)
	if !strings.Contains(snippet, `"herdr_link"`) || !strings.Contains(snippet, `"stdio"`) {
		return nil, fmt.Errorf("herdr-link config grok printed no stdio herdr_link entry: %q", snippet)
	}
	dir := filepath.Join(s.Work, ".grok")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(snippet), 0o600); err != nil {
		return nil, err
	}
	return exec.Command(s.HostBin), nil
}
