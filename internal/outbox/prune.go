package outbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
)

// Bounds of Prune.
const (
	// damagedTTL is how long a damaged file set aside stays for the
	// operator's listing.
	damagedTTL = 24 * time.Hour
	// legacyTTL: a store without a socket file (made by an older
	// herdr-link) whose owners are all gone is removed once it has not
	// changed for that long.
	legacyTTL = 24 * time.Hour
	// socketFile names the file of a store that holds its socket's path.
	socketFile = "socket"
)

// Prune removes ended records older than EndedTTL (of held messages and
// of requests), takes an older herdr-link's request record files into
// the ledger, and removes temporary files left
// by a crash mid-write, the owner files and spares of processes that are
// gone, and
// the held or typing file of a message that also has an ended record (a
// crash between the two steps of End): that file is finished off before
// its ended record can expire, so that the message never shows held
// again. It removes damaged files after damagedTTL, and (once
// [Store.NoteSocket] was called) the stores beside this one whose socket
// is gone and that no live process owns. The index is rebuilt from its
// listing.
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
	var gone []string
	var legacy []Entry
	for _, de := range d {
		name := de.Name()
		p := filepath.Join(s.Dir, name)
		old := func(ttl time.Duration) bool {
			info, err := de.Info()
			return err == nil && now.Sub(info.ModTime()) > ttl
		}
		switch {
		case strings.HasPrefix(name, ".tmp-"):
			if old(time.Minute) {
				os.Remove(p)
			}
		case strings.HasPrefix(name, sparePrefix):
			if tok := spareOwner(name); tok == "" || !s.OwnerAlive(tok) {
				os.Remove(p)
			}
		case strings.HasPrefix(name, "owner."):
			tok := strings.TrimPrefix(name, "owner.")
			if !s.OwnerAlive(tok) {
				removeOwner(p)
			}
		case strings.HasSuffix(name, damagedSuffix):
			if old(damagedTTL) {
				os.Remove(p)
			}
		default:
			e, ok := parseName(name)
			switch {
			case !ok:
			case e.Held() && ended[e.ID]:
				os.Remove(p)
				gone = append(gone, name)
			case e.IsRequest():
				legacy = append(legacy, e)
			case e.State == StateEnded:
				if old(EndedTTL) && removed(s.recycle(name)) {
					gone = append(gone, name)
				}
			}
		}
	}
	s.pruneLedger(now, legacy)
	s.mu.Lock()
	if len(gone) > 0 {
		s.changed(gone)
	}
	_ = s.rebuild()
	scopeOf := s.scopeOf
	s.mu.Unlock()
	if scopeOf != nil {
		s.pruneStores(now, scopeOf)
	}
}

// NoteSocket records the path of this store's Herdr socket in it, and
// lets Prune remove the stores beside it whose socket is gone: scopeOf
// gives a socket path's identity, as the scope given to [Open].
func (s *Store) NoteSocket(path string, scopeOf func(string) string) error {
	s.mu.Lock()
	s.scopeOf = scopeOf
	s.mu.Unlock()
	if b, err := readSmall(filepath.Join(s.Dir, socketFile)); err == nil && string(b) == path {
		return nil
	}
	return s.writeNew(socketFile, []byte(path))
}

// readSmall reads a small regular file of this user without following a
// link or waiting on a FIFO.
func readSmall(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|openSafe, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || !ownedByMe(st) || st.Size() > 64<<10 {
		return nil, errors.New("outbox: not a small regular file of this user")
	}
	return io.ReadAll(io.LimitReader(f, 64<<10))
}

// pruneStores removes the stores beside s whose socket (as their socket
// file names it) is gone or is another server's now, and that no live
// process owns: what they hold was for panes that are gone.
func (s *Store) pruneStores(now time.Time, scopeOf func(string) string) {
	base := filepath.Dir(s.Dir)
	d, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, de := range d {
		name := de.Name()
		if strings.HasPrefix(name, strayPrefix) {
			if info, err := de.Info(); err == nil && now.Sub(info.ModTime()) > time.Minute {
				os.Remove(filepath.Join(base, name)) // a spare whose creator died before moving it
			}
			continue
		}
		if name == filepath.Base(s.Dir) || !isStoreName(name) {
			continue
		}
		dir := filepath.Join(base, name)
		st, err := os.Lstat(dir)
		if err != nil || !st.IsDir() || !ownedByMe(st) {
			continue
		}
		if b, err := readSmall(filepath.Join(dir, socketFile)); err == nil {
			if dirName(scopeOf(string(b))) == name {
				continue // its socket is there, the same server's
			}
		} else if !errors.Is(err, fs.ErrNotExist) || now.Sub(st.ModTime()) < legacyTTL {
			continue
		}
		if ownedLive(dir) {
			continue
		}
		_ = os.RemoveAll(dir)
	}
}

