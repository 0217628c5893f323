package outbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
)

// MaxRecordBytes bounds a store file before it is read: a held message's
// record is its text (at most 256 KiB, escaped as JSON at most 6 bytes a
// byte) and a few hundred bytes of fields.
const MaxRecordBytes = 2 << 20

// ErrDamaged: a store file could not be a record (a link, not a regular
// file, another user's, over MaxRecordBytes, not a record's JSON). It is
// set aside under its name with damagedSuffix, out of every listing but
// [Store.Damaged], and logged once.
var ErrDamaged = errors.New("outbox: damaged record")

// damagedSuffix ends the name of a damaged file set aside.
const damagedSuffix = ".damaged"

// openEntry opens e's file without following a link or waiting on a
// FIFO, and checks that it is a regular file of this user within
// MaxRecordBytes.
func (s *Store) openEntry(e Entry, flag int) (*os.File, error) {
	p := filepath.Join(s.Dir, e.name)
	f, err := os.OpenFile(p, flag|openSafe, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, ErrNotFound
	case err != nil:
		if st, lerr := os.Lstat(p); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, s.damaged(e, "a symbolic link")
		}
		return nil, fmt.Errorf("outbox: %w", err)
	}
	st, err := f.Stat()
	var why string
	switch {
	case err != nil:
		f.Close()
		return nil, fmt.Errorf("outbox: %w", err)
	case !st.Mode().IsRegular():
		why = "not a regular file (" + st.Mode().Type().String() + ")"
	case !ownedByMe(st):
		why = "owned by another user"
	case st.Size() > MaxRecordBytes:
		why = fmt.Sprintf("%d bytes, over the bound of %d", st.Size(), MaxRecordBytes)
	}
	if why != "" {
		f.Close()
		return nil, s.damaged(e, why)
	}
	return f, nil
}

// readMessage reads the message of entry e from its file f.
func (s *Store) readMessage(f *os.File, e Entry) (Message, error) {
	b, err := readBounded(f)
	if err != nil {
		return Message{}, s.unreadable(f, e, err.Error())
	}
	var m Message
	if err := jsonx.Unmarshal(b, &m); err != nil {
		return Message{}, s.unreadable(f, e, "not a record: "+err.Error())
	}
	if !isRecord(m.ID, m.Seq, e) && s.moved(f, e) || s.recycled(f, e) {
		return Message{}, ErrNotFound // recycled since it was opened
	}
	m.State, m.Owner, m.Target, m.Sender, m.name = e.State, e.Owner, e.Target, e.Sender, e.name
	return m, nil
}

// readBounded reads f whole, at most MaxRecordBytes (it may have grown
// since it was checked).
func readBounded(f *os.File) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(io.NewSectionReader(f, 0, MaxRecordBytes+1), MaxRecordBytes+1))
	switch {
	case err != nil:
		return nil, err
	case len(b) > MaxRecordBytes:
		return nil, fmt.Errorf("over the bound of %d bytes", MaxRecordBytes)
	}
	return b, nil
}

// damaged sets e's file aside as damaged, logs it (once: only the
// process whose rename succeeds does), and returns ErrDamaged with why.
func (s *Store) damaged(e Entry, why string) error {
	p := filepath.Join(s.Dir, e.name)
	err := os.Rename(p, p+damagedSuffix)
	s.note([]string{e.name})
	if err == nil && s.Log != nil {
		s.Log.Warn("outbox: damaged record set aside (herdr-link outbox lists it; 'herdr-link outbox cancel ID' removes it)",
			"id", e.ID, "state", string(e.State), "why", why, "path", p+damagedSuffix)
	}
	return fmt.Errorf("%w: %s (%c): %s", ErrDamaged, e.ID, e.State, why)
}

// Damaged is a damaged file set aside.
type Damaged struct {
	ID    string
	State byte // the state its name had
	// Accepted is the acceptance time its name shows.
	Accepted time.Time
	Size     int64
	// Modified is the file's modification time.
	Modified time.Time
	name     string
}

// Damaged lists the damaged files set aside, oldest name first. It lists
// the directory (for the operator's listing, not a hot path).
func (s *Store) Damaged() ([]Damaged, error) {
	d, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	var out []Damaged
	for _, de := range d {
		base, ok := strings.CutSuffix(de.Name(), damagedSuffix)
		e, eok := parseName(base)
		if !ok || !eok {
			continue
		}
		dm := Damaged{ID: e.ID, State: e.State, Accepted: time.Unix(0, e.Seq), name: de.Name()}
		if info, err := de.Info(); err == nil {
			dm.Size, dm.Modified = info.Size(), info.ModTime()
		}
		out = append(out, dm)
	}
	slices.SortFunc(out, func(a, b Damaged) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// RemoveDamaged removes the damaged files of message id (a link itself,
// never what it leads to); it returns how many.
func (s *Store) RemoveDamaged(id string) (int, error) {
	ds, err := s.Damaged()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range ds {
		if d.ID != id {
			continue
		}
		if err := os.Remove(filepath.Join(s.Dir, d.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return n, fmt.Errorf("outbox: %w", err)
		}
		n++
	}
	return n, nil
}
