package link

import (
	"crypto/rand"
	"encoding/binary"
	"strconv"
	"time"

	"github.com/herdr-link/herdr-link/link/proto"
)

// ValidName reports whether s is an Agent Name: ^[a-z][a-z0-9_-]{0,31}$,
// the grammar Herdr enforces for agent names.
func ValidName(s string) bool { return proto.ValidName(s) }

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

// MaxStartName is the longest name a start takes: an alias of it is
// still an agent name (at most 32 bytes). See [DisplayName].
const MaxStartName = proto.MaxStartName

// DisplayName is the name herdr-link knows an agent by, from the name
// Herdr holds: an alias (a valid name that ends in "__" and 4 lowercase
// hex digits, whose rest is a valid name without "__") stands for its
// rest; any other name is itself. Names are unique per workspace,
// Herdr's per server: a start whose name Herdr has in another workspace
// gives the new agent such an alias in Herdr.
func DisplayName(herdr string) string { return proto.DisplayName(herdr) }

// ValidStartName reports whether a start takes name: an agent name of at
// most MaxStartName bytes without "__" (so that it is never taken for an
// alias, and its alias is an agent name).
func ValidStartName(name string) bool { return proto.ValidStartName(name) }
