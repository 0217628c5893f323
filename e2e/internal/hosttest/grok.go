package hosttest

// Grok CLI (@vibe-kit/grok-cli): a recipient only for now. Its headless
// `grok -p` sends the first model request before its MCP servers are
// initialised and never exits (docs/hosts.md), so the headless runner has
// no mode for it; its interactive TUI (internal/tui) is installed from the
// same pinned package.
var grokCLI = &Host{
	Name:     "grok",
	Display:  "Grok CLI",
	Version:  "0.0.34",
	Packages: []string{"@vibe-kit/grok-cli@0.0.34"},
	Bin:      "grok",
	Kind:     "grok",
}

// recipients are hosts installed for their TUIs only: [Lookup] finds
// them, [Hosts] (the headless runner's list) does not.
var recipients = []*Host{grokCLI}
