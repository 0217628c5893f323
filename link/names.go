package link

import (
	"crypto/rand"
	"encoding/binary"
	"github.com/herdr-link/herdr-link/socket"
	"strconv"
	"time"
)

// MaxIDLength bounds a message id.
const MaxIDLength = 128

// ValidName reports whether s is an Agent Name: ^[a-z][a-z0-9_-]{0,31}$,
// the grammar Herdr enforces for agent names.
func ValidName(s string) bool { return socket.ValidAgentName(s) }

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

// NewMessageID returns a fresh id: "hl_" + the time in milliseconds in base
// 36 + "_" + 8 random base-36 digits.
func NewMessageID(now time.Time) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	r := strconv.FormatUint(binary.LittleEndian.Uint64(b[:])%2821109907456, 36) // 36^8
	for len(r) < 8 {
		r = "0" + r
	}
	return "hl_" + strconv.FormatInt(now.UnixMilli(), 36) + "_" + r
}

// newSelfName returns "hl-" and 8 random hex digits, a valid Agent Name.
func newSelfName() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	const hex = "0123456789abcdef"
	out := []byte("hl-")
	for _, x := range b {
		out = append(out, hex[x>>4], hex[x&15])
	}
	return string(out)
}
