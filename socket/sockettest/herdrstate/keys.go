package herdrstate

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Herdr's key names, as pane.send_keys, pane.send_input and
// agent.send_keys parse them (upstream src/app/api_helpers.rs
// parse_api_key, src/config/keybinds.rs parse_key_combo): the key is
// trimmed; "C-c" and "c-c" mean ctrl+c and "+" means plus; then it is
// split at '+' into modifiers (ctrl/control, shift, alt/option/meta,
// cmd/command/super, hyper; any case) and exactly one key: space, enter or
// return, esc or escape, tab (shift+tab is backtab), backspace or bs,
// left, right, up, down, a punctuation name (minus, comma, period, slash,
// backslash, quote, double_quote or double-quote, semicolon, colon,
// percent, ampersand, backtick, plus), one character (an upper-case
// letter adds shift), or f<N>. Anything else is refused whole, before any
// byte is written: invalid_key "unsupported key <key as sent>". Notably
// "C-u", "Delete", "Home" and "PageUp" are not keys (ctrl+u is).

type keyCode int

const (
	keyChar keyCode = iota
	keyEnter
	keyEsc
	keyTab
	keyBackTab
	keyBackspace
	keyLeft
	keyRight
	keyUp
	keyDown
	keyF
)

type keyMods uint8

const (
	modShift keyMods = 1 << iota
	modAlt
	modCtrl
	modSuper
	modHyper
)

// apiKey is one parsed key: a code (a character or F-key number for
// keyChar and keyF) and its modifiers.
type apiKey struct {
	code keyCode
	ch   rune
	fn   int
	mods keyMods
}

func modifierToken(tok string) (keyMods, bool) {
	switch strings.ToLower(tok) {
	case "ctrl", "control":
		return modCtrl, true
	case "shift":
		return modShift, true
	case "alt", "option", "meta":
		return modAlt, true
	case "cmd", "command", "super":
		return modSuper, true
	case "hyper":
		return modHyper, true
	}
	return 0, false
}

var punctKeys = map[string]rune{
	"space": ' ', " ": ' ', "minus": '-', "comma": ',', "period": '.', "slash": '/', "backslash": '\\',
	"quote": '\'', "double_quote": '"', "double-quote": '"', "semicolon": ';', "colon": ':',
	"percent": '%', "ampersand": '&', "backtick": '`', "plus": '+',
}

var namedKeys = map[string]keyCode{
	"enter": keyEnter, "return": keyEnter, "esc": keyEsc, "escape": keyEsc, "tab": keyTab,
	"backspace": keyBackspace, "bs": keyBackspace, "left": keyLeft, "right": keyRight, "up": keyUp, "down": keyDown,
}

// parseKey parses one key of Herdr's syntax.
func parseKey(raw string) (apiKey, bool) {
	s := strings.TrimSpace(raw)
	switch s {
	case "C-c", "c-c":
		s = "ctrl+c"
	case "+":
		s = "plus"
	}
	var k apiKey
	key := ""
	for _, part := range strings.Split(s, "+") {
		part = strings.TrimSpace(part)
		if part == "" {
			return apiKey{}, false
		}
		if m, ok := modifierToken(part); ok {
			k.mods |= m
			continue
		}
		if key != "" {
			return apiKey{}, false
		}
		key = part
	}
	if key == "" {
		return apiKey{}, false
	}
	lower := strings.ToLower(key)
	if c, ok := namedKeys[lower]; ok {
		k.code = c
		if c == keyTab && k.mods&modShift != 0 {
			k.code, k.mods = keyBackTab, k.mods&^modShift
		}
		return k, true
	}
	if ch, ok := punctKeys[lower]; ok {
		k.ch = ch
		return k, true
	}
	if r, size := utf8.DecodeRuneInString(key); size == len(key) && r != utf8.RuneError {
		if r < unicode.MaxASCII && unicode.IsUpper(r) {
			k.mods |= modShift
			r = unicode.ToLower(r)
		}
		k.ch = r
		return k, true
	}
	if strings.HasPrefix(lower, "f") {
		n, err := strconv.ParseUint(lower[1:], 10, 8)
		if err == nil {
			k.code, k.fn = keyF, int(n)
			return k, true
		}
	}
	return apiKey{}, false
}

// parseKeys parses every key before any is written; the first one Herdr
// refuses is returned as sent.
func parseKeys(keys []string) ([]apiKey, string, bool) {
	out := make([]apiKey, 0, len(keys))
	for _, raw := range keys {
		k, ok := parseKey(raw)
		if !ok {
			return nil, raw, false
		}
		out = append(out, k)
	}
	return out, "", true
}

// keyEncoding is how the program in a terminal wants keys: Enter's bytes
// and the kitty keyboard flags it set (0: the legacy encoding).
type keyEncoding struct {
	enter string
	kitty uint32
}

// The kitty keyboard flags that change how a key press is encoded.
const (
	kittyDisambiguate  = 1
	kittyReportAllKeys = 8
)

