// Package tui runs the interactive TUIs of real agent hosts (Claude Code,
// Codex) unattended in simulator panes, each pointed at a fake model: it
// writes the configuration that gets them past their first-run dialogs,
// gives the command to run in a pane (a sockettest.CommandSpec, run by
// package ptypane), says when the TUI is ready for input, and cleans up
// what a host leaves running.
//
// The recipes follow how these TUIs were observed to start unattended, checked
// with Claude Code 2.1.328 and Codex 0.171.0.
package tui

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/herdr-link/herdr-link/internal/jsonx"
)

// Host is an interactive agent host.
type Host string

// The hosts this package knows.
const (
	Claude Host = "claude"
	Codex  Host = "codex"
)

// Options configure one TUI run.
type Options struct {
	// Binary is the host's executable (node_modules/.bin/claude or codex).
	Binary string
	// Dir is a scratch directory owned by the run: the host's home and
	// configuration go under it.
	Dir string
	// Work is the working directory (trusted by the configuration);
	// Dir/work when empty.
	Work string
	// BaseURL is the fake model's root, e.g. http://127.0.0.1:4242: Claude
	// Code gets it as ANTHROPIC_BASE_URL, Codex as its provider's
	// base_url + "/v1".
	BaseURL string
	// APIKey is what the host sends as its key (a fake one).
	APIKey string
	// Model is the model name the host asks for ("" for the host's default).
	Model string
	// Rows and Cols are the terminal size (sockettest's default when 0).
	Rows, Cols uint16
}

// Command is what a pane runs: the fields of sockettest.CommandSpec (a
// Command converts to one), kept here so this package stays below the
// socket layer.
type Command struct {
	Argv []string
	Env  []string
	Dir  string
	Rows uint16
	Cols uint16
}

// Run is a prepared TUI: the command for its pane, and what to do after.
type Run struct {
	Host    Host
	Command Command
	// Home is the host's HOME (and, for Codex, CODEX_HOME's parent).
	Home string
	// CodexHome is Codex's CODEX_HOME ("" for other hosts).
	CodexHome string
}

// Prepare writes the host's configuration under o.Dir and returns the
// command that starts its interactive TUI.
func Prepare(h Host, o Options) (*Run, error) {
	if o.Binary == "" || o.Dir == "" || o.BaseURL == "" {
		return nil, errors.New("tui: Binary, Dir and BaseURL are required")
	}
	if o.APIKey == "" {
		o.APIKey = "sk-fake-" + strings.Repeat("0", 32)
	}
	home := filepath.Join(o.Dir, "home")
	if o.Work == "" {
		o.Work = filepath.Join(o.Dir, "work")
	}
	for _, d := range []string{home, o.Work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	// Paths are compared as the host sees its cwd.
	if w, err := filepath.EvalSymlinks(o.Work); err == nil {
		o.Work = w
	}
	r := &Run{Host: h, Home: home}
	r.Command = Command{Argv: []string{o.Binary}, Dir: o.Work, Rows: o.Rows, Cols: o.Cols,
		Env: []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
			"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state")}}
	switch h {
	case Claude:
		if err := writeClaudeConfig(home, o); err != nil {
			return nil, err
		}
		r.Command.Env = append(r.Command.Env,
			"ANTHROPIC_BASE_URL="+strings.TrimSuffix(o.BaseURL, "/"),
			"ANTHROPIC_API_KEY="+o.APIKey,
			"DISABLE_AUTOUPDATER=1",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		)
		if o.Model != "" {
			r.Command.Env = append(r.Command.Env, "ANTHROPIC_MODEL="+o.Model)
		}
	case Codex:
		r.CodexHome = filepath.Join(o.Dir, "codex-home")
		if err := os.MkdirAll(r.CodexHome, 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(r.CodexHome, "config.toml"), []byte(CodexConfig(o)), 0o600); err != nil {
			return nil, err
		}
		r.Command.Env = append(r.Command.Env, "CODEX_HOME="+r.CodexHome, codexKeyEnv+"="+o.APIKey)
	default:
		if err := prepareMore(h, o, r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// claudeKeySuffix is how much of an API key Claude Code remembers when
// the user approves it (its last 20 characters).
const claudeKeySuffix = 20

// ClaudeConfig is the ~/.claude.json that skips onboarding, approves the
// key and trusts the working directory.
func ClaudeConfig(o Options) ([]byte, error) {
	key := o.APIKey
	if len(key) > claudeKeySuffix {
		key = key[len(key)-claudeKeySuffix:]
	}
	return jsonx.Marshal(map[string]any{
		"hasCompletedOnboarding": true,
		"customApiKeyResponses":  map[string]any{"approved": []string{key}, "rejected": []string{}},
		"projects":               map[string]any{o.Work: map[string]any{"hasTrustDialogAccepted": true}},
	})
}

func writeClaudeConfig(home string, o Options) error {
	b, err := ClaudeConfig(o)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(home, ".claude.json"), b, 0o600)
}

// codexKeyEnv is the variable the fake provider's key is read from.
const codexKeyEnv = "HERDR_LINK_FAKE_OPENAI_KEY"

// CodexConfig is the config.toml for Codex: a custom provider on the fake
// (Responses API, no retries so failures are quick), no update check,
// the working directory trusted, the notices that would wait for a key
// already seen.
func CodexConfig(o Options) string {
	model := o.Model
	if model == "" {
		model = "gpt-5"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "model = %s\nmodel_provider = \"fake\"\ncheck_for_update_on_startup = false\n\n", tomlString(model))
	fmt.Fprintf(&b, "[model_providers.fake]\nname = \"fake\"\nbase_url = %s\nwire_api = \"responses\"\nenv_key = %q\nrequest_max_retries = 0\nstream_max_retries = 0\n\n",
		tomlString(strings.TrimSuffix(o.BaseURL, "/")+"/v1"), codexKeyEnv)
	fmt.Fprintf(&b, "[projects.%s]\ntrust_level = \"trusted\"\n\n", tomlString(o.Work))
	b.WriteString("[notice]\nhide_full_access_warning = true\n\n[tui]\nscreen_reader_detection_done = true\n")
	return b.String()
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// ComposerSign is a piece of the screen that shows the host's input box
// is drawn (with bracketed paste on, it is ready for a paste).
func ComposerSign(h Host) string {
	switch h {
	case Claude:
		return "❯"
	case Codex:
		return "›"
	}
	return moreComposerSign(h)
}
