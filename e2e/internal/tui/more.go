package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/herdr-link/herdr-link/internal/jsonx"
)

// The hosts added after Claude Code and Codex: each has a recipe (the
// environment and configuration that start its TUI unattended against the
// fake) and a sign that its input box is drawn.
const (
	Gemini  Host = "gemini"
	Qwen    Host = "qwen"
	Copilot Host = "copilot"
	Grok    Host = "grok"
)

// Hosts are every host this package has a recipe for.
var Hosts = []Host{Claude, Codex, Gemini, Qwen, Copilot, Grok}

// RawInput reports whether the host's TUI never turns bracketed paste
// on: what Herdr types reaches it as keystrokes (Grok CLI 0.0.34).
func RawInput(h Host) bool { return h == Grok }

// prepareMore is Prepare's part for the hosts of this file.
func prepareMore(h Host, o Options, r *Run) error {
	home := r.Home
	switch h {
	case Gemini, Qwen:
		dir, auth := ".gemini", "gemini-api-key"
		if h == Qwen {
			dir, auth = ".qwen", "openai"
		}
		settings := map[string]any{
			"security": map[string]any{"auth": map[string]any{"selectedType": auth}, "folderTrust": map[string]any{"enabled": false}},
			"general":  map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true, "enableAutoUpdate": false},
			"privacy":  map[string]any{"usageStatisticsEnabled": false},
			"ui":       map[string]any{"theme": "Default", "hideTips": true, "hideBanner": true},
			"ide":      map[string]any{"hasSeenNudge": true, "enabled": false},
		}
		if h == Qwen {
			// Qwen Code's memory agent makes requests of its own after a
			// turn: off, so every model request is a turn of the user's.
			settings["memory"] = map[string]any{"enableManagedAutoMemory": false, "enableManagedAutoDream": false, "enableAutoSkill": false}
		}
		if err := writeJSONFile(filepath.Join(home, dir, "settings.json"), settings); err != nil {
			return err
		}
		if h == Gemini {
			r.Command.Env = append(r.Command.Env, "GEMINI_API_KEY="+o.APIKey, "GOOGLE_GEMINI_BASE_URL="+strings.TrimSuffix(o.BaseURL, "/"),
				"GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_CLI_NO_RELAUNCH=true")
			r.Command.Argv = append(r.Command.Argv, "--model", model(o, "gemini-2.5-flash"))
			return nil
		}
		// Qwen Code needs Node 22, installed beside it.
		r.Command.Env = append(r.Command.Env, "OPENAI_BASE_URL="+strings.TrimSuffix(o.BaseURL, "/")+"/v1", "OPENAI_API_KEY="+o.APIKey,
			"OPENAI_MODEL="+model(o, "fake-model"), "PATH="+filepath.Dir(o.Binary)+string(os.PathListSeparator)+os.Getenv("PATH"))
		r.Command.Argv = append(r.Command.Argv, "--auth-type", "openai", "--model", model(o, "fake-model"))
	case Copilot:
		r.Command.Env = append(r.Command.Env, "COPILOT_HOME="+filepath.Join(home, ".copilot"),
			"COPILOT_PROVIDER_BASE_URL="+strings.TrimSuffix(o.BaseURL, "/")+"/v1", "COPILOT_PROVIDER_API_KEY="+o.APIKey,
			"COPILOT_MODEL="+model(o, "fake-model"), "COPILOT_OFFLINE=true", "COPILOT_AUTO_UPDATE=false",
			// Exactly "true" also trusts the working directory (no dialog).
			"COPILOT_ALLOW_ALL=true")
		r.Command.Argv = append(r.Command.Argv, "--no-auto-update", "--disable-builtin-mcps")
	case Grok:
		// Chat Completions at the fake; the API key in the environment
		// skips its sign-in prompt.
		// CI=false: Ink draws only its first frame while CI is set in the
		// environment (as .ci/run sets it) unless CI is exactly "false".
		r.Command.Env = append(r.Command.Env, "GROK_BASE_URL="+strings.TrimSuffix(o.BaseURL, "/")+"/v1", "GROK_API_KEY="+o.APIKey,
			"GROK_MODEL="+model(o, "grok-fake"), "CI=false")
	default:
		return fmt.Errorf("tui: unknown host %q", h)
	}
	return nil
}

func model(o Options, def string) string {
	if o.Model != "" {
		return o.Model
	}
	return def
}

func writeJSONFile(path string, v any) error {
	b, err := jsonx.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// moreComposerSign is ComposerSign for the hosts of this file.
func moreComposerSign(h Host) string {
	switch h {
	case Gemini:
		// Drawn once it takes Enter: while it is still starting, the box
		// ("Type your message") is there but Enter leaves a paste unsent.
		return "? for shortcuts"
	case Qwen:
		return "Type your message"
	case Copilot:
		// The status line under the input box.
		return "/ commands"
	case Grok:
		// The input box's placeholder.
		return "Ask me anything"
	}
	return ""
}

// geminiUsers is the user texts of a Gemini API request's contents.
func geminiUsers(raw jsonx.RawMessage, add func(string)) {
	var contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	}
	if jsonx.Unmarshal(raw, &contents) != nil {
		return
	}
	for _, c := range contents {
		if c.Role != "user" {
			continue
		}
		for _, p := range c.Parts {
			if p.Text != "" {
				add(p.Text)
			}
		}
	}
}