// encode is the bytes Herdr writes for k. Herdr encodes keys with
// Ghostty's key encoder (upstream src/pane/terminal.rs
// encode_terminal_key_once), its own encoder being the fallback
// (src/input/encode.rs): without kitty flags the legacy (xterm) bytes;
// with "disambiguate" a modified key and Escape as CSI u; with "report
// all keys" every key as CSI u, Enter included. (Event types, alternate
// keys and associated text are not modelled.)
func (e keyEncoding) encode(k apiKey) string {
	all := e.kitty&kittyReportAllKeys != 0
	if k.code == keyEnter && k.mods == 0 {
		return e.enter
	}
	if !all && k.code == keyChar && (k.mods == 0 || k.mods == modShift) {
		if s, ok := shiftedText(k); ok {
			return s
		}
	}
	if e.kitty&(kittyDisambiguate|kittyReportAllKeys) != 0 {
		if s, ok := csiU(k, all); ok {
			return s
		}
	}
	return legacy(k)
}

func shiftedText(k apiKey) (string, bool) {
	if k.mods == 0 {
		return string(k.ch), true
	}
	switch {
	case k.ch >= 'a' && k.ch <= 'z':
		return string(unicode.ToUpper(k.ch)), true
	case strings.ContainsRune("!@#$%^&*()_+{}|:\"<>?~", k.ch):
		return string(k.ch), true
	}
	return "", false
}

func xtermModifier(m keyMods) int {
	n := 1
	if m&modShift != 0 {
		n++
	}
	if m&modAlt != 0 {
		n += 2
	}
	if m&modCtrl != 0 {
		n += 4
	}
	return n
}

func csiU(k apiKey, all bool) (string, bool) {
	if k.mods == 0 && !all && k.code != keyEsc {
		return "", false
	}
	var cp int
	switch k.code {
	case keyChar:
		cp = int(k.ch)
	case keyEnter:
		cp = 13
	case keyTab:
		cp = 9
	case keyBackspace:
		cp = 127
	case keyEsc:
		cp = 27
	default:
		return "", false // arrows and F-keys keep their xterm forms, as the kitty protocol has them
	}
	mod := xtermModifier(k.mods)
	if k.mods&modSuper != 0 {
		mod += 8
	}
	if k.mods&modHyper != 0 {
		mod += 16
	}
	if mod == 1 {
		return "\x1b[" + strconv.Itoa(cp) + "u", true
	}
	return "\x1b[" + strconv.Itoa(cp) + ";" + strconv.Itoa(mod) + "u", true
}

var cursorFinal = map[keyCode]byte{keyUp: 'A', keyDown: 'B', keyRight: 'C', keyLeft: 'D'}

func legacy(k apiKey) string {
	if m := xtermModifier(k.mods); m > 1 {
		if f, ok := cursorFinal[k.code]; ok {
			return "\x1b[1;" + strconv.Itoa(m) + string(f)
		}
		if k.code == keyF && k.fn >= 1 && k.fn <= 4 {
			return "\x1b[1;" + strconv.Itoa(m) + string(rune('P'+k.fn-1))
		}
		if k.code == keyF {
			if n, ok := fTilde(k.fn); ok {
				return "\x1b[" + strconv.Itoa(n) + ";" + strconv.Itoa(m) + "~"
			}
		}
	}
	if k.mods&modAlt != 0 {
		inner := k
		inner.mods &^= modAlt
		return "\x1b" + legacyInner(inner)
	}
	return legacyInner(k)
}

var fTildeCodes = map[int]int{5: 15, 6: 17, 7: 18, 8: 19, 9: 20, 10: 21, 11: 23, 12: 24}

func fTilde(n int) (int, bool) {
	c, ok := fTildeCodes[n]
	return c, ok
}

func legacyInner(k apiKey) string {
	switch k.code {
	case keyChar:
		if k.mods&modCtrl != 0 {
			return ctrlChar(k.ch)
		}
		if k.mods == modShift {
			if s, ok := shiftedText(k); ok {
				return s
			}
		}
		return string(k.ch)
	case keyEnter:
		return "\r"
	case keyBackspace:
		return "\x7f"
	case keyTab:
		return "\t"
	case keyBackTab:
		return "\x1b[Z"
	case keyEsc:
		return "\x1b"
	case keyLeft, keyRight, keyUp, keyDown:
		return "\x1b[" + string(cursorFinal[k.code])
	case keyF:
		if k.fn >= 1 && k.fn <= 4 {
			return "\x1bO" + string(rune('P'+k.fn-1))
		}
		if n, ok := fTilde(k.fn); ok {
			return "\x1b[" + strconv.Itoa(n) + "~"
		}
	}
	return ""
}

func ctrlChar(ch rune) string {
	up := unicode.ToUpper(ch)
	switch {
	case up >= 'A' && up <= 'Z':
		return string(rune(up - 64))
	case strings.ContainsRune(" @2", ch):
		return "\x00"
	case strings.ContainsRune("[3", ch):
		return "\x1b"
	case strings.ContainsRune("\\4", ch):
		return "\x1c"
	case strings.ContainsRune("]5", ch):
		return "\x1d"
	case strings.ContainsRune("^6", ch):
		return "\x1e"
	case strings.ContainsRune("_/7-", ch):
		return "\x1f"
	}
	return string([]byte{byte(ch)}) // Herdr writes the character truncated to a byte

}
