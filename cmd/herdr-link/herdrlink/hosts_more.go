package herdrlink

// Registration snippets of the hosts verified after the first four:
// Gemini CLI, Qwen Code (a Gemini CLI fork: the same settings.json
// shape), GitHub Copilot CLI, Grok CLI and Crush.

// geminiSettings is a settings.json entry of Gemini CLI and Qwen Code
// (~/.gemini/settings.json, ~/.qwen/settings.json, or the project's
// .gemini/ or .qwen/ folder). Both pass their own environment on to a
// stdio server, so Herdr's variables need no listing.
func geminiSettings(bin string) string {
	return `{
  "mcpServers": {
    "` + serverName + `": { "command": ` + jsonString(bin) + `, "args": [] }
  }
}
`
}

// copilot is an entry of ~/.copilot/mcp-config.json.
func copilot(bin string) string {
	return `{
  "mcpServers": {
    "` + serverName + `": { "type": "local", "command": ` + jsonString(bin) + `, "args": [], "tools": ["*"] }
  }
}
`
}

// grok is the project's .grok/settings.json entry, as `grok mcp add`
// writes it (Grok CLI reads MCP servers from the project only).
func grok(bin string) string {
	return `{
  "mcpServers": {
    "` + serverName + `": {
      "name": "` + serverName + `",
      "transport": { "type": "stdio", "command": ` + jsonString(bin) + `, "args": [], "env": {} }
    }
  }
}
`
}

// crush is an entry of Crush's crush.json (~/.config/crush/crush.json, or
// the project's crush.json or .crush.json). Crush starts a stdio server
// with its own environment plus the entry's env, so Herdr's variables
// need no listing.
func crush(bin string) string {
	return `{
  "$schema": "https://charm.land/crush.json",
  "mcp": {
    "` + serverName + `": { "type": "stdio", "command": ` + jsonString(bin) + `, "args": [] }
  }
}
`
}
