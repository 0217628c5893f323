package outbox

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
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

// List returns every entry (held messages and requests) in acceptance
// order. A message id found both ended and held or typing (a crash
// between the two steps of ending it) is listed ended only. The slice is
// shared: callers must not modify it.
func (s *Store) List() ([]Entry, error) {
	sn, err := s.snapshot()
	if err != nil {
		return nil, err
	}
	return sn.ents, nil
}

// BySender returns the entries whose sender hash is h, in acceptance
// order (shared, read-only).
func (s *Store) BySender(h string) ([]Entry, error) {
	sn, err := s.snapshot()
	if err != nil {
		return nil, err
	}
	return sn.bySender[h], nil
}

// snap is one listing of the store's directory, with its indexes.
type snap struct {
	mtime    time.Time
	taken    time.Time // when the listing was read
	ents     []Entry
	bySender map[string][]Entry
}

// cacheAfter is how long after the directory's last change a listing
// must have been taken to be reused while the directory's modification
// time stays the same: a change within the file system's timestamp
// granularity (a few milliseconds) of the listing could leave that time
// unchanged.
const cacheAfter = 50 * time.Millisecond

// snapshot lists the directory, or reuses the last listing when the
// directory has not changed since (its modification time is the same,
// and the listing was taken over cacheAfter after it). A large store costs
// a stat per call then.
func (s *Store) snapshot() (*snap, error) {
	st, err := os.Stat(s.Dir)
	if err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	mt := st.ModTime()
	s.mu.Lock()
	c := s.cache
	s.mu.Unlock()
	if c != nil && c.mtime.Equal(mt) && c.taken.Sub(mt) > cacheAfter {
		return c, nil
	}
	taken := time.Now()
	d, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	out := make([]Entry, 0, len(d))
	ended := map[string]bool{}
	for _, de := range d {
		e, ok := parseName(de.Name())
		if !ok {
			continue
		}
		if e.State == StateEnded {
			ended[e.ID] = true
		}
		out = append(out, e)
	}
	out = slices.DeleteFunc(out, func(e Entry) bool { return e.Held() && ended[e.ID] })
	slices.SortFunc(out, func(a, b Entry) int {
		if a.Seq != b.Seq {
			return cmpInt(a.Seq, b.Seq)
		}
		return strings.Compare(a.name, b.name)
	})
	sn := &snap{mtime: mt, taken: taken, ents: out, bySender: map[string][]Entry{}}
	for _, e := range out {
		sn.bySender[e.Sender] = append(sn.bySender[e.Sender], e)
	}
	s.mu.Lock()
	s.cache = sn
	s.mu.Unlock()
	return sn, nil
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
