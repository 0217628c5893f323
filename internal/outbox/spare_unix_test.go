//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package outbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// withSpares is a store that keeps spare files, as a server's does, with
// its background creation of spares finished.
func withSpares(t *testing.T) *Store {
	t.Helper()
	s := open(t)
	s.Spares = true
	return s
}

// spareNames are the spare files in s's directory.
func spareNames(t *testing.T, s *Store) []string {
	t.Helper()
	var out []string
	for _, n := range dirNames(t, s) {
		if strings.HasPrefix(n, sparePrefix) {
			out = append(out, n)
		}
	}
	return out
}

// onlySpare leaves s with one spare, the file f (recycled), and no
// creation of others: the next write goes into f's file.
func onlySpare(t *testing.T, s *Store, f *os.File) {
	t.Helper()
	synctest.Wait() // spares created in the background
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Spares = false
	for _, n := range s.spares {
		if cur, err := os.Lstat(filepath.Join(s.Dir, n)); err == nil && os.SameFile(st, cur) {
			s.spares = []string{n}
			return
		}
	}
	t.Fatalf("the recycled file is not among the spares %q", s.spares)
}

// recycledFor adds message x, opens its file as a reader would, then
// has it typed (Done: its file becomes a spare) and adds message y,
// which the spare then holds: the reader's descriptor now reads y.
func recycledFor(t *testing.T, s *Store) (stale *os.File, x Entry, y Message) {
	t.Helper()
	xm := mustAdd(t, s, msg("x", "bob", "alice", "for bob"), t0)
	x = xm.entry(0)
	f, err := s.openEntry(x, os.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := s.Done(xm); err != nil {
		t.Fatal(err)
	}
	onlySpare(t, s, f)
	y = mustAdd(t, s, msg("y", "carol", "alice", "for carol, a longer text than x's"), t0.Add(time.Second))
	st, _ := f.Stat()
	cur, err := os.Lstat(filepath.Join(s.Dir, y.name))
	if err != nil || !os.SameFile(st, cur) {
		t.Fatalf("y was not written into x's old file (err %v)", err)
	}
	return f, x, y
}

func TestStaleReaderOfARecycledFile(t *testing.T) {
	t.Run("whole record of another message", func(t *testing.T) { synctest.Test(t, staleWhole) })
	t.Run("half-written record", func(t *testing.T) { synctest.Test(t, staleHalf) })
	t.Run("damage in place is still damage", func(t *testing.T) {
		s := withSpares(t)
		xm := mustAdd(t, s, msg("x", "bob", "alice", "for bob"), t0)
		rewriteFile(t, filepath.Join(s.Dir, xm.name), `{"id":"x","se`)
		if _, err := s.Read(xm.entry(0)); !errors.Is(err, ErrDamaged) {
			t.Fatalf("read of a damaged record: got %v, want ErrDamaged", err)
		}
	})
}

func staleWhole(t *testing.T) {
	s := withSpares(t)
	f, x, y := recycledFor(t, s)
	m, err := s.readMessage(f, x)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("read of x through its old file: got %q, %v, want ErrNotFound", m.ID, err)
	}
	if got, err := s.Read(y.entry(0)); err != nil || got.Text != y.Text {
		t.Errorf("y: got %q, %v, want %q", got.Text, err, y.Text)
	}
}

func staleHalf(t *testing.T) {
	s := withSpares(t)
	f, x, y := recycledFor(t, s)
	rewriteFile(t, filepath.Join(s.Dir, y.name), `{"id":"y","se`) // what a reader may see mid-write
	if _, err := s.readMessage(f, x); !errors.Is(err, ErrNotFound) {
		t.Fatalf("read of x through its old file mid-write: got %v, want ErrNotFound", err)
	}
	if d, _ := s.Damaged(); len(d) != 0 {
		t.Errorf("set aside as damaged: got %d files, want 0", len(d))
	}
	if _, err := os.Lstat(filepath.Join(s.Dir, y.name)); err != nil {
		t.Errorf("y's file: got %v, want it in place", err)
	}
}

func TestSparesNeverListedAndPrunedWithTheirOwner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := withSpares(t)
		m := mustAdd(t, s, msg("m", "bob", "alice", "hi"), t0)
		synctest.Wait() // the spares created in the background
		if err := s.Done(m); err != nil {
			t.Fatal(err)
		}
		if n := len(spareNames(t, s)); n == 0 {
			t.Fatalf("spares: got none, want the typed message's file and those created")
		}
		// A crash while a spare is written leaves it half written: still
		// nothing to list.
		rewriteFile(t, filepath.Join(s.Dir, spareNames(t, s)[0]), `{"id":"z","se`)
		o := another(t, s)
		if ents, err := o.List(); err != nil || len(ents) != 0 {
			t.Fatalf("listing: got %v, %v, want nothing", ids(ents), err)
		}
		o.Prune(t0)
		if n := len(spareNames(t, s)); n == 0 {
			t.Errorf("prune with the owner alive: got no spares, want them kept")
		}
		// The owner dies without releasing (its owner file's lock is gone).
		s.mu.Lock()
		s.alive.Close()
		s.alive = nil
		s.mu.Unlock()
		o.Prune(t0)
		if got := spareNames(t, s); len(got) != 0 {
			t.Errorf("prune once the owner is gone: got %q, want no spares", got)
		}
	})
}

