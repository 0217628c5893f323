package ptypane

// oscFilter removes the bytes 0x80–0xFF from OSC strings (ESC ] … BEL or
// ESC \) in a program's output before the emulator reads it. The
// emulator takes a UTF-8 byte 0x9C inside an OSC for the C1 string
// terminator, ends the sequence there and prints the rest as text:
// Claude Code 2.1.328's title "✳ Claude Code" (✳ is E2 9C B3) showed
// up as " Claude Code" in its empty composer, a text the real terminal
// never draws. OSC strings are titles, colour queries and links: none is
// screen text, so the non-ASCII bytes of a title are not missed.
type oscFilter struct {
	state oscState
}

type oscState uint8

const (
	oscNone   oscState = iota
	oscEscape          // ESC seen outside an OSC
	oscIn              // inside an OSC
	oscInEsc           // ESC seen inside an OSC
)

// filter returns p without the OSC bytes the emulator misreads, reusing
// p's storage; the state carries across calls.
func (f *oscFilter) filter(p []byte) []byte {
	out := p[:0]
	for _, b := range p {
		switch f.state {
		case oscNone:
			if b == 0x1b {
				f.state = oscEscape
			}
		case oscEscape:
			switch b {
			case ']':
				f.state = oscIn
			case 0x1b:
			default:
				f.state = oscNone
			}
		case oscIn:
			switch {
			case b == 0x07:
				f.state = oscNone
			case b == 0x1b:
				f.state = oscInEsc
			case b >= 0x80:
				continue
			}
		case oscInEsc:
			// ESC \ ends the string; any other ESC sequence ends it too.
			f.state = oscNone
			if b == ']' {
				f.state = oscIn
			} else if b == 0x1b {
				f.state = oscEscape
			}
		}
		out = append(out, b)
	}
	return out
}
