package receiver

import "strings"

// What a terminal program reads from its input, as a TUI's key reader
// splits it: runs of typed text, bracketed pastes and Enter.
type inputKind int

const (
	inputTyped inputKind = iota // raw text (newlines included; they do not submit)
	inputPaste                  // the content of one ESC[200~ … ESC[201~ paste
	inputEnter                  // a carriage return outside a paste
	inputKey                    // an editing key outside a paste: text is its name
)

type inputEvent struct {
	kind inputKind
	text string
}

// editKey names the control bytes a composer treats as editing keys rather
// than text, as Herdr's key syntax names them ("" for any other byte).
func editKey(c byte) string {
	switch c {
	case 0x03:
		return "ctrl+c"
	case 0x15:
		return "ctrl+u"
	case 0x7f, 0x08:
		return "backspace"
	}
	return ""
}

const (
	pasteStart = "\x1b[200~"
	pasteEnd   = "\x1b[201~"
)

// inputParser turns the bytes written to a terminal into input events. It
// keeps its state across writes, so a paste or an escape sequence may be
// split anywhere. Outside a paste, "\r" is Enter, other escape sequences
// (the focus-in report ESC[I, cursor keys, Alt-keys) are consumed without
// effect, Ctrl-C, Ctrl-U, Ctrl-H and Backspace are editing keys, and every
// other byte is typed text. Inside a paste every byte is
// literal until ESC[201~.
type inputParser struct {
	inPaste bool
	paste   strings.Builder
	esc     []byte // an unfinished escape sequence outside a paste
}

// feed returns the events completed by data, in order. Adjacent typed
// text is one event.
func (p *inputParser) feed(data string) []inputEvent {
	var out []inputEvent
	var typed strings.Builder
	for i := 0; i < len(data); {
		if p.inPaste {
			// Search the end marker across the write boundary: at most
			// len(pasteEnd)-1 bytes of it can already be in the paste.
			before := p.paste.Len()
			p.paste.WriteString(data[i:])
			s := p.paste.String()
			from := before - (len(pasteEnd) - 1)
			if from < 0 {
				from = 0
			}
			j := strings.Index(s[from:], pasteEnd)
			if j < 0 {
				return out // typed text was flushed when the paste began
			}
			end := from + j
			out = append(out, inputEvent{inputPaste, s[:end]})
			// Continue after the marker in data.
			i += end + len(pasteEnd) - before
			p.paste.Reset()
			p.inPaste = false
			continue
		}
		c := data[i]
		if len(p.esc) > 0 {
			p.esc = append(p.esc, c)
			i++
			if done, isPaste := escDone(p.esc); done {
				p.esc = p.esc[:0]
				if isPaste {
					out = flushTyped(&typed, out)
					p.inPaste = true
				}
			}
			continue
		}
		switch c {
		case 0x1b:
			p.esc = append(p.esc[:0], c)
		case '\r':
			out = flushTyped(&typed, out)
			out = append(out, inputEvent{kind: inputEnter})
		case 0x03, 0x15, 0x7f, 0x08:
			out = flushTyped(&typed, out)
			out = append(out, inputEvent{inputKey, editKey(c)})
		default:
			typed.WriteByte(c)
		}
		i++
	}
	return flushTyped(&typed, out)
}

func flushTyped(typed *strings.Builder, out []inputEvent) []inputEvent {
	if typed.Len() > 0 {
		out = append(out, inputEvent{inputTyped, typed.String()})
		typed.Reset()
	}
	return out
}

// escDone reports whether esc (starting with ESC) is a complete sequence,
// and whether it is the paste start. ESC followed by anything but '[' is a
// two-byte (Alt) sequence; a CSI ends at its final byte (0x40–0x7e), and
// one that grows implausibly long is dropped.
func escDone(esc []byte) (done, paste bool) {
	if len(esc) < 2 {
		return false, false
	}
	if esc[1] != '[' {
		return true, false
	}
	if len(esc) == 2 {
		return false, false
	}
	last := esc[len(esc)-1]
	if last >= 0x40 && last <= 0x7e {
		return true, string(esc) == pasteStart
	}
	return len(esc) >= 32, false
}
