package outbox

import (
	"fmt"
	"strconv"
	"strings"
)

func fileName(seq int64, target, sender, owner, id string, state byte) string {
	return fmt.Sprintf("%020d.%s.%s.%s.%s.%c", seq, target, sender, owner, id, state)
}

// parseName parses a message file's name; ok is false for anything else.
func parseName(name string) (Entry, bool) {
	parts := strings.Split(name, ".")
	if len(parts) != 6 || len(parts[0]) != 20 || len(parts[5]) != 1 {
		return Entry{}, false
	}
	// Digits only: ParseInt alone would take a sign ("+000…1"), and the
	// name would then not be the one fileName gives its fields.
	if !isDigits(parts[0]) {
		return Entry{}, false
	}
	seq, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return Entry{}, false
	}
	for _, h := range parts[1:4] {
		if len(h) != 16 || !isHex(h) {
			return Entry{}, false
		}
	}
	st := parts[5][0]
	if !strings.ContainsRune(states, rune(st)) || !validID(parts[4]) {
		return Entry{}, false
	}
	return Entry{Seq: seq, Target: parts[1], Sender: parts[2], Owner: parts[3], ID: parts[4], State: st, name: name}, true
}

// MaxIDLength bounds a message id in a file name (names stay well under
// the 255 bytes of common file systems).
const MaxIDLength = 128

// validID reports whether id can stand in a file name: 1 to MaxIDLength
// ASCII letters, digits, '_' and '-' (never '.', '/' or a byte a file
// system could refuse). Add refuses any other id: its file could not be
// listed.
func validID(id string) bool {
	if id == "" || len(id) > MaxIDLength {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// states are the state letters of file names.
const states = "htqae"

// Held reports whether e is a message waiting or being typed.
func (e Entry) Held() bool { return e.State == StateHeld || e.State == StateTyping }

// Pending reports whether e is a request still waiting for its outcome.
func (e Entry) Pending() bool { return e.State == StatePending }

// IsRequest reports whether e is a request record (pending or ended).
func (e Entry) IsRequest() bool { return e.State == StatePending || e.State == StateAnswered }

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
