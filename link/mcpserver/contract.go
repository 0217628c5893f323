package mcpserver

import (
	"bytes"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link"
)

// The Communication Contract reaches the model once per connection: in
// the first tool result written after activation, whichever call that is
// (PROTOCOL.md §6). Tool descriptions never repeat it.

// claimContract reports whether the result being built is the one that
// carries the contract, and marks it delivered. Only an active connection
// delivers it; a call answered with no response (cancelled) never claims.
func (h *handler) claimContract() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.active || h.contractSent {
		return false
	}
	h.contractSent = true
	return true
}

// withContract adds the contract to res if res is the first result of the
// connection: as a second text block for hosts that show text, and as
// "contract" and "usage" fields of structuredContent for hosts that show
// that (Claude Code and Codex do). Tier-1 output schemas leave extra
// properties open, so the result still conforms.
func (h *handler) withContract(res toolResult) toolResult {
	if !h.claimContract() {
		return res
	}
	res.Content = append(res.Content, content{Type: "text", Text: contractText()})
	if res.StructuredContent != nil {
		res.StructuredContent = contractFields{inner: res.StructuredContent}
	}
	return res
}

// contractFields marshals an object result with the contract and the
// gateway usage appended as two more fields.
type contractFields struct{ inner any }

func (c contractFields) MarshalJSON() ([]byte, error) {
	b, ok := c.inner.(jsonx.RawMessage) // a tool result, encoded once
	if !ok {
		var err error
		if b, err = jsonx.Marshal(c.inner); err != nil {
			return nil, err
		}
	}
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[len(b)-1] != '}' {
		return b, nil // not an object: leave it alone
	}
	extra, err := jsonx.Marshal(struct {
		Contract string `json:"contract"`
		Usage    string `json:"usage"`
	}{link.Contract, gatewayUsage})
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b)+len(extra))
	out = append(out, b[:len(b)-1]...)
	if len(b) > 2 {
		out = append(out, ',')
	}
	out = append(out, extra[1:]...)
	return out, nil
}

// outside is the user-facing reason of an empty tool list.
func (h *handler) outside() string {
	if h.opt.Outside != "" {
		return h.opt.Outside
	}
	return "Herdr Link offers no tools here: this process is not running in a Herdr pane (HERDR_ENV=1, HERDR_PANE_ID and Herdr's socket are required). Run herdr-link probe in the agent's pane to check every step."
}
