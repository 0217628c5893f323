package outbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A replacer killed after its new ledger took the name and before the
// old one's "!": a process whose writer descriptor is on the old file
// must not append there (nobody else would ever read it), and must not
// take the old file's flock for the ledger's.
func TestLedgerReplacerKilledBeforeItsBang(t *testing.T) {
	s := open(t)
	addReq(t, s, "a", "rev") // s's writer descriptor is on this ledger
	p := filepath.Join(s.Dir, ledgerName)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// The replacer's steps up to its death: the live records in a new
	// file, renamed over the ledger; no "!" in the old one.
	tmp := filepath.Join(s.Dir, ".tmp-ledger-dead")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	addReq(t, s, "b", "coder")
	want := []string{"a/q typed=0 ", "b/q typed=0 "}
	for name, st := range map[string]*Store{"the writer": s, "a new process": another(t, s)} {
		if got := records(t, st); !slices.Equal(got, want) {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
}

// A ledger's "!" read while the new ledger cannot be opened (a moment's
// EMFILE, say; here a link in its place): the next look, once it can be
// opened, reads the new ledger, not the old one's end for ever.
func TestLedgerReplacedNewOneUnopenable(t *testing.T) {
	s := open(t)
	a := addReq(t, s, "a", "rev")
	p := filepath.Join(s.Dir, ledgerName)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("!\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Rename(p, p+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(p+".old", p); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	err = s.fresh()
	s.mu.Unlock()
	if err == nil {
		t.Fatalf("a look with a link as the ledger: got no error, want one")
	}
	os.Remove(p)
	if err := os.WriteFile(p, []byte(mustLine(t, a)+fmt.Sprintf("t%s 1 9\n", a.ID)), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := records(t, s), []string{"a/q typed=9 "}; !slices.Equal(got, want) {
		t.Errorf("after the new ledger could be opened: got %q, want %q", got, want)
	}
	if _, err := s.AddRequest(Request{ID: "b", To: "rev", From: "brain", TargetKey: "term_rev", FromKey: "term_brain"}, t0); err != nil {
		t.Errorf("AddRequest after the new ledger could be opened: got %v, want nil", err)
	}
}

// A writer killed (or out of space) mid-line: the part it wrote, ended
// by the next writer, is skipped even when it reads as a whole line (an
// outcome line cut in its time, a typing line cut in its seq).
func TestLedgerTornLinePrefixSkipped(t *testing.T) {
	for _, tc := range []struct {
		name, torn string
		want       string
	}{
		{"outcome cut in its time", "e%s handled 17", "a/q typed=0 "},
		{"typing cut in its seq", "t%s 1733000000000000000 4", "a/q typed=0 "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			a := addReq(t, s, "a", "rev")
			f, err := os.OpenFile(filepath.Join(s.Dir, ledgerName), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fmt.Fprintf(f, tc.torn, a.ID); err != nil {
				t.Fatal(err)
			}
			f.Close()
			o := another(t, s)
			addReq(t, o, "b", "coder")
			want := []string{tc.want, "b/q typed=0 "}
			for name, st := range map[string]*Store{"the writer": o, "the first process": s, "a new one": another(t, s)} {
				if got := records(t, st); !slices.Equal(got, want) {
					t.Errorf("%s: got %q, want %q", name, got, want)
				}
			}
		})
	}
}

// A compaction that cannot be done (on windows, a rename over a file
// this process holds open always fails) must not fail the line's write:
// the ledger is only left longer.
func TestLedgerCompactionFailureKeepsWriting(t *testing.T) {
	s := open(t)
	s.ledgerMax = 1 << 10
	defer func(r func(string, string) error) { renameLedger = r }(renameLedger)
	renameLedger = func(string, string) error { return errors.New("sharing violation") }
	for i := range 20 {
		r := addReq(t, s, fmt.Sprintf("r%d", i), "rev")
		if err := s.ForgetRequest(r); err != nil {
			t.Fatalf("ForgetRequest(%s) past the ledger's bound: got %v, want nil", r.ID, err)
		}
	}
}
