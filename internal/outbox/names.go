package outbox

import (
	"fmt"
	"os"
	"slices"
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
	seq, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil || seq < 0 {
		return Entry{}, false
	}
	for _, h := range parts[1:4] {
		if len(h) != 16 || !isHex(h) {
			return Entry{}, false
		}
	}
	st := parts[5][0]
	if st != StateHeld && st != StateTyping && st != StateEnded || parts[4] == "" {
		return Entry{}, false
	}
	return Entry{Seq: seq, Target: parts[1], Sender: parts[2], Owner: parts[3], ID: parts[4], State: st, name: name}, true
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// List returns every message's entry in acceptance order. An id found
// both ended and in another state (a crash between the two steps of
// ending it) is listed ended only.
func (s *Store) List() ([]Entry, error) {
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
	out = slices.DeleteFunc(out, func(e Entry) bool { return e.State != StateEnded && ended[e.ID] })
	slices.SortFunc(out, func(a, b Entry) int {
		if a.Seq != b.Seq {
			return cmpInt(a.Seq, b.Seq)
		}
		return strings.Compare(a.name, b.name)
	})
	return out, nil
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
