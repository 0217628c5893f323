package link

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/herdr-link/herdr-link/internal/jsonx"
)

// Protocol is the protocol identifier every envelope carries.
const Protocol = "herdr-link/1"

// MaxMessageBytes bounds the message payload. Herdr reads at most 1 MiB per
// request line, after JSON escaping and with the wrapper around it; 256 KiB
// leaves room for the worst-case escaping of any text.
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
)

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
// Control characters in the message are escaped, so the line never
// contains a raw newline or escape byte.
func (e Envelope) Marshal() ([]byte, error) {
	return jsonx.Marshal(e)
}

// Wrap returns the self-describing text delivered into the recipient's
// pane: a few lines that say what this is and how to answer, then the
// envelope verbatim as the last line. The wrapper is transport only; it
// adds no field to the envelope.
func Wrap(e Envelope) (string, error) {
	line, err := e.Marshal()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[herdr-link/1] Message from agent %q, delivered by Herdr Link (not typed by your user).\n", e.From)
	b.WriteString("The JSON envelope on the last line is the message; its \"message\" field is what that agent wrote.\n")
	fmt.Fprintf(&b, "To reply: call the herdr_link tool with {} to activate Herdr Link, then send to %q with reply_to %q (herdr_link_send, or herdr_link with action \"send\").\n", e.From, e.ID)
	b.Write(line)
	return b.String(), nil
}

// Extract finds the envelope in delivered text: it scans lines from the
// bottom up and returns the last line that is a valid herdr-link/1
// envelope. Prose and other protocols' JSON are ignored.
func Extract(text string) (Envelope, bool) {
	for len(text) > 0 {
		i := strings.LastIndexByte(text, '\n')
		line := text[i+1:]
		if i < 0 {
			text = ""
		} else {
			text = text[:i]
		}
		t := bytes.TrimSpace([]byte(line))
		if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
			continue
		}
		var e Envelope
		if err := jsonx.Unmarshal(t, &e); err != nil {
			continue
		}
		if e.Validate() == nil {
			return e, true
		}
	}
	return Envelope{}, false
}
