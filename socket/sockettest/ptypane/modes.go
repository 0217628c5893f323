package ptypane

// termModes follows, in a program's terminal output, the two input modes
// that decide how Herdr types into a pane: bracketed paste (DECSET/DECRST
// 2004) and the kitty keyboard protocol's flags (CSI > f u push,
// CSI < n u pop, CSI = f ; m u set), which decide how Enter is encoded.
//
// It is a byte-at-a-time state machine after the DEC VT500 parser (the
// one xterm, Ghostty and most emulators follow), so a sequence split
// across reads is still recognised: inside a control sequence C0 controls
// are executed without ending it, CAN and SUB abort it, ESC starts a new
// one; the payloads of OSC, DCS, SOS, PM and APC strings are skipped (a
// mode sequence inside a string payload does nothing), ESC or BEL ends
// them. 8-bit C1 controls are not recognised: in UTF-8 those bytes are
// parts of characters. RIS (ESC c) resets both modes.
type termModes struct {
	state     escState
	private   byte     // the CSI's private marker ('?', '>', '<', '='), 0 if none
	inter     bool     // the CSI has intermediate bytes
	params    []uint32 // the CSI's parameters so far
	cur       uint32   // the parameter being read
	curSet    bool     // cur has a digit
	overflow  bool     // too many parameters: the sequence is ignored
	bracketed bool
	kitty     []uint32 // the kitty keyboard flag stack; the top is in effect
}

type escState uint8

const (
	stGround    escState = iota
	stEscape             // after ESC
	stEscInter           // ESC followed by intermediate bytes
	stCSI                // inside CSI parameters
	stCSIIgnore          // a malformed CSI, skipped until its final byte
	stString             // inside an OSC, DCS, SOS, PM or APC payload
	stStringEsc          // ESC inside a string payload (ST or a new sequence)
)

// maxParams bounds a CSI's parameters, as terminals do (extra ones make
// the sequence ignored here).
const maxParams = 32

// maxKittyStack bounds the kitty flag stack (kitty's own limit is similar;
// the oldest entry is dropped).
const maxKittyStack = 16

// Bracketed reports whether bracketed paste is on.
func (m *termModes) Bracketed() bool { return m.bracketed }

// KittyFlags is the kitty keyboard flags in effect (0: legacy encoding).
func (m *termModes) KittyFlags() uint32 {
	if len(m.kitty) == 0 {
		return 0
	}
	return m.kitty[len(m.kitty)-1]
}

// kittyReportAllKeys is the kitty flag under which Enter is sent as an
// escape code (CSI 13 u) instead of a carriage return.
const kittyReportAllKeys = 8

// Enter is the bytes of an Enter key press in the terminal's current key
// encoding: "\r", or "ESC[13u" when the program asked the kitty keyboard
// protocol to report all keys as escape codes.
func (m *termModes) Enter() string {
	if m.KittyFlags()&kittyReportAllKeys != 0 {
		return "\x1b[13u"
	}
	return "\r"
}

// Write feeds program output.
func (m *termModes) Write(p []byte) {
	for _, b := range p {
		m.step(b)
	}
}

// Long: a byte-at-a-time state machine for the escape sequences that set
// terminal modes; its states belong in one switch.
func (m *termModes) step(b byte) {
	switch m.state {
	case stString:
		switch b {
		case 0x1b:
			m.state = stStringEsc
		case 0x07, 0x18, 0x1a: // BEL ends OSC (and, leniently, every string); CAN, SUB abort
			m.state = stGround
		}
		return
	case stStringEsc:
		// ESC \ is ST; any other byte after ESC starts a new escape
		// sequence, which also ends the string.
		if b == '\\' {
			m.state = stGround
			return
		}
		m.state = stEscape
		m.step(b)
		return
	}
	// Outside strings: CAN and SUB abort any sequence, ESC starts one.
	switch b {
	case 0x18, 0x1a:
		m.state = stGround
		return
	case 0x1b:
		m.state = stEscape
		return
	}
	switch m.state {
	case stGround:
		// Printable text and C0 controls: nothing to track.
	case stEscape:
		switch {
		case b == '[':
			m.state = stCSI
			m.private, m.inter, m.params, m.cur, m.curSet, m.overflow = 0, false, m.params[:0], 0, false, false
		case b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_':
			m.state = stString
		case b == 'c':
			m.reset()
			m.state = stGround
		case b >= 0x20 && b <= 0x2f:
			m.state = stEscInter
		case b < 0x20:
			// C0 controls are executed inside escape sequences.
		default:
			m.state = stGround
		}
	case stEscInter:
		if b >= 0x30 && b <= 0x7e {
			m.state = stGround
		}
	case stCSI:
		switch {
		case b < 0x20: // executed, the sequence goes on
		case b >= '0' && b <= '9':
			if m.inter {
				m.state = stCSIIgnore
				return
			}
			if m.cur < 1<<28 {
				m.cur = m.cur*10 + uint32(b-'0')
			}
			m.curSet = true
		case b == ';' || b == ':':
			if m.inter {
				m.state = stCSIIgnore
				return
			}
			m.pushParam()
		case b >= 0x3c && b <= 0x3f: // private markers: only first
			if m.private != 0 || len(m.params) > 0 || m.curSet || m.inter {
				m.state = stCSIIgnore
				return
			}
			m.private = b
		case b >= 0x20 && b <= 0x2f:
			m.inter = true
		case b >= 0x40 && b <= 0x7e:
			m.pushParam()
			m.finish(b)
			m.state = stGround
		default: // DEL: ignored
		}
	case stCSIIgnore:
		if b >= 0x40 && b <= 0x7e {
			m.state = stGround
		}
	}
}

func (m *termModes) pushParam() {
	if len(m.params) >= maxParams {
		m.overflow = true
	} else {
		m.params = append(m.params, m.cur)
	}
	m.cur, m.curSet = 0, false
}

func (m *termModes) reset() {
	m.bracketed = false
	m.kitty = m.kitty[:0]
}

// finish acts on a complete CSI with final byte f.
func (m *termModes) finish(f byte) {
	if m.overflow || m.inter {
		return
	}
	switch {
	case m.private == '?' && (f == 'h' || f == 'l'):
		for _, p := range m.params {
			if p == 2004 {
				m.bracketed = f == 'h'
			}
		}
	case f == 'u' && m.private == '>':
		flags := m.param(0, 0)
		if len(m.kitty) == maxKittyStack {
			m.kitty = append(m.kitty[:0], m.kitty[1:]...)
		}
		m.kitty = append(m.kitty, flags)
	case f == 'u' && m.private == '<':
		n := int(m.param(0, 1))
		if n == 0 {
			n = 1
		}
		if n > len(m.kitty) {
			n = len(m.kitty)
		}
		m.kitty = m.kitty[:len(m.kitty)-n]
	case f == 'u' && m.private == '=':
		flags, mode := m.param(0, 0), m.param(1, 1)
		cur := m.KittyFlags()
		switch mode {
		case 1:
			cur = flags
		case 2:
			cur |= flags
		case 3:
			cur &^= flags
		default:
			return
		}
		if len(m.kitty) == 0 {
			m.kitty = append(m.kitty, cur)
		} else {
			m.kitty[len(m.kitty)-1] = cur
		}
	}
}

// param is parameter i, or def when it is absent.
func (m *termModes) param(i int, def uint32) uint32 {
	if i >= len(m.params) {
		return def
	}
	// An empty parameter reads as 0, which for these sequences is the
	// default too, except the pop count and the set mode.
	if m.params[i] == 0 {
		return def
	}
	return m.params[i]
}
