package link

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link/proto"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
)

// Protocol is the protocol identifier every envelope carries.
const Protocol = proto.Protocol

// MaxMessageBytes bounds the message payload (UTF-8 bytes). The delivered
// request line has a second bound, [CheckDeliverable]: Herdr reads at most
// 1 MiB per request line, after two rounds of JSON escaping.
const MaxMessageBytes = 256 << 10

// Envelope is one herdr-link/1 message. Its JSON field order is protocol,
// id, from, to, reply_to (when set), message.
type Envelope struct {
	Protocol string `json:"protocol"`
	ID       string `json:"id"`
	From     string `json:"from"`
	To       string `json:"to"`
	ReplyTo  string `json:"reply_to,omitempty"`
	Message  string `json:"message"`
}

// Envelope validation errors.
var (
	ErrNotEnvelope   = errors.New("not a herdr-link/1 envelope")
	ErrBlankMessage  = errors.New("message is empty or only whitespace")
	ErrMessageTooBig = fmt.Errorf("message is larger than %d bytes", MaxMessageBytes)
	ErrBadReplyTo    = errors.New("reply_to is not a herdr-link/1 message id")
	// ErrTooLargeToDeliver: the message fits MaxMessageBytes, but the
	// agent.prompt request line carrying it would not fit Herdr's 1 MiB.
	ErrTooLargeToDeliver = errors.New("message does not fit one Herdr request line once escaped")
)

// MaxIDLength bounds a message id.
const MaxIDLength = 128

func lowerAlnum(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// ValidMessageID reports whether s is a herdr-link/1 message id:
// "hl_<timestamp>_<random>", both parts non-empty lowercase letters and
// digits, at most MaxIDLength bytes.
func ValidMessageID(s string) bool {
	if len(s) > MaxIDLength || len(s) < 6 || s[:3] != "hl_" {
		return false
	}
	rest := s[3:]
	for i := 0; i < len(rest); i++ {
		if rest[i] == '_' {
			return lowerAlnum(rest[:i]) && lowerAlnum(rest[i+1:])
		}
	}
	return false
}

// Blank reports whether s has no non-whitespace character.
func Blank(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return !unicode.IsSpace(r) }) < 0
}

// CheckMessage validates a message payload.
func CheckMessage(m string) error {
	if len(m) > MaxMessageBytes {
		return ErrMessageTooBig
	}
	if Blank(m) {
		return ErrBlankMessage
	}
	return nil
}

// Validate checks every field of e.
func (e Envelope) Validate() error {
	switch {
	case e.Protocol != Protocol:
		return fmt.Errorf("%w: protocol %q", ErrNotEnvelope, e.Protocol)
	case !ValidMessageID(e.ID):
		return fmt.Errorf("%w: id %q", ErrNotEnvelope, e.ID)
	case !ValidName(e.From):
		return fmt.Errorf("%w: from %q", ErrNotEnvelope, e.From)
	case !ValidName(e.To):
		return fmt.Errorf("%w: to %q", ErrNotEnvelope, e.To)
	case e.ReplyTo != "" && !ValidMessageID(e.ReplyTo):
		return ErrBadReplyTo
	}
	return CheckMessage(e.Message)
}

// Marshal returns the envelope as one compact JSON line (no newline).
// Everything a terminal could interpret is escaped ([AppendJSONString]),
// so the line holds only printable characters.
func (e Envelope) Marshal() ([]byte, error) {
	b := make([]byte, 0, len(e.Message)+len(e.ID)+len(e.ReplyTo)+len(e.From)+len(e.To)+80)
	b = append(b, `{"protocol":`...)
	b = AppendJSONString(b, e.Protocol)
	b = append(b, `,"id":`...)
	b = AppendJSONString(b, e.ID)
	b = append(b, `,"from":`...)
	b = AppendJSONString(b, e.From)
	b = append(b, `,"to":`...)
	b = AppendJSONString(b, e.To)
	if e.ReplyTo != "" {
		b = append(b, `,"reply_to":`...)
		b = AppendJSONString(b, e.ReplyTo)
	}
	b = append(b, `,"message":`...)
	b = AppendJSONString(b, e.Message)
	return append(b, '}'), nil
}

