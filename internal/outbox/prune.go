package outbox

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Prune removes ended records older than EndedTTL, temporary files left
// by a crash mid-write, the owner files of processes that are gone, and
// the held or typing file of a message that also has an ended record (a
// crash between the two steps of End): that file is finished off before
// its ended record can expire, so that the message never shows held
// again.
func (s *Store) Prune(now time.Time) {
	d, err := os.ReadDir(s.Dir)
	if err != nil {
		return
	}
	ended := map[string]bool{}
	for _, de := range d {
		if e, ok := parseName(de.Name()); ok && e.State == StateEnded {
			ended[e.ID] = true
		}
	}
	for _, de := range d {
		name := de.Name()
		p := filepath.Join(s.Dir, name)
		switch {
		case strings.HasPrefix(name, ".tmp-"):
			if info, err := de.Info(); err == nil && now.Sub(info.ModTime()) > time.Minute {
				os.Remove(p)
			}
		case strings.HasPrefix(name, "owner."):
			tok := strings.TrimPrefix(name, "owner.")
			if !s.OwnerAlive(tok) {
				removeOwner(p)
			}
		default:
			e, ok := parseName(name)
			switch {
			case !ok:
			case e.Held() && ended[e.ID]:
				os.Remove(p)
			case e.State == StateEnded || e.State == StateAnswered:
				if info, err := de.Info(); err == nil && now.Sub(info.ModTime()) > EndedTTL {
					os.Remove(p)
				}
			}
		}
	}
}
