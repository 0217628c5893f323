package outbox

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Spare files.
//
// Creating a file is most of what a store write costs where the store
// is on a disk: on ext4 without a journal (these machines' root) every
// new inode is searched for past the inodes freed in the last 30 s, so a
// create costs 0.1–0.7 ms on a busy machine, and every removal makes the
// next ones dearer. A rename or a write into an existing file costs tens
// of microseconds. So a long-running process (Store.Spares) keeps a few
// spare files of its own, hidden (".spare-<owner>-<random>", never a
// record's name): a file it
// would remove (a message typed, the old file of an ended message, a
// request record forgotten or evicted) becomes a spare instead, and a
// new record is written into a spare under its exclusive flock, then
// renamed into place, as a temporary file would be: a reader still sees
// a whole record under a record's name or none. A spare is only written
// under its flock, and only this process takes its own spares.
//
// A reader that opened a record's file just before it became a spare may
// read, through that descriptor, the next record written into it (or a
// part of it): readers therefore take a record's content as the entry's
// only when its id and acceptance time are the entry's, and a message
// file whose names no longer lead to it once read is not found (what was
// read may begin as the entry's record and end as the next one's), as is
// one that could not be read, rather than damaged (recycled). Spares of
// a process that is gone are removed by Prune.

const (
	sparePrefix = ".spare-"
	// maxSpares bounds a process's spares; below spareLow a background
	// goroutine creates them up to spareFill (off the path of the write
	// that took the last ones).
	maxSpares = 16
	spareLow  = 4
	spareFill = 8
	// maxSpareBytes: a larger file is removed rather than kept as a spare.
	maxSpareBytes = 64 << 10
)

// recycle removes the file name from the store's listing: renamed to a
// spare of this process while it has fewer than maxSpares, else removed.
// It returns what os.Remove would (fs.ErrNotExist when name is gone).
func (s *Store) recycle(name string) error {
	p := filepath.Join(s.Dir, name)
	s.mu.Lock()
	tok, room := s.token, len(s.spares) < maxSpares
	s.mu.Unlock()
	if tok == "" || !room || !s.Spares {
		return os.Remove(p)
	}
	if st, err := os.Lstat(p); err == nil && (st.Size() > maxSpareBytes || !ownFile(st)) {
		return os.Remove(p) // a long message's, or not a file of the store's own
	}
	spare := spareName(tok)
	if err := os.Rename(p, filepath.Join(s.Dir, spare)); err != nil {
		return err
	}
	s.mu.Lock()
	if s.token == tok {
		s.spares = append(s.spares, spare)
		spare = ""
	}
	s.mu.Unlock()
	if spare != "" {
		os.Remove(filepath.Join(s.Dir, spare)) // released meanwhile
	}
	return nil
}

