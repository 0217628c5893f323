package outbox

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// updateLedger runs decide with the ledger read to its end, under its
// exclusive flock (and this process's ledger lock), and appends the
// lines decide returns. decide runs without s.mu (it may call the
// store): it reads the records through s.record under s.mu.
func (s *Store) updateLedger(decide func() (string, error)) error {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	if err := s.lockLedger(); err != nil {
		return err
	}
	// A compaction locks the new file in the old one's stead.
	defer func() {
		if s.lg.w != nil {
			unlock(s.lg.w)
		}
	}()
	lines, err := decide()
	if err != nil || lines == "" {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.compactLedger(); err != nil {
		return err
	}
	// Every writer holds the flock, and this process read the ledger to
	// its end under it: the lines land at the read offset, and are
	// applied as written (not read back).
	at := s.lg.off
	if _, err := s.lg.w.Write([]byte(lines)); err != nil {
		// A part of a line would join the next one: end it, so that it
		// reads as a line that cannot be read.
		_, _ = s.lg.w.Write([]byte(tornEnd))
		return fmt.Errorf("outbox: ledger: %w", err)
	}
	if at != s.lg.end {
		return s.readLedger()
	}
	s.applyLines([]byte(lines))
	s.lg.end = s.lg.off
	return nil
}

// lockLedger takes the exclusive flock of the current ledger file on the
// writers' descriptor (the caller holds s.lmu) and reads the ledger to
// its end. The file read is the current one (a "!" leads there), so the
// descriptor is reopened when it is another. A line left unfinished (a
// writer killed mid-line) is ended.
func (s *Store) lockLedger() error {
	for range 8 {
		if s.lg.w == nil {
			f, info, err := s.openLedgerFile()
			if err != nil {
				return err
			}
			s.lg.w, s.lg.wInfo = f, info
		}
		w := s.lg.w
		if err := lockWriter(w); err != nil {
			return fmt.Errorf("outbox: ledger: %w", err)
		}
		s.mu.Lock()
		err := s.fresh()
		current := false
		if err == nil {
			current, err = s.ledgerCurrent()
		}
		same := err == nil && current && os.SameFile(s.lg.rInfo, s.lg.wInfo)
		partial := same && s.lg.off < s.lg.end
		if partial {
			if _, err = w.Write([]byte(tornEnd)); err == nil {
				err = s.readLedger()
			}
		}
		s.mu.Unlock()
		switch {
		case err != nil:
			unlock(w)
			return err
		case same:
			return nil
		}
		unlock(w)
		w.Close()
		s.lg.w = nil
	}
	return errors.New("outbox: ledger: replaced over and over while locked")
}

// ledgerCurrent reports whether the writers' descriptor, locked and read
// to its end, is on the file at the ledger's path (the caller holds
// s.mu). It is not when its replacer was killed between its rename and
// the old file's "!" (or the ledger was removed): nobody reads that file
// again, so the reader, when it is there with no "!" to follow, moves to
// the file at the path.
func (s *Store) ledgerCurrent() (bool, error) {
	st, err := os.Lstat(s.ledgerPath())
	if err == nil && os.SameFile(st, s.lg.wInfo) {
		return true, nil
	}
	if os.SameFile(s.lg.rInfo, s.lg.wInfo) {
		f, info, err := s.openLedgerFile()
		if err != nil {
			return false, err
		}
		s.resetLedger(f, info)
		return false, s.readLedger()
	}
	return false, nil
}

// tornEnd ends a line left unfinished (a writer killed, or out of
// space, mid-line): the "#" makes its last field unreadable, so that a
// cut that reads as a whole line (an outcome line cut in its time, a
// typing line in its seq) is skipped too.
const tornEnd = "#\n"

// compactLedger replaces a ledger grown past its bound by one holding
// the live records (the caller holds s.mu, s.lmu and the flock, with the
// ledger read to its end). The new file takes the lock before it takes
// the name; the old one ends with "!".
func (s *Store) compactLedger() error {
	if s.lg.off <= max(cmpOr(s.ledgerMax, ledgerMax), s.lg.retry) || s.lg.off <= 2*s.lg.live {
		return nil
	}
	if err := s.replaceLedger(); err != nil {
		// The ledger is only left longer (on windows a rename over a
		// file this process holds open always fails): tried again once
		// it doubled, not at every write.
		s.lg.retry = 2 * s.lg.off
		return nil
	}
	return s.readLedger()
}

// replaceLedger is compactLedger's replacement; an error leaves the
// ledger as it was.
func (s *Store) replaceLedger() error {
	var b strings.Builder
	for _, r := range s.lg.recs {
		if l, err := addLine(*r); err == nil {
			b.WriteString(l)
		}
	}
	f, err := os.CreateTemp(s.Dir, ".tmp-ledger-*")
	if err != nil {
		return fmt.Errorf("outbox: ledger: %w", err)
	}
	tmp := f.Name()
	_, werr := f.WriteString(b.String())
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("outbox: ledger: %w", err)
	}
	// The new file is opened for appending and locked before it takes
	// the ledger's name (nobody else can know it yet), so it is never the
	// ledger unlocked; the old one then ends with "!".
	nf, err := os.OpenFile(tmp, os.O_RDWR|os.O_APPEND|openSafe, 0)
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("outbox: ledger: %w", err)
	}
	info, err := nf.Stat()
	if err == nil {
		err = lockJournal(nf, true, 1)
	}
	if err == nil {
		rename := os.Rename
		if s.renameLedger != nil {
			rename = s.renameLedger
		}
		err = rename(tmp, s.ledgerPath())
	}
	if err != nil {
		nf.Close()
		os.Remove(tmp)
		return fmt.Errorf("outbox: ledger: %w", err)
	}
	_, _ = s.lg.w.Write([]byte("!\n"))
	unlock(s.lg.w)
	s.lg.w.Close()
	s.lg.w, s.lg.wInfo = nf, info
	return nil
}

// closeLedger closes the ledger's descriptors and forgets its records
// (the caller holds s.lmu and s.mu): a later look reads it again.
func (s *Store) closeLedger() {
	for _, f := range []*os.File{s.lg.r, s.lg.w} {
		if f != nil {
			f.Close()
		}
	}
	if s.x != nil {
		for _, r := range s.lg.recs {
			s.x.drop(r.name)
		}
	}
	s.lg = ledger{}
}
