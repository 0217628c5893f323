package hosttest

import (
	"encoding/json"
	"path/filepath"
)

// Interactive describes a host the runner drives through its interactive
// TUI in a PTY, as a user would, where its headless mode cannot be used:
// its Command returns the TUI's command line (and writes an MCP setup
// through the tap, [Session.TapLog]); the runner waits until the screen
// shows Ready and herdr-link has answered tools/list, types the prompt as
// Herdr types into it (raw: this host has no bracketed paste), and ends
// the session once the screen shows the script's last text.
type Interactive struct {
	// Ready is a piece of the screen that shows the input box is drawn.
	Ready string
}

// TapLog is the MCP tap's log of an interactive session.
func (s *Session) TapLog() string { return filepath.Join(s.Dir, "tap.jsonl") }

// toolsListed reports whether the tap's log holds herdr-link's answer to
// a tools/list request.
func toolsListed(lines []TapLine) bool {
	ids := map[string]bool{}
	for _, l := range lines {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(l.Msg, &m) != nil || len(m.ID) == 0 {
			continue
		}
		switch {
		case l.Dir == "in" && m.Method == "tools/list":
			ids[string(m.ID)] = true
		case l.Dir == "out" && len(m.Result) > 0 && ids[string(m.ID)]:
			return true
		}
	}
	return false
}
