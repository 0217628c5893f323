package herdrstate

import (
	"strings"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
)

// The input methods (upstream src/app/api/panes.rs handle_pane_send_text,
// handle_pane_send_input, handle_pane_send_keys, handle_pane_report_agent;
// src/app/api/agents.rs handle_agent_send_keys): what a user or an agent
// integration does to a pane through Herdr. Each answers {"type":"ok"}.

// inputHandlers are added to the handlers.
var inputHandlers = map[string]handler{
	schema.MethodPaneSendText:     paneSendText,
	schema.MethodPaneSendKeys:     paneSendKeys,
	schema.MethodPaneSendInput:    paneSendInput,
	schema.MethodAgentSendKeys:    agentSendKeys,
	schema.MethodPaneReportAgent:  paneReportAgent,
	schema.MethodPaneReleaseAgent: paneReleaseAgent,
}

var okResult = schema.ResultOk{Type: schema.ResultTypeOk}

// keyEncodingOf is how t's program wants keys (w.mu held).
func keyEncodingOf(t *terminal) keyEncoding {
	e := keyEncoding{enter: "\r"}
	if t.recv != nil {
		e.enter = t.recv.EnterKey()
	}
	if k, ok := t.recv.(interface{ kittyFlags() uint32 }); ok {
		e.kitty = k.kittyFlags()
	}
	return e
}

// sendBytes is Herdr's try_send_bytes (w.mu held): a real program's full
// input queue (or a program gone) refuses the write with code.
func (w *World) sendBytes(t *terminal, data, code string) *herdrError {
	if rc, ok := t.recv.(interface{ accepts(n int) error }); ok {
		if err := rc.accepts(len(data)); err != nil {
			return herr(code, "%s", err.Error())
		}
	}
	if data != "" {
		w.write(t, data)
	}
	return nil
}

// encodeKeys encodes keys for t, every key checked before any is written.
func encodeKeys(t *terminal, keys []string) ([]string, *herdrError) {
	parsed, bad, ok := parseKeys(keys)
	if !ok {
		return nil, herr("invalid_key", "unsupported key %s", bad)
	}
	enc := keyEncodingOf(t)
	out := make([]string, len(parsed))
	for i, k := range parsed {
		out[i] = enc.encode(k)
	}
	return out, nil
}

// paneSendText writes the text as it is: no paste brackets, no Enter (a
// "\r" in it is an Enter, a "\n" a newline the program reads raw).
func paneSendText(c *call) (any, *herdrError) {
	return onPane(c, func(p *schema.PaneSendTextParams) string { return p.PaneID },
		func(w *World, pn *pane, p *schema.PaneSendTextParams) (any, *herdrError) {
			if e := w.sendBytes(pn.term, p.Text, "pane_send_failed"); e != nil {
				return nil, e
			}
			return okResult, nil
		})
}

// paneSendKeys writes each key as its own write, in order.
func paneSendKeys(c *call) (any, *herdrError) {
	return onPane(c, func(p *schema.PaneSendKeysParams) string { return p.PaneID },
		func(w *World, pn *pane, p *schema.PaneSendKeysParams) (any, *herdrError) {
			if e := w.pressKeys(pn, p.Keys); e != nil {
				return nil, e
			}
			return okResult, nil
		})
}

func (w *World) pressKeys(pn *pane, keys []string) *herdrError {
	enc, e := encodeKeys(pn.term, keys)
	if e != nil {
		return e
	}
	for _, b := range enc {
		if e := w.sendBytes(pn.term, b, "pane_send_failed"); e != nil {
			return e
		}
	}
	return nil
}

// onPaneDirect runs f on paneID's pane with w locked, for the Go
// counterparts of the methods: Herdr's refusal as a *[socket.Error].
func (w *World) onPaneDirect(method, paneID string, f func(pn *pane) *herdrError) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	pn, e := w.paneArg(paneID)
	if e == nil {
		e = f(pn)
	}
	if e != nil {
		return &socket.Error{Method: method, Code: e.code, Message: e.msg}
	}
	return nil
}

// TypeDraft types text into paneID's terminal as pane.send_text does (a
// user typing: raw, no Enter), so that it waits in an agent's composer as
// a user's draft.
func (w *World) TypeDraft(paneID, text string) error {
	return w.onPaneDirect(schema.MethodPaneSendText, paneID, func(pn *pane) *herdrError {
		return w.sendBytes(pn.term, text, "pane_send_failed")
	})
}

// PressKeys presses keys in paneID as pane.send_keys does (Herdr's key
// syntax: "Enter", "Escape", "ctrl+u"…; an unknown key refuses them all
// with invalid_key).
func (w *World) PressKeys(paneID string, keys ...string) error {
	return w.onPaneDirect(schema.MethodPaneSendKeys, paneID, func(pn *pane) *herdrError {
		return w.pressKeys(pn, keys)
	})
}

// ReportAgent applies p as pane.report_agent does: an agent integration
// reporting the pane's agent and its state.
func (w *World) ReportAgent(p schema.PaneReportAgentParams) error {
	return w.onPaneDirect(schema.MethodPaneReportAgent, p.PaneID, func(pn *pane) *herdrError {
		if reportedLabel(p.Agent) == "" {
			return herr("invalid_agent", "agent label must not be empty")
		}
		w.reportAgent(pn, p)
		return nil
	})
}

// paneSendInput writes the text (in paste brackets when the program has
// bracketed paste on) and then the keys, as one write.
func paneSendInput(c *call) (any, *herdrError) {
	return onPane(c, func(p *schema.PaneSendInputParams) string { return p.PaneID },
		func(w *World, pn *pane, p *schema.PaneSendInputParams) (any, *herdrError) {
			var b strings.Builder
			if p.Text != "" {
				if pn.term.bracketed() {
					b.WriteString(pasteStart + p.Text + pasteEnd)
				} else {
					b.WriteString(p.Text)
				}
			}
			enc, e := encodeKeys(pn.term, p.Keys)
			if e != nil {
				return nil, e
			}
			for _, k := range enc {
				b.WriteString(k)
			}
			if e := w.sendBytes(pn.term, b.String(), "pane_send_failed"); e != nil {
				return nil, e
			}
			return okResult, nil
		})
}

// agentSendKeys writes the keys as one write to an agent's pane: the
// target must be a built-in agent kind still in the foreground (no
// readiness or blocked check: it is how a dialog is answered).
func agentSendKeys(c *call) (any, *herdrError) {
	return onAgent(c, func(p *schema.AgentSendKeysParams) string { return p.Target },
		func(w *World, pn *pane, p *schema.AgentSendKeysParams) (any, *herdrError) {
			t := pn.term
			known := false
			if t.label != nil {
				_, known = knownAgent(*t.label)
			}
			if !known || t.notForeground {
				return nil, herr("agent_not_ready", "agent %s is not an active named agent", p.Target)
			}
			enc, e := encodeKeys(t, p.Keys)
			if e != nil {
				return nil, e
			}
			if e := w.sendBytes(t, strings.Join(enc, ""), "agent_send_keys_failed"); e != nil {
				return nil, e
			}
			return okResult, nil
		})
}

func paneReportAgent(c *call) (any, *herdrError) {
	return onPane(c, func(p *schema.PaneReportAgentParams) string { return p.PaneID },
		func(w *World, pn *pane, p *schema.PaneReportAgentParams) (any, *herdrError) {
			if reportedLabel(p.Agent) == "" {
				return nil, herr("invalid_agent", "agent label must not be empty")
			}
			w.reportAgent(pn, *p)
			return okResult, nil
		})
}
