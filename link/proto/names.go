package proto

import (
	"crypto/rand"
	"strings"

	"github.com/herdr-link/herdr-link/socket"
)

// Protocol is the protocol identifier every envelope and notice carries.
const Protocol = "herdr-link/1"

// ValidName reports whether s is an Agent Name: ^[a-z][a-z0-9_-]{0,31}$,
// the grammar Herdr enforces for agent names.
func ValidName(s string) bool { return socket.ValidAgentName(s) }

// Names are unique per workspace; Herdr's are unique per server. A start
// whose name is free in the caller's workspace but that Herdr refuses
// (an agent of another workspace has it) gives the new agent an alias
// in Herdr: the name, aliasSep and 4 random hex digits. herdr-link knows
// an agent by its alias's name ([DisplayName]), so the start's answer and
// everything after it are those of a start whose name was free, and
// nothing tells the caller that the name lives elsewhere.
const (
	aliasSep = "__"
	// aliasLen is what an alias adds to a name.
	aliasLen = len(aliasSep) + 4
	// MaxStartName is the longest name a start takes: an alias of it is
	// still an agent name (at most 32 bytes).
	MaxStartName = 32 - aliasLen
)

// DisplayName is the name herdr-link knows an agent by, from the name
// Herdr holds: an alias (a valid name that ends in "__" and 4 lowercase
// hex digits, whose rest is a valid name without "__") stands for its
// rest; any other name is itself.
func DisplayName(herdr string) string {
	n := len(herdr) - aliasLen
	if n < 1 || herdr[n:n+len(aliasSep)] != aliasSep || !ValidName(herdr) {
		return herdr
	}
	for _, c := range []byte(herdr[n+len(aliasSep):]) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return herdr
		}
	}
	if rest := herdr[:n]; ValidStartName(rest) {
		return rest
	}
	return herdr
}

// ValidStartName reports whether a start takes name: an agent name of at
// most MaxStartName bytes without "__" (so that it is never taken for an
// alias, and its alias is an agent name).
func ValidStartName(name string) bool {
	return ValidName(name) && len(name) <= MaxStartName && !strings.Contains(name, aliasSep)
}

// NewAlias returns a fresh alias of name ([DisplayName] of it is name).
func NewAlias(name string) string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	const hex = "0123456789abcdef"
	return name + aliasSep + string([]byte{hex[b[0]>>4], hex[b[0]&15], hex[b[1]>>4], hex[b[1]&15]})
}
