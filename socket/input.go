package socket

import (
	"context"

	"github.com/herdr-link/herdr-link/schema"
)

// What a user or an agent integration does to a pane through Herdr: type
// text, press keys, report an agent's state. Each answers {"type":"ok"}.

// ok performs a checked call whose result is {"type":"ok"}.
func ok(ctx context.Context, c *Client, method string, params any) error {
	_, err := Call[schema.ResultOk](ctx, c, method, schema.ResultTypeOk, params)
	return err
}

// nonNil keeps an empty key list a JSON array: Herdr requires keys.
func nonNil(keys []string) []string {
	if keys == nil {
		return []string{}
	}
	return keys
}

// PaneSendText writes text to a pane's terminal exactly as given: no
// paste brackets and no Enter (a "\r" in text is an Enter key to the
// program). Refusals: pane_not_found, pane_send_failed.
func (c *Client) PaneSendText(ctx context.Context, paneID, text string) error {
	return ok(ctx, c, schema.MethodPaneSendText, schema.PaneSendTextParams{PaneID: paneID, Text: text})
}

// PaneSendKeys presses keys in a pane, each written on its own, in Herdr's
// key syntax ("Enter", "Escape", "ctrl+u", "shift+tab", "C-c", "f5"…).
// Every key is checked before any is written: an unknown one is refused
// with invalid_key ("unsupported key <key>"). Other refusals:
// pane_not_found, pane_send_failed.
func (c *Client) PaneSendKeys(ctx context.Context, paneID string, keys ...string) error {
	return ok(ctx, c, schema.MethodPaneSendKeys, schema.PaneSendKeysParams{PaneID: paneID, Keys: nonNil(keys)})
}

// PaneSendInput writes text (as a bracketed paste when the program turned
// bracketed paste on, raw otherwise) followed by keys, in one write.
// Refusals as for PaneSendKeys.
func (c *Client) PaneSendInput(ctx context.Context, paneID, text string, keys ...string) error {
	return ok(ctx, c, schema.MethodPaneSendInput, schema.PaneSendInputParams{PaneID: paneID, Text: text, Keys: keys})
}

// AgentSendKeys presses keys in an agent's pane in one write (how a
// permission dialog is answered: it is not refused while the agent is
// blocked). target resolves as for AgentGet. Refusals: agent_not_found,
// agent_target_ambiguous, agent_not_ready (not a built-in agent kind, or
// no longer the pane's foreground process), invalid_key,
// agent_send_keys_failed.
func (c *Client) AgentSendKeys(ctx context.Context, target string, keys ...string) error {
	return ok(ctx, c, schema.MethodAgentSendKeys, schema.AgentSendKeysParams{Target: target, Keys: nonNil(keys)})
}

// PaneReportAgent reports the agent in a pane and its state, as Herdr's
// agent integrations do from their hooks: the report overrides screen
// detection until another report (from a source, only a newer seq
// counts). Refusals: pane_not_found, invalid_agent (empty agent label).
func (c *Client) PaneReportAgent(ctx context.Context, p schema.PaneReportAgentParams) error {
	return ok(ctx, c, schema.MethodPaneReportAgent, p)
}
