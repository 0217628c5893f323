package outbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func addReq(t *testing.T, s *Store, id, to string) Request {
	t.Helper()
	r, err := s.AddRequest(Request{ID: id, To: to, From: "brain", TargetKey: "term_" + to, FromKey: "term_brain", Expires: t0.Add(time.Hour)}, t0)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// records is what a store shows of its requests: id, state, typed seq
// and outcome, in acceptance order.
func records(t *testing.T, s *Store) []string {
	t.Helper()
	var out []string
	for _, e := range list(t, s) {
		if !e.IsRequest() {
			continue
		}
		r, err := s.Request(e)
		if err != nil {
			t.Fatalf("Request(%s): %v", e.ID, err)
		}
		out = append(out, fmt.Sprintf("%s/%c typed=%d %s", r.ID, r.State, r.TypedSeq, r.Outcome))
	}
	return out
}

// One process records, another types and ends: every process, and one
// that opens the store afterwards, shows the same records.
func TestLedgerSharedBetweenProcesses(t *testing.T) {
	s := open(t)
	o := another(t, s)
	a, b := addReq(t, s, "a", "rev"), addReq(t, s, "b", "coder")
	ea, err := o.FindRequest("a")
	if err != nil {
		t.Fatalf("FindRequest in another process: %v", err)
	}
	if err := o.MarkTyped(ea, t0, 7); err != nil {
		t.Fatal(err)
	}
	if _, ended, err := o.EndRequest(b.Entry(), OutcomeReplied, t0.Add(time.Second), nil); err != nil || !ended {
		t.Fatalf("EndRequest in another process: got %v, %v, want ended", ended, err)
	}
	want := []string{"a/q typed=7 ", "b/a typed=0 replied"}
	for name, st := range map[string]*Store{"this process": s, "the other": o, "a new one": another(t, s)} {
		if got := records(t, st); !slices.Equal(got, want) {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
	if got, err := s.Request(a.Entry()); err != nil || !got.Typed.Equal(t0) || got.From != "brain" || got.Owner != a.Owner {
		t.Errorf("a as read back: got %+v, %v, want typed at t0, from brain, its owner", got, err)
	}
}

// Lines that cannot be read (another program's, a damaged disk) are
// skipped; the lines around them count.
func TestLedgerUnreadableLines(t *testing.T) {
	s := open(t)
	a := addReq(t, s, "a", "rev")
	junk := []string{
		"", "+", "+nonsense {}", "+" + a.name + " {not json", "t", "ta x y", "tzzz 1 2",
		"e" + a.ID, "e" + a.ID + "  5", "-", "?what", "+" + strings.Replace(a.name, ".q", ".h", 1) + " {}",
	}
	if err := os.WriteFile(filepath.Join(s.Dir, ledgerName), []byte(mustLine(t, a)+strings.Join(junk, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := records(t, another(t, s)), []string{"a/q typed=0 "}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func mustLine(t *testing.T, r Request) string {
	t.Helper()
	l, err := addLine(r)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// The ledger's reader takes any bytes: what it shows are records with
// the names their lines gave, never a panic.
func FuzzLedger(f *testing.F) {
	f.Add([]byte("+00000000000000000001.0123456789abcdef.0123456789abcdef.0123456789abcdef.x.q {\"id\":\"x\",\"seq\":1}\nex handled 5\n"))
	f.Add([]byte("tx 1 2\n-x\n!\n"))
	f.Add([]byte("+a b\n\n\n+"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ledgerName), b, 0o600); err != nil {
			t.Fatal(err)
		}
		s := &Store{Dir: dir}
		s.mu.Lock()
		err := s.fresh()
		s.mu.Unlock()
		if s.lg.r != nil {
			defer s.lg.r.Close()
		}
		if err != nil {
			return
		}
		for id, r := range s.lg.recs {
			e, ok := parseName(r.name)
			if !ok || e.ID != id || r.ID != id || !e.IsRequest() || e.State != r.State {
				t.Fatalf("record %q: name %q, state %c", id, r.name, r.State)
			}
		}
	})
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

// A line longer than any the store writes (several read chunks, no end
// in sight for a while) is skipped to its end; the lines after it count.
func TestLedgerOverlongLineSkipped(t *testing.T) {
	s := open(t)
	a := addReq(t, s, "a", "rev")
	long := "+" + strings.Repeat("x", 3*ledgerChunk+17) + "\n"
	if err := os.WriteFile(filepath.Join(s.Dir, ledgerName), []byte(long+mustLine(t, a)), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := records(t, another(t, s)), []string{"a/q typed=0 "}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A process that only reads finds a ledger replaced without its "!"
// (the replacer killed between its rename and its "!") within
// rebuildEvery, and reads the new one.
func TestLedgerReaderFindsAReplacementWithoutBang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := open(t)
		a := addReq(t, s, "a", "rev")
		o := another(t, s)
		if got := records(t, o); len(got) != 1 {
			t.Fatalf("reader before: got %q, want a", got)
		}
		b := a
		b.ID, b.Seq = "b", a.Seq+1
		b.name = fileName(b.Seq, b.Target, b.Sender, b.Owner, b.ID, StatePending)
		tmp := filepath.Join(s.Dir, ".tmp-ledger-test")
		if err := os.WriteFile(tmp, []byte(mustLine(t, a)+mustLine(t, b)), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(s.Dir, ledgerName)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(rebuildEvery + time.Second)
		if got, want := records(t, o), []string{"a/q typed=0 ", "b/q typed=0 "}; !slices.Equal(got, want) {
			t.Errorf("reader after rebuildEvery: got %q, want %q", got, want)
		}
	})
}