func TestReleaseRemovesSpares(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := withSpares(t)
		m := mustAdd(t, s, msg("m", "bob", "alice", "hi"), t0)
		if err := s.Done(m); err != nil {
			t.Fatal(err)
		}
		s.Release()
		synctest.Wait()
		if got := spareNames(t, s); len(got) != 0 {
			t.Errorf("after Release: got %q, want no spares", got)
		}
	})
}

func TestNoSparesWithoutTheOption(t *testing.T) {
	s := open(t)
	m := mustAdd(t, s, msg("m", "bob", "alice", "hi"), t0)
	if err := s.Done(m); err != nil {
		t.Fatal(err)
	}
	if got := spareNames(t, s); len(got) != 0 {
		t.Errorf("a store without Spares: got %q, want no spares", got)
	}
}

func TestSparesFromWhatIsRemoved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := withSpares(t)
		small := mustAdd(t, s, msg("small", "bob", "alice", "hi"), t0)
		big := mustAdd(t, s, msg("big", "bob", "alice", strings.Repeat("x", maxSpareBytes)), t0)
		if err := s.End(small, EndExpired, t0); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		s.mu.Lock()
		s.dropSpares()
		s.refilling = true // no creation: only what is removed may become a spare
		s.mu.Unlock()
		ended, err := s.Find("small")
		if err != nil {
			t.Fatal(err)
		}
		endedFile, err := os.Lstat(filepath.Join(s.Dir, ended.name))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Done(big); err != nil {
			t.Fatal(err)
		}
		age(t, s, "small", EndedTTL+time.Minute)
		s.Prune(time.Now()) // the ended record expired
		if _, err := s.Find("small"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("expired record: got %v, want ErrNotFound", err)
		}
		got := spareNames(t, s)
		if len(got) != 1 {
			t.Fatalf("spares: got %q, want the expired record's file only (not the long message's)", got)
		}
		if st, err := os.Lstat(filepath.Join(s.Dir, got[0])); err != nil || !os.SameFile(st, endedFile) {
			t.Errorf("spare: got another file (%v), want the expired record's", err)
		}
	})
}

// Spares are created in the lock directory and moved into the store;
// one a crash left there before its move is removed by Prune after a
// minute (a fresh one may be on its way).
func TestSpareCreatedBesideTheStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := withSpares(t)
		mustAdd(t, s, msg("m", "bob", "alice", "hi"), t0)
		synctest.Wait()
		if n := len(spareNames(t, s)); n != spareFill {
			t.Fatalf("spares: got %d, want %d", n, spareFill)
		}
		base := filepath.Dir(s.Dir)
		var fresh, old string
		for i, n := range []*string{&fresh, &old} {
			*n = filepath.Join(base, strayPrefix+filepath.Base(s.Dir)+spareName("dead")+string(rune('a'+i)))
			if err := createEmpty(*n); err != nil {
				t.Fatal(err)
			}
		}
		past := time.Now().Add(-2 * time.Minute)
		if err := os.Chtimes(old, past, past); err != nil {
			t.Fatal(err)
		}
		if err := s.NoteSocket(filepath.Join(t.TempDir(), "sock"), func(p string) string { return p }); err != nil {
			t.Fatal(err)
		}
		s.Prune(time.Now())
		if _, err := os.Lstat(old); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a stray of two minutes: got %v, want it removed", err)
		}
		if _, err := os.Lstat(fresh); err != nil {
			t.Errorf("a fresh stray: got %v, want it kept", err)
		}
		var left []string
		ents, _ := os.ReadDir(base)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), sparePrefix) && e.Name() != filepath.Base(fresh) {
				left = append(left, e.Name())
			}
		}
		if len(left) != 0 {
			t.Errorf("spares left in the lock directory: %q", left)
		}
	})
}

// A spare moved into the store changes its directory: the journal says
// so, and neither the owner nor another process lists the store again
// at its next look.
func TestSpareCreationJournaled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := withSpares(t)
		o := another(t, s)
		mustAdd(t, s, msg("m", "bob", "alice", "hi"), t0)
		list(t, o)
		synctest.Wait() // the spares created in the background
		if n := len(spareNames(t, s)); n != spareFill {
			t.Fatalf("spares: got %d, want %d", n, spareFill)
		}
		own, other := s.x, o.x
		if got := ids(list(t, s)) + " " + ids(list(t, o)); got != "m/h m/h" {
			t.Errorf("listings: got %q, want %q", got, "m/h m/h")
		}
		if s.x != own || o.x != other {
			t.Errorf("listed the directory again: owner %v, other %v; want neither", s.x != own, o.x != other)
		}
	})
}