// isStoreName reports whether name is a store directory's name.
func isStoreName(name string) bool {
	h, ok := strings.CutPrefix(name, "outbox-")
	return ok && len(h) == 16 && isHex(h)
}

// ownedLive reports whether a live process owns the store dir (holds one
// of its owner files); an unreadable store counts as owned.
func ownedLive(dir string) bool {
	d, err := os.ReadDir(dir)
	if err != nil {
		return true
	}
	for _, de := range d {
		if strings.HasPrefix(de.Name(), "owner.") && ownerHeld(filepath.Join(dir, de.Name())) {
			return true
		}
	}
	return false
}

// Forget removes an ended record (its sender has learned of it), and
// first any held or typing file of the same message that a crash between
// the two steps of End left: without its ended record, that file would
// show the message held again.
func (s *Store) Forget(e Entry) error {
	if e.State != StateEnded {
		return fmt.Errorf("outbox: forget of a message in state %c", e.State)
	}
	var gone []string
	defer func() { s.note(gone) }()
	for _, st := range []byte{StateHeld, StateTyping} {
		n := fileName(e.Seq, e.Target, e.Sender, e.Owner, e.ID, st)
		if err := os.Remove(filepath.Join(s.Dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("outbox: %w", err)
		}
		gone = append(gone, n)
	}
	if err := s.recycle(e.name); !removed(err) {
		return fmt.Errorf("outbox: %w", err)
	}
	gone = append(gone, e.name)
	return nil
}

// pruneLedger removes the records of requests that ended over EndedTTL
// ago, and takes the request record files of an older herdr-link
// (legacy) into the ledger, removing each once its record is there.
func (s *Store) pruneLedger(now time.Time, legacy []Entry) {
	var taken []string
	err := s.updateLedger(func() (string, error) {
		var b strings.Builder
		s.mu.Lock()
		for id, r := range s.lg.recs {
			if r.State == StateAnswered && now.Sub(r.Ended) > EndedTTL {
				b.WriteString("-" + id + "\n")
			}
		}
		s.mu.Unlock()
		for _, e := range legacy {
			r, err := s.legacyRecord(e)
			if err != nil {
				continue
			}
			s.mu.Lock()
			_, known := s.record(e.ID)
			s.mu.Unlock()
			if !known {
				l, err := addLine(r)
				if err != nil {
					continue // kept where it is: not in the ledger
				}
				b.WriteString(l)
			}
			taken = append(taken, e.name)
		}
		return b.String(), nil
	})
	if err != nil {
		return
	}
	for _, n := range taken {
		os.Remove(filepath.Join(s.Dir, n))
	}
}

// legacyRecord reads the request record file of e, written by an older
// herdr-link.
func (s *Store) legacyRecord(e Entry) (Request, error) {
	f, err := s.openEntry(e, os.O_RDONLY)
	if err != nil {
		return Request{}, err
	}
	defer f.Close()
	b, err := readBounded(f)
	if err != nil {
		return Request{}, err
	}
	var r Request
	if err := jsonx.Unmarshal(b, &r); err != nil || r.ID != e.ID || r.Seq != e.Seq {
		return Request{}, s.unreadable(f, e, "not a request record")
	}
	r.Owner, r.Target, r.Sender, r.State = e.Owner, e.Target, e.Sender, StatePending
	if r.Outcome != "" {
		r.State = StateAnswered // a crash came between its outcome and its rename
		if st, err := f.Stat(); err == nil && r.Ended.IsZero() {
			r.Ended = st.ModTime() // what the older herdr-link pruned it by
		}
	}
	r.name = fileName(e.Seq, e.Target, e.Sender, e.Owner, e.ID, r.State)
	return r, nil
}