// writeNew stores b as file name atomically: written to a spare or a
// temporary file, then renamed into place (a reader sees all of it or
// nothing).
func (s *Store) writeNew(name string, b []byte) error {
	if s.writeSpare(name, b) {
		return nil
	}
	f, err := os.CreateTemp(s.Dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(b)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("outbox: write: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(s.Dir, name)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("outbox: %w", err)
	}
	return nil
}

// writeSpare writes b into one of this process's spares and renames it
// to name; false when it has none usable (the caller creates a file).
func (s *Store) writeSpare(name string, b []byte) bool {
	for {
		s.mu.Lock()
		s.refill()
		n := len(s.spares)
		if n == 0 {
			s.mu.Unlock()
			return false
		}
		spare := s.spares[n-1]
		s.spares = s.spares[:n-1]
		s.mu.Unlock()
		p := filepath.Join(s.Dir, spare)
		if s.fillSpare(p, b) && os.Rename(p, filepath.Join(s.Dir, name)) == nil {
			return true
		}
		os.Remove(p)
	}
}

// refill starts the creation of spares in the background when this
// process has an owner token and fewer than spareLow (the caller holds
// s.mu).
func (s *Store) refill() {
	if !s.Spares || s.token == "" || s.refilling || len(s.spares) >= spareLow {
		return
	}
	s.refilling = true
	go s.createSpares(s.token)
}

// createSpares creates spares of owner tok up to spareFill; it stops
// when tok is no longer this process's (Release).
func (s *Store) createSpares(tok string) {
	for {
		s.mu.Lock()
		if s.token != tok || len(s.spares) >= spareFill {
			s.refilling = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		name := spareName(tok)
		p := filepath.Join(s.Dir, name)
		done := s.changing()
		err := s.createSpare(p)
		s.mu.Lock()
		if err != nil || s.token != tok {
			s.refilling = false
			s.mu.Unlock()
			done()
			os.Remove(p)
			return
		}
		s.spares = append(s.spares, name)
		if s.x != nil {
			// The move changed the directory: a journal line says so
			// (a drop of a name no index has), or every process's next
			// look would take it for a change nobody described and list
			// the whole store again.
			s.changed([]string{name})
		}
		s.mu.Unlock()
		done()
	}
}

// createSpare creates the empty spare p: in the lock directory (the
// store's parent), then moved into the store. A file's inode is taken
// from its directory's block group, and on these machines (ext4 without
// a journal) a create in a store's directory cost 350–650 µs while
// stores of other sockets were made and removed, against 40–130 µs in
// the lock directory. A stray left there by a crash before the move is
// removed by Prune (pruneStores).
func (s *Store) createSpare(p string) error {
	base := filepath.Dir(s.Dir)
	tmp := filepath.Join(base, strayPrefix+filepath.Base(s.Dir)+filepath.Base(p))
	if err := createEmpty(tmp); err == nil {
		if err := os.Rename(tmp, p); err == nil {
			return nil
		}
		os.Remove(tmp)
	}
	return createEmpty(p)
}

// strayPrefix begins the name of a spare being created in the lock
// directory.
const strayPrefix = ".spare-of-"

func createEmpty(p string) error {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL|openSafe, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

func spareName(tok string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return sparePrefix + tok + "-" + hex.EncodeToString(b[:])
}

// fillSpare replaces the content of spare p by b under its exclusive
// flock (a reader of the record it was may still hold it: it is not
// waited for, the spare is dropped); false, the spare dropped, for one
// that is not a file of the store's own (ownFile).
func (s *Store) fillSpare(p string, b []byte) bool {
	f, err := os.OpenFile(p, os.O_RDWR|openSafe, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !ownFile(st) {
		return false
	}
	if lockExclusive(f, false) != nil {
		return false
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		return false
	}
	return f.Truncate(int64(len(b))) == nil
}

// ownFile reports whether st is a file only the store leads to: a
// regular file under one name (one hard-linked into the store, written
// as a spare, would overwrite the file outside that it also is).
func ownFile(st fs.FileInfo) bool { return st.Mode().IsRegular() && linkCount(st) == 1 }

// dropSpares removes this process's spares and returns their names (the
// caller holds s.mu).
func (s *Store) dropSpares() []string {
	gone := s.spares
	for _, n := range gone {
		os.Remove(filepath.Join(s.Dir, n))
	}
	s.spares = nil
	return gone
}

// spareOwner is the owner token of spare file name ("" when name is not
// a spare's).
func spareOwner(name string) string {
	rest, ok := strings.CutPrefix(name, sparePrefix)
	if !ok {
		return ""
	}
	tok, _, ok := strings.Cut(rest, "-")
	if !ok {
		return ""
	}
	return tok
}

// removed reports whether err from recycle or os.Remove means the file was
// removed or was not there.
func removed(err error) bool { return err == nil || errors.Is(err, fs.ErrNotExist) }

// isRecord reports whether the content read through f is the record of
// entry e, whose id and acceptance time it must have (a file that was
// recycled into a spare may hold another record by now).
func isRecord(id string, seq int64, e Entry) bool { return id == e.ID && seq == e.Seq }

// moved reports whether e's name no longer leads to the file f (it was
// removed, renamed or recycled since f was opened).
func (s *Store) moved(f *os.File, e Entry) bool {
	st, err := f.Stat()
	if err != nil {
		return true
	}
	cur, err := os.Lstat(filepath.Join(s.Dir, e.name))
	return err != nil || !os.SameFile(st, cur)
}

// recycled reports whether the message file f, opened as e's, is now
// under none of the names it has while it is e's (a held file is claimed
// and unclaimed in place): it became a spare, and what was read through
// it may be another record's in part. A message file is read in several
// reads past 512 bytes, so one rewritten between them shows e's id and
// acceptance time from its first bytes and another record's after them.
func (s *Store) recycled(f *os.File, e Entry) bool {
	if !s.moved(f, e) {
		return false
	}
	if !e.Held() {
		return true
	}
	other := e
	other.State = StateHeld + StateTyping - e.State
	other.name = fileName(e.Seq, e.Target, e.Sender, e.Owner, e.ID, other.State)
	return s.moved(f, other)
}

// unreadable is the error of a file f whose content could not be e's
// record: ErrNotFound when e's name no longer leads to f (it was
// recycled, and is being written, since it was opened), else the file
// is set aside as damaged.
func (s *Store) unreadable(f *os.File, e Entry, why string) error {
	if s.moved(f, e) {
		return ErrNotFound
	}
	return s.damaged(e, why)
}
