package link

import "github.com/herdr-link/herdr-link/link/proto"

// Protocol is the protocol identifier every envelope carries.
const Protocol = proto.Protocol

// MaxMessageBytes bounds the message payload (UTF-8 bytes). The delivered
// request line has a second bound, [CheckDeliverable]: Herdr reads at most
// 1 MiB per request line, after two rounds of JSON escaping.
const MaxMessageBytes = proto.MaxMessageBytes

// Envelope is one herdr-link/1 message ([proto.Envelope]). Its JSON field
// order is protocol, id, from, to, reply_to (when set), message.
type Envelope = proto.Envelope

// Envelope validation errors.
var (
	ErrNotEnvelope   = proto.ErrNotEnvelope
	ErrBlankMessage  = proto.ErrBlankMessage
	ErrMessageTooBig = proto.ErrMessageTooBig
	ErrBadReplyTo    = proto.ErrBadReplyTo
	// ErrTooLargeToDeliver: the message fits MaxMessageBytes, but the
	// agent.prompt request line carrying it would not fit Herdr's 1 MiB.
	ErrTooLargeToDeliver = proto.ErrTooLargeToDeliver
)

// MaxIDLength bounds a message id.
const MaxIDLength = proto.MaxIDLength

// ValidMessageID reports whether s is a herdr-link/1 message id:
// "hl_<timestamp>_<random>", both parts non-empty lowercase letters and
// digits, at most MaxIDLength bytes.
func ValidMessageID(s string) bool { return proto.ValidMessageID(s) }

// Blank reports whether s has no non-whitespace character.
func Blank(s string) bool { return proto.Blank(s) }

// CheckMessage validates a message payload.
func CheckMessage(m string) error { return proto.CheckMessage(m) }

// MustEscape reports whether r is written as a \u escape in an envelope
// line: C0 controls, DEL, C1 controls (U+0080–U+009F, among them the 8-bit
// CSI U+009B), the bidirectional marks, embeddings, overrides and isolates
// (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), the invisible
// zero-width characters (U+200B–U+200D, U+2060, U+FEFF), the tag
// characters (U+E0000–U+E007F), the line and paragraph separators (U+2028,
// U+2029) and U+FFFD's cause, invalid UTF-8 (written as \ufffd).
func MustEscape(r rune) bool { return proto.MustEscape(r) }

// AppendJSONString appends s as a JSON string whose bytes are all
// printable: '"' and '\' are escaped, \n, \r and \t use their short forms,
// every other rune for which [MustEscape] holds is written \uXXXX (a
// UTF-16 surrogate pair, \udb40\udcXX, for the tag characters), and
// invalid UTF-8 becomes \ufffd. No HTML escaping.
func AppendJSONString(b []byte, s string) []byte { return proto.AppendJSONString(b, s) }

// Wrap returns the self-describing text delivered into the recipient's
// pane. It begins with a line break and ends with one, so the wrapper's
// first line and the envelope line are lines of their own even when the
// recipient glues the delivery to a draft or to another delivery. The
// envelope is one compact JSON line, the wrapper's last non-empty line.
// The wrapper is transport only; it adds no field to the envelope. Into
// a TUI that takes input raw the first line break is left out (see
// [TypedText]).
func Wrap(e Envelope) (string, error) { return proto.Wrap(e) }

// PromptLineBytes is the length of the agent.prompt request line (newline
// not counted) that delivers text to a pane id of at most 64 bytes.
func PromptLineBytes(text string) int { return proto.PromptLineBytes(text) }

// CheckDeliverable reports whether a message (with reply_to, possibly "")
// fits one agent.prompt request line whatever the sender's and the
// target's names: the wrapper is built with 32-byte names and the longest
// message id, escaped twice (in the envelope line, then in the request),
// and must not exceed Herdr's 1 MiB. It does not check anything else.
func CheckDeliverable(message, replyTo string) error { return proto.CheckDeliverable(message, replyTo) }

// Extract returns the last valid herdr-link/1 envelope in text (see
// [ExtractAll]).
func Extract(text string) (Envelope, bool) { return proto.Extract(text) }

// ExtractAll returns every valid herdr-link/1 envelope in text, in the
// order they appear. An envelope is a JSON object anywhere in the text,
// on one line or glued to other text on either side (a draft, another
// delivery, a closing tag, a space); it holds the literal string
// "herdr-link/1" as its protocol and passes [Envelope.Validate]. JSON
// objects that are not valid envelopes are skipped, and envelopes nested in
// them are still found. Prose, other protocols' JSON and malformed JSON
// are ignored. The scan is linear in the text for all practical inputs:
// object nesting is bounded (16 levels) and a match is never re-scanned.
func ExtractAll(text string) []Envelope { return proto.ExtractAll(text) }

// scanObject is [proto.ObjectEnd]: the end of the JSON object at text[i].
func scanObject(text string, i int) (int, bool) { return proto.ObjectEnd(text, i) }