// MustEscape reports whether r is written as a \u escape in an envelope
// line: C0 controls, DEL, C1 controls (U+0080–U+009F, among them the 8-bit
// CSI U+009B), the bidirectional marks, embeddings, overrides and isolates
// (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), the invisible
// zero-width characters (U+200B–U+200D, U+2060, U+FEFF), the tag
// characters (U+E0000–U+E007F), the line and paragraph separators (U+2028,
// U+2029) and U+FFFD's cause, invalid UTF-8 (written as \ufffd).
func MustEscape(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r >= 0x200b && r <= 0x200d, r == 0x2060, r == 0xfeff, r >= 0xe0000 && r <= 0xe007f:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// AppendJSONString appends s as a JSON string whose bytes are all
// printable: '"' and '\' are escaped, \n, \r and \t use their short forms,
// every other rune for which [MustEscape] holds is written \uXXXX (a
// UTF-16 surrogate pair, \udb40\udcXX, for the tag characters), and
// invalid UTF-8 becomes \ufffd. No HTML escaping.
func AppendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			i++
			continue
		}
		r, size := rune(c), 1
		if c >= 0x80 {
			r, size = utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				if !MustEscape(r) {
					i += size
					continue
				}
			}
		}
		b = append(b, s[start:i]...)
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			for _, u := range [2]rune{hi, lo} {
				b = append(b, '\\', 'u', hex[u>>12&15], hex[u>>8&15], hex[u>>4&15], hex[u&15])
			}
		default:
			b = append(b, '\\', 'u', hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Wrap returns the self-describing text delivered into the recipient's
// pane. It begins with a line break and ends with one, so the wrapper's
// first line and the envelope line are lines of their own even when the
// recipient glues the delivery to a draft or to another delivery. The
// envelope is one compact JSON line, the wrapper's last non-empty line.
// The wrapper is transport only; it adds no field to the envelope. Into
// a TUI that takes input raw the first line break is left out (see
// [TypedText]).
func Wrap(e Envelope) (string, error) {
	line, err := e.Marshal()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(len(line) + 400)
	fmt.Fprintf(&b, "\n[herdr-link/1] Message from agent %q, delivered by Herdr Link (not typed by your user).\n", e.From)
	b.WriteString("The JSON envelope below, the line that starts with {\"protocol\":\"herdr-link/1\", is the message; its \"message\" field is what that agent wrote.\n")
	fmt.Fprintf(&b, "To reply: call the herdr_link tool with {} to activate Herdr Link, then send to %q with reply_to %q (herdr_link_send, or herdr_link with action \"send\").\n", e.From, e.ID)
	b.Write(line)
	b.WriteByte('\n')
	return b.String(), nil
}

// Placeholders of the longest values a send can put into the wrapper:
// a 32-byte name and a message id with the longest time part NewMessageID
// can write (13 base-36 digits).
var (
	worstName   = strings.Repeat("z", 32)
	worstID     = "hl_" + strings.Repeat("z", 13) + "_" + strings.Repeat("z", 8)
	worstTarget = strings.Repeat("z", 64) // a pane id; Herdr's are far shorter
	// promptOverhead is the request line without its text: the longest id
	// the socket client writes and a 64-byte target.
	promptOverhead = func() int {
		b, err := jsonx.Marshal(struct {
			ID     string                   `json:"id"`
			Method string                   `json:"method"`
			Params schema.AgentPromptParams `json:"params"`
		}{"herdr-link:18446744073709551615", schema.MethodAgentPrompt, schema.AgentPromptParams{Target: worstTarget, Text: ""}})
		if err != nil {
			panic(err)
		}
		return len(b)
	}()
)

// PromptLineBytes is the length of the agent.prompt request line (newline
// not counted) that delivers text to a pane id of at most 64 bytes.
func PromptLineBytes(text string) int {
	b, err := jsonx.Marshal(text)
	if err != nil {
		return socket.MaxRequestBytes + 1
	}
	return promptOverhead - len(`""`) + len(b)
}

// CheckDeliverable reports whether a message (with reply_to, possibly "")
// fits one agent.prompt request line whatever the sender's and the
// target's names: the wrapper is built with 32-byte names and the longest
// message id, escaped twice (in the envelope line, then in the request),
// and must not exceed Herdr's 1 MiB. It does not check anything else.
func CheckDeliverable(message, replyTo string) error {
	text, err := Wrap(Envelope{Protocol: Protocol, ID: worstID, From: worstName, To: worstName, ReplyTo: replyTo, Message: message})
	if err != nil || PromptLineBytes(text) > socket.MaxRequestBytes {
		return ErrTooLargeToDeliver
	}
	return nil
}

var protocolValue = `"` + Protocol + `"`

// maxEnvelopeBytes bounds one envelope's JSON text when extracting.
const maxEnvelopeBytes = socket.MaxRequestBytes

// Extract returns the last valid herdr-link/1 envelope in text (see
// [ExtractAll]).
func Extract(text string) (Envelope, bool) {
	all := ExtractAll(text)
	if len(all) == 0 {
		return Envelope{}, false
	}
	return all[len(all)-1], true
}

// ExtractAll returns every valid herdr-link/1 envelope in text, in the
// order they appear. An envelope is a JSON object anywhere in the text,
// on one line or glued to other text on either side (a draft, another
// delivery, a closing tag, a space); it holds the literal string
// "herdr-link/1" as its protocol and passes [Envelope.Validate]. JSON
// objects that are not valid envelopes are skipped, and envelopes nested in
// them are still found. Prose, other protocols' JSON and malformed JSON
// are ignored. The scan is linear in the text for all practical inputs:
// object nesting is bounded (16 levels) and a match is never re-scanned.
func ExtractAll(text string) []Envelope {
	last := strings.LastIndex(text, protocolValue)
	if last < 0 {
		return nil
	}
	var out []Envelope
	for i := 0; i < last; {
		j := strings.IndexByte(text[i:last], '{')
		if j < 0 {
			break
		}
		s := i + j
		if end, ok := scanObject(text, s); ok && strings.Contains(text[s:end], protocolValue) {
			var e Envelope
			if jsonx.Unmarshal([]byte(text[s:end]), &e) == nil && e.Validate() == nil {
				out = append(out, e)
				i = end
				continue
			}
		}
		i = s + 1
	}
	return out
}

// scanObject checks that a JSON object starts at text[i] (which is '{')
// and returns the index just past it. Strings must not hold raw control
// characters, nesting is bounded, and the object must be shorter than
// maxEnvelopeBytes.
func scanObject(text string, i int) (int, bool) {
	sc := scanner{s: text, i: i, limit: min(len(text), i+maxEnvelopeBytes)}
	if !sc.object(0) {
		return 0, false
	}
	return sc.i, true
}

type scanner struct {
	s     string
	i     int
	limit int
}

const maxScanDepth = 16

func (sc *scanner) ws() {
	for sc.i < sc.limit {
		switch sc.s[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

func (sc *scanner) peek() byte {
	if sc.i < sc.limit {
		return sc.s[sc.i]
	}
	return 0
}

func (sc *scanner) object(depth int) bool {
	if depth >= maxScanDepth || sc.peek() != '{' {
		return false
	}
	sc.i++
	sc.ws()
	if sc.peek() == '}' {
		sc.i++
		return true
	}
	for {
		if !sc.str() {
			return false
		}
		sc.ws()
		if sc.peek() != ':' {
			return false
		}
		sc.i++
		sc.ws()
		if !sc.value(depth) {
			return false
		}
		sc.ws()
		switch sc.peek() {
		case ',':
			sc.i++
			sc.ws()
		case '}':
			sc.i++
			return true
		default:
			return false
		}
	}
}

func (sc *scanner) array(depth int) bool {
	if depth >= maxScanDepth {
		return false
	}
	sc.i++ // '['
	sc.ws()
	if sc.peek() == ']' {
		sc.i++
		return true
	}
	for {
		if !sc.value(depth) {
			return false
		}
		sc.ws()
		switch sc.peek() {
		case ',':
			sc.i++
			sc.ws()
		case ']':
			sc.i++
			return true
		default:
			return false
		}
	}
}

func (sc *scanner) value(depth int) bool {
	switch c := sc.peek(); {
	case c == '"':
		return sc.str()
	case c == '{':
		return sc.object(depth + 1)
	case c == '[':
		return sc.array(depth + 1)
	case c == 't':
		return sc.lit("true")
	case c == 'f':
		return sc.lit("false")
	case c == 'n':
		return sc.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		start := sc.i
		for sc.i < sc.limit && strings.IndexByte("+-.eE0123456789", sc.s[sc.i]) >= 0 {
			sc.i++
		}
		return sc.i > start
	}
	return false
}

func (sc *scanner) lit(w string) bool {
	if sc.limit-sc.i >= len(w) && sc.s[sc.i:sc.i+len(w)] == w {
		sc.i += len(w)
		return true
	}
	return false
}

// str scans a JSON string; escapes are checked loosely (the decoder that
// follows is the judge), raw control characters end the scan.
func (sc *scanner) str() bool {
	if sc.peek() != '"' {
		return false
	}
	sc.i++
	for sc.i < sc.limit {
		c := sc.s[sc.i]
		switch {
		case c == '"':
			sc.i++
			return true
		case c == '\\':
			sc.i += 2
		case c < 0x20:
			return false
		default:
			sc.i++
		}
	}
	return false
}
