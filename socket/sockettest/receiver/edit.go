package receiver

import (
	"strings"
	"unicode/utf8"
)

// Editing keys a user presses in the composer (pane.send_keys,
// agent.send_keys). The cursor is always at the end of the composer.
//
//   - ctrl+u deletes back to the start of the current line (at the start
//     of a line: the line break before it), as Claude Code's, Codex's,
//     OpenCode's and Pi's editors do; a paste in the way goes whole.
//   - ctrl+c with text in the composer clears it (every kind); on an empty
//     composer it does nothing here (the real TUIs arm their exit).
//   - backspace (and ctrl+h) deletes the last character, or the last
//     paste whole (a placeholder is one element).
//   - Escape: Claude Code clears the composer on a second Escape in a row
//     (the first shows a hint); the others keep the composer (Escape
//     interrupts a turn or opens their history, not modelled).
//
// None of them submits, and none reaches a turn already queued.

func (m *Model) editKey(name string) {
	switch name {
	case "ctrl+u":
		m.killLine()
	case "ctrl+c":
		m.clearComposer()
	case "backspace":
		m.backspace()
	}
}

// escape is the Escape key.
func (m *Model) escape() {
	if m.k.name != "claude" {
		return
	}
	if !m.escArmed {
		m.escArmed = len(m.composer) > 0
		return
	}
	m.escArmed = false
	m.clearComposer()
}

func (m *Model) clearComposer() {
	if len(m.composer) == 0 {
		return
	}
	m.composer = nil
	m.t.Changed()
}

func (m *Model) killLine() {
	deleted := false
	for len(m.composer) > 0 {
		last := &m.composer[len(m.composer)-1]
		if last.paste {
			m.composer = m.composer[:len(m.composer)-1]
			deleted = true
			continue
		}
		i := strings.LastIndexByte(last.text, '\n')
		switch {
		case i < 0:
			m.composer = m.composer[:len(m.composer)-1]
			deleted = true
			continue
		case i == len(last.text)-1 && !deleted:
			last.text = last.text[:i] // at the start of a line: join it to the previous one
		default:
			last.text = last.text[:i+1]
		}
		if last.text == "" {
			m.composer = m.composer[:len(m.composer)-1]
		}
		break
	}
	m.t.Changed()
}

func (m *Model) backspace() {
	n := len(m.composer)
	if n == 0 {
		return
	}
	last := &m.composer[n-1]
	if last.paste {
		m.composer = m.composer[:n-1]
	} else {
		_, size := utf8.DecodeLastRuneInString(last.text)
		last.text = last.text[:len(last.text)-size]
		if last.text == "" {
			m.composer = m.composer[:n-1]
		}
	}
	m.t.Changed()
}
