package receiver

import (
	"strings"

	"github.com/herdr-link/herdr-link/schema"
)

// merge is the text the model gets for pieces submitted together.
func (k *kind) merge(pieces []piece) string {
	var b strings.Builder
	for i, p := range pieces {
		if p.paste && i > 0 {
			if pieces[i-1].paste {
				b.WriteString(k.pasteAfterPaste)
			} else {
				b.WriteString(k.pasteAfterText)
			}
		}
		if p.paste && k.tagPastes {
			id := itoa(p.id)
			b.WriteString(`<pasted_content id="` + id + `">` + p.text + `</pasted_content id="` + id + `">`)
			continue
		}
		b.WriteString(p.text)
	}
	return b.String()
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var d [20]byte
	i := len(d)
	for ; n > 0; n /= 10 {
		i--
		d[i] = byte('0' + n%10)
	}
	return string(d[i:])
}

// shown is how the composer displays pieces (placeholders for collapsed
// pastes).
func (k *kind) shown(pieces []piece) string {
	var b strings.Builder
	for _, p := range pieces {
		if !p.paste || !k.collapse(p) {
			b.WriteString(p.text)
			continue
		}
		switch k.name {
		case "claude":
			b.WriteString("[Pasted text #" + itoa(p.id) + " +" + itoa(strings.Count(p.text, "\n")) + " lines]")
		case "codex":
			b.WriteString("[Pasted Content " + itoa(len([]rune(p.text))) + " chars]")
		case "opencode":
			b.WriteString("[Pasted ~" + itoa(strings.Count(p.text, "\n")+1) + " lines]")
		case "pi":
			b.WriteString("[paste #" + itoa(p.id) + " " + itoa(len([]rune(p.text))) + " chars]")
		}
	}
	return b.String()
}

// claudeRule is the rule Claude Code draws above and below its composer
// (the pane's width; 80 columns here).
var claudeRule = strings.Repeat("─", 80)

// indentRows indents the rows after the first by two spaces, as Claude
// Code and Codex draw a composer's continuation rows.
func indentRows(s string) string { return strings.ReplaceAll(s, "\n", "\n  ") }

// screen renders the pane: the turns so far (what the model got), then
// the kind's status and composer lines with the screen signs of
// hosts-and-delivery §2.
func (m *Model) Screen() string {
	var b strings.Builder
	for _, s := range m.t.Submissions() {
		b.WriteString(s.Text)
		b.WriteString("\n\n")
	}
	working := m.t.State() == schema.AgentStatusWorking
	comp := m.k.shown(m.composer)
	q := m.k.shown(m.queue)
	switch m.k.name {
	case "claude":
		if working {
			b.WriteString("✻ Working… (esc to interrupt)\n")
		}
		if m.queued > 0 {
			b.WriteString("❯ " + q + "\n  ⎿ Queued · ctrl+x ctrl+s to send now\n")
		}
		// Claude Code 2.1.328: the composer between two rules, "❯" and a
		// no-break space, continuation rows indented, a footer row.
		b.WriteString(claudeRule + "\n❯\u00a0" + indentRows(comp) + "\n" + claudeRule + "\n  ⏵⏵ auto mode on (shift+tab to cycle)")
	case "codex":
		if working {
			b.WriteString("• Working (0s • esc to interrupt)\n\n")
		}
		// Codex 0.171.0: the composer row (the placeholder when empty), a
		// blank row, the status row, a hint row ("tab to queue message"
		// while working with text in the composer).
		if comp == "" {
			b.WriteString("› Ask Codex to do anything\n\n  gpt-5 default · ~/work\n  ← for agents · ? for shortcuts")
		} else {
			b.WriteString("› " + indentRows(comp) + "\n\n  gpt-5 default · ~/work")
			if working {
				b.WriteString("\n  tab to queue message")
			}
		}
	case "opencode":
		if m.queued > 0 {
			b.WriteString("QUEUED " + q + "\n")
		}
		// OpenCode 1.18.33: a box with a "┃" border: a blank row, the
		// text (or the placeholder), a blank row, the agent and model,
		// the "╹▀▀▀" bottom; the footer below it.
		if comp == "" {
			comp = `Ask anything… "Fix a TODO in the codebase"`
		}
		b.WriteString("┃\n┃  " + strings.ReplaceAll(comp, "\n", "\n┃  ") + "\n┃\n┃  Build · model\n╹" + strings.Repeat("▀", 79) + "\n")
		if working {
			b.WriteString("  ⬝⬝⬝⬝⬝⬝⬝⬝  esc interrupt")
		}
		b.WriteString("  tab agents  ctrl+p commands")
	case "pi":
		if working {
			b.WriteString("Working...\n")
		}
		if m.queued > 0 {
			b.WriteString("Steering: " + q + "\nAlt+Up to edit all queued messages\n")
		}
		b.WriteString("────\n" + comp + "\n────")
	default:
		if working {
			b.WriteString("working…\n")
		}
		if m.queued > 0 {
			b.WriteString("queued: " + q + "\n")
		}
		b.WriteString("> " + comp)
	}
	return viewport(b.String())
}

// ViewportRows is how many rows of a modelled agent's screen pane.read
// shows, as a terminal of that height would: the bottom of the
// transcript and the composer (Herdr's visible source is the viewport).
const ViewportRows = 60

// viewport keeps the last ViewportRows rows of s.
func viewport(s string) string {
	n := 0
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			if n++; n == ViewportRows {
				return s[i+1:]
			}
		}
	}
	return s
}