// A reader of a long record reads it in several reads: one whose file
// was recycled and written between them has the id and acceptance time
// of the record it opened, and the rest of the next one. It is not
// taken for the record it opened.
func TestStaleReaderOfARecycledFileBetweenReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := withSpares(t)
		long := func(c string) string { return strings.Repeat(c, 700) }
		xm := mustAdd(t, s, msg("x", "bob", "alice", long("a")), t0)
		x := xm.entry(0)
		f, err := s.openEntry(x, os.O_RDONLY)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		first := make([]byte, 512) // the reader's first read
		if _, err := f.ReadAt(first, 0); err != nil {
			t.Fatal(err)
		}
		if err := s.Done(xm); err != nil {
			t.Fatal(err)
		}
		onlySpare(t, s, f)
		y := mustAdd(t, s, msg("y", "bob", "alice", long("b")), t0.Add(time.Second))
		yp := filepath.Join(s.Dir, y.name)
		yb, err := os.ReadFile(yp)
		if err != nil {
			t.Fatal(err)
		}
		// What the reader has after its second read, the file now y's.
		rewriteFile(t, yp, string(first)+string(yb[len(first):]))
		if m, err := s.readMessage(f, x); !errors.Is(err, ErrNotFound) {
			t.Fatalf("read of x through its old file across a rewrite: got %q with %d of y's bytes, %v; want ErrNotFound",
				m.ID, strings.Count(m.Text, "b"), err)
		}
	})
}

// A held file claimed (or unclaimed) since it was opened is the same
// record under its other name: still read.
func TestReaderOfAClaimedFile(t *testing.T) {
	s := open(t)
	m := mustAdd(t, s, msg("m", "bob", "alice", "hi"), t0)
	f, err := s.openEntry(m.entry(0), os.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	claimed := m
	if err := s.Claim(&claimed); err != nil {
		t.Fatal(err)
	}
	if got, err := s.readMessage(f, m.entry(0)); err != nil || got.Text != "hi" {
		t.Fatalf("read of a file claimed since it was opened: got %q, %v; want %q", got.Text, err, "hi")
	}
}

// A file hard-linked into the store is never recycled: written through
// as a spare, it would overwrite the file outside the store that it is.
func TestHardLinkedFileNeverRecycled(t *testing.T) {
	t.Run("a record's name linked to a file outside", func(t *testing.T) { synctest.Test(t, linkedRecord) })
	t.Run("a spare linked from outside", func(t *testing.T) { synctest.Test(t, linkedSpare) })
}

func linkedRecord(t *testing.T) {
	s := withSpares(t)
	outside := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(outside, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := mustAdd(t, s, msg("m", "bob", "alice", "hi"), t0)
	p := filepath.Join(s.Dir, m.name)
	os.Remove(p)
	if err := os.Link(outside, p); err != nil {
		t.Fatal(err)
	}
	synctest.Wait()
	s.mu.Lock()
	s.dropSpares()
	s.refilling = true // no creation: only what is removed may become a spare
	s.mu.Unlock()
	if err := s.Done(m); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, s, msg("n", "bob", "alice", "a message written into a spare, if any"), t0)
	if b, err := os.ReadFile(outside); err != nil || string(b) != "precious" {
		t.Errorf("the file outside: got %q, %v, want %q", b, err, "precious")
	}
	if got := spareNames(t, s); len(got) != 0 {
		t.Errorf("spares: got %q, want none", got)
	}
	if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the link in the store: got %v, want it removed", err)
	}
}

func linkedSpare(t *testing.T) {
	s := withSpares(t)
	mustAdd(t, s, msg("m", "bob", "alice", "hi"), t0)
	synctest.Wait() // spares created in the background
	s.mu.Lock()
	next := filepath.Join(s.Dir, s.spares[len(s.spares)-1])
	s.mu.Unlock()
	outside := filepath.Join(t.TempDir(), "link")
	if err := os.Link(next, outside); err != nil {
		t.Fatal(err)
	}
	n := mustAdd(t, s, msg("n", "bob", "alice", "a message written into the next spare"), t0)
	if b, err := os.ReadFile(outside); err != nil || len(b) != 0 {
		t.Errorf("the file outside: got %q, %v, want it empty", b, err)
	}
	if _, err := os.Lstat(next); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the linked spare: got %v, want it removed from the store", err)
	}
	if got, err := s.Read(n.entry(0)); err != nil || got.Text != n.Text {
		t.Errorf("n: got %q, %v, want %q", got.Text, err, n.Text)
	}
}

// Release removes this process's spares and owner file: the journal says
// so, and another process does not list the store again at its next look.
func TestReleaseJournaled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := withSpares(t)
		o := another(t, s)
		mustAdd(t, s, msg("m", "bob", "alice", "hi"), t0)
		synctest.Wait() // the spares created in the background
		list(t, o)
		other := o.x
		s.Release()
		if got := spareNames(t, s); len(got) != 0 {
			t.Fatalf("after Release: got %q, want no spares", got)
		}
		if got := ids(list(t, o)); got != "m/h" {
			t.Errorf("listing: got %q, want %q", got, "m/h")
		}
		if o.x != other {
			t.Errorf("another process listed the directory again after a Release")
		}
	})
}
