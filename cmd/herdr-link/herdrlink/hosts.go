package herdrlink

// The registration snippet of herdr-link for each agent host, as
// 'herdr-link config HOST' prints it. docs/hosts.md's host sections are tested
// against the same text (TestREADMEHostSnippets).

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	pi "github.com/herdr-link/herdr-link/adapters/pi"
	"github.com/herdr-link/herdr-link/link"
)

// serverName is the MCP server name herdr-link is registered under; hosts
// build tool names from it (mcp__herdr_link__herdr_link_send).
const serverName = "herdr_link"

// host is one agent host.
type host struct {
	Name    string
	Summary string // what the snippet is
	Where   string // where it goes
	snippet func(bin string) string
}

// hosts, in the order 'herdr-link config' lists them.
var hosts = []host{
	{"claude", "Claude Code: a shell command", "run it once; --scope user registers herdr-link for every project", claude},
	{"codex", "Codex: a config.toml table", "add it to ~/.codex/config.toml (or $CODEX_HOME/config.toml)", codex},
	{"opencode", "OpenCode: an opencode.json entry", "merge it into ~/.config/opencode/opencode.json or the project's opencode.json", opencode},
	{"pi", "Pi 0.73 (no built-in MCP): the herdr-link extension", "save it as ~/.pi/agent/extensions/herdr-link.ts", piExtension},
	{"pi-mcp", "Pi 1.6 and later (built-in MCP): an mcp.json entry", "merge it into ~/.pi/agent/mcp.json", piMCP},
	{"gemini", "Gemini CLI: a settings.json entry", "merge it into ~/.gemini/settings.json (or the project's .gemini/settings.json)", geminiSettings},
	{"qwen", "Qwen Code: a settings.json entry", "merge it into ~/.qwen/settings.json (or the project's .qwen/settings.json)", geminiSettings},
	{"copilot", "GitHub Copilot CLI: an mcp-config.json entry", "merge it into ~/.copilot/mcp-config.json (or $COPILOT_HOME/mcp-config.json)", copilot},
	{"grok", "Grok CLI: a .grok/settings.json entry", "merge it into the project's .grok/settings.json (Grok CLI reads MCP servers per project)", grok},
	{"crush", "Crush: a crush.json entry", "merge it into ~/.config/crush/crush.json or the project's crush.json (or .crush.json)", crush},
	{"generic", "any MCP host that reads the common mcpServers JSON (Claude Code's .mcp.json, Cursor, …)", "merge it into the host's MCP configuration", generic},
}

// lookupHost finds a host by name.
func lookupHost(name string) (host, bool) {
	for _, h := range hosts {
		if h.Name == name {
			return h, true
		}
	}
	return host{}, false
}

// Snippet is the exact text to paste for this host, with bin (an absolute
// path) as the command. It ends with a newline.
func (h host) Snippet(bin string) string { return h.snippet(bin) }

// piInstall is the one command that installs the Pi extension.
func piInstall(bin string) string {
	return "mkdir -p ~/.pi/agent/extensions && " + shellQuote(bin) + " config pi > ~/.pi/agent/extensions/herdr-link.ts\n"
}

func claude(bin string) string {
	return "claude mcp add --scope user " + serverName + " -- " + shellQuote(bin) + "\n"
}

func codex(bin string) string {
	return "[mcp_servers." + serverName + "]\n" +
		"command = " + jsonString(bin) + "\n" +
		"args = []\n" +
		"# Codex passes only a whitelist of variables to MCP servers: name Herdr's.\n" +
		link.CodexEnvVarsLine() + "\n" +
		"startup_timeout_sec = 10\n"
}

func opencode(bin string) string {
	return `{
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    "` + serverName + `": { "type": "local", "command": [` + jsonString(bin) + `], "enabled": true }
  }
}
`
}

func piMCP(bin string) string { return pi.MCPConfig(serverName, bin) }

func generic(bin string) string {
	return `{
  "mcpServers": {
    "` + serverName + `": { "type": "stdio", "command": ` + jsonString(bin) + `, "args": [] }
  }
}
`
}

func piExtension(bin string) string { return pi.Extension(bin) }

// jsonString quotes s as a JSON string, which is also a valid TOML basic
// string and JavaScript string literal.
func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("hostconfig: %v", err)) // a string always marshals
	}
	return string(b)
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
