//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package outbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Prune removes the stores beside its own whose socket is gone or now
// another server's and that no live process owns; it keeps a store of a
// live socket, one a live process still owns, and (for a day) one made
// before stores named their socket.
func TestPruneStoresOfGoneSockets(t *testing.T) {
	base := t.TempDir()
	sockDir := t.TempDir()
	// A socket's identity is its path and whether it exists, here.
	scopeOf := func(p string) string {
		if _, err := os.Stat(p); err != nil {
			return "gone:" + p
		}
		return "sock:" + p
	}
	mkStore := func(t *testing.T, name string, live bool) (*Store, string) {
		t.Helper()
		sock := filepath.Join(sockDir, name)
		if live {
			if err := os.WriteFile(sock, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		s, err := Open(base, scopeOf(sock))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.NoteSocket(sock, scopeOf); err != nil {
			t.Fatal(err)
		}
		mustAdd(t, s, msg("m-"+name, "rev", "brain", "x"), t0)
		return s, sock
	}
	self, _ := mkStore(t, "self", true)
	defer self.Release()
	alive, _ := mkStore(t, "alive", true)
	alive.Release()
	gone, goneSock := mkStore(t, "gone", true)
	gone.Release()
	os.Remove(goneSock) // Herdr exited
	owned, ownedSock := mkStore(t, "owned", true)
	defer owned.Release()
	os.Remove(ownedSock)
	legacy, legacySock := mkStore(t, "legacy", true)
	legacy.Release()
	os.Remove(legacySock)
	os.Remove(filepath.Join(legacy.Dir, socketFile))
	oldLegacy, oldSock := mkStore(t, "old-legacy", true)
	oldLegacy.Release()
	os.Remove(oldSock)
	os.Remove(filepath.Join(oldLegacy.Dir, socketFile))
	old := time.Now().Add(-2 * legacyTTL)
	if err := os.Chtimes(oldLegacy.Dir, old, old); err != nil {
		t.Fatal(err)
	}

	self.Prune(time.Now())
	for _, c := range []struct {
		s    *Store
		kept bool
	}{{self, true}, {alive, true}, {gone, false}, {owned, true}, {legacy, true}, {oldLegacy, false}} {
		_, err := os.Stat(c.s.Dir)
		if kept := !errors.Is(err, fs.ErrNotExist); kept != c.kept {
			t.Errorf("%s: kept %v, want %v (%v)", c.s.Dir, kept, c.kept, err)
		}
	}
}
