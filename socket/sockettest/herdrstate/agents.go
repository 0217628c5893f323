package herdrstate

import "strings"

// agentAliases maps every name Herdr 0.8.2 recognises as a built-in agent
// kind to its canonical label (upstream src/detect/mod.rs, lookup_agent).
// A label outside this table is a custom hook label: listed, but not an
// agent agent.prompt accepts.
var agentAliases = map[string]string{
	"pi": "pi", "claude": "claude", "claude-code": "claude", "codex": "codex", "gemini": "gemini",
	"cursor": "cursor", "cursor-agent": "cursor", "devin": "devin", "devin-cli": "devin", "devin cli": "devin",
	"agy": "agy", "antigravity": "agy", "antigravity-cli": "agy", "cline": "cline", "omp": "omp",
	"mastracode": "mastracode", "mastra-code": "mastracode", "mastra code": "mastracode",
	"opencode": "opencode", "opencode2": "opencode", "open-code": "opencode",
	"copilot": "copilot", "github-copilot": "copilot", "ghcs": "copilot",
	"kimi": "kimi", "kimi-code": "kimi", "kimi code": "kimi", "kiro": "kiro", "kiro-cli": "kiro", "droid": "droid",
	"amp": "amp", "amp-local": "amp", "grok": "grok", "grok-build": "grok", "hermes": "hermes", "hermes-agent": "hermes",
	"kilo": "kilo", "kilo-code": "kilo", "kilo code": "kilo",
	"qodercli": "qodercli", "qoderclicn": "qodercli", "qoder": "qodercli", "qodercn": "qodercli",
	"qwen": "qwen", "qwen-code": "qwen", "qwen code": "qwen", "maki": "maki",
}

// knownAgent returns the built-in agent kind a label names, as Herdr's
// parse_agent_label does: trimmed, lower-cased, without a trailing .exe,
// .cmd, .bat, .ps1 or .js, then looked up with its aliases.
func knownAgent(label string) (string, bool) {
	name := strings.ToLower(strings.TrimSpace(label))
	for _, suffix := range []string{".exe", ".cmd", ".bat", ".ps1", ".js"} {
		if strings.HasSuffix(name, suffix) {
			name = strings.TrimSuffix(name, suffix)
			break
		}
	}
	kind, ok := agentAliases[name]
	return kind, ok
}
