package outbox

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
)

// Token returns this process's owner token, creating and locking its
// owner file on first use.
func (s *Store) Token() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != "" {
		return s.token, nil
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	tok := hex.EncodeToString(b[:])
	path := filepath.Join(s.Dir, "owner."+tok)
	f, err := holdOwner(path)
	if err != nil {
		return "", err
	}
	s.token, s.alive, s.ownPath = tok, f, path
	return tok, nil
}

// Release gives up this process's ownership: its held messages are then
// delivered by any other process serving the same Herdr (and by this
// one, as orphans), and closes the journal. Tests call it to play a
// crash. The removal of its spares and owner file is journaled (drops of
// names no index has), or every other process's next look would take it
// for a change nobody described and list the whole store again.
func (s *Store) Release() {
	s.lmu.Lock() // before s.mu, as a ledger update takes them
	defer s.lmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.closeLedger()
	gone := s.dropSpares()
	if s.alive != nil {
		s.alive.Close()
		_ = os.Remove(s.ownPath)
		gone = append(gone, filepath.Base(s.ownPath))
		s.alive, s.token, s.ownPath = nil, "", ""
	}
	if s.j != nil && s.x != nil && len(gone) > 0 {
		s.changed(gone)
	}
	if s.j != nil {
		// The index goes with it; a later look lists the directory again.
		s.j.Close()
		s.j, s.x = nil, nil
	}
}

// OwnerAlive reports whether the process of owner token tok still runs.
func (s *Store) OwnerAlive(tok string) bool {
	s.mu.Lock()
	own := s.token
	s.mu.Unlock()
	if tok == own && own != "" {
		return true
	}
	return ownerHeld(filepath.Join(s.Dir, "owner."+tok))
}
