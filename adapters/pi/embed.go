// Package pi carries herdr-link's Pi configurations: the extension for Pi
// 0.73 (herdr-link.ts, which has no MCP) and the mcp.json entry for Pi 1.6
// and later. 'herdr-link config pi' / 'config pi-mcp' print them and the
// host runner installs them, from these functions.
package pi

import (
	_ "embed"
	"encoding/json"
	"strings"
)

// Source is herdr-link.ts as it is in the tree.
//
//go:embed herdr-link.ts
var Source string

// BinLine is the line of Source that names the herdr-link binary.
const BinLine = `const HERDR_LINK_BIN = "herdr-link";`

// Extension is herdr-link.ts with bin (an absolute path) as the binary.
func Extension(bin string) string {
	return strings.Replace(Source, BinLine, "const HERDR_LINK_BIN = "+jsonString(bin)+";", 1)
}

// MCPConfig is the ~/.pi/agent/mcp.json entry for Pi's built-in MCP, with
// the tools declared to the model ("exposure": "direct").
func MCPConfig(serverName, bin string) string {
	return `{
  "mcpServers": {
    "` + serverName + `": { "command": ` + jsonString(bin) + `, "args": [], "exposure": "direct" }
  }
}
`
}

// jsonString quotes s as a JSON string (also a JavaScript string literal).
func jsonString(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}
