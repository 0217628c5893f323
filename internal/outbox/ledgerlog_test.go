package outbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
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

// Processes ending the same requests at once: each request ends once,
// and its before function (the notice) runs once.
func TestLedgerEndsOnce(t *testing.T) {
	s := open(t)
	procs := []*Store{s, another(t, s), another(t, s)}
	const n = 20
	var reqs []Request
	for i := range n {
		reqs = append(reqs, addReq(t, s, fmt.Sprintf("r%d", i), "rev"))
	}
	var befores, ends [n]atomic.Int32
	var wg sync.WaitGroup
	for k, p := range procs {
		for g := range 2 {
			wg.Go(func() {
				for i, r := range reqs {
					before := func(Request) error { befores[i].Add(1); return nil }
					outcome := []string{OutcomeHandled, OutcomeReplied, OutcomeGone}[(k+g)%3]
					_, ended, err := p.EndRequest(r.Entry(), outcome, t0, before)
					if err != nil {
						t.Errorf("process %d: EndRequest(%s): %v", k, r.ID, err)
					}
					if ended {
						ends[i].Add(1)
					}
				}
			})
		}
	}
	wg.Wait()
	for i := range n {
		if b, e := befores[i].Load(), ends[i].Load(); b != 1 || e != 1 {
			t.Errorf("r%d: before ran %d times and it ended %d times, want 1 and 1", i, b, e)
		}
	}
}

// A writer killed mid-line leaves a line without its end: the next writer
// ends it first, the half line is skipped, and nothing after it is lost.
func TestLedgerUnfinishedLine(t *testing.T) {
	s := open(t)
	addReq(t, s, "a", "rev")
	f, err := os.OpenFile(filepath.Join(s.Dir, ledgerName), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`+00000000000000000001.abc {"id":"hal`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	o := another(t, s)
	addReq(t, o, "b", "coder")
	want := []string{"a/q typed=0 ", "b/q typed=0 "}
	for name, st := range map[string]*Store{"the writer": o, "the first process": s, "a new one": another(t, s)} {
		if got := records(t, st); !slices.Equal(got, want) {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
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

// A ledger grown past its bound is replaced by one of its live records,
// under writers of two processes: every process, following along or
// opening it afresh, shows the same records, and the file stays bounded.
func TestLedgerCompacted(t *testing.T) {
	a := open(t)
	procs := []*Store{a, another(t, a)}
	for _, p := range procs {
		p.ledgerMax, p.MaxMessages = 4<<10, 10_000
	}
	var wg sync.WaitGroup
	for k, p := range procs {
		for g := range 2 {
			wg.Go(func() {
				for i := range 60 {
					r, err := p.AddRequest(Request{ID: fmt.Sprintf("p%dg%dr%d", k, g, i), To: "rev", From: "brain", TargetKey: "term_rev", FromKey: "term_brain"}, t0)
					if err != nil {
						t.Error(err)
						return
					}
					switch i % 3 {
					case 0:
						if err := p.ForgetRequest(r); err != nil {
							t.Error(err)
						}
					case 1:
						if _, _, err := p.EndRequest(r.Entry(), OutcomeHandled, t0, nil); err != nil {
							t.Error(err)
						}
					}
				}
			})
		}
	}
	wg.Wait()
	want := records(t, another(t, a))
	if len(want) != 2*2*40 {
		t.Errorf("records after the run: got %d, want %d", len(want), 2*2*40)
	}
	for k, p := range procs {
		if got := records(t, p); !slices.Equal(got, want) {
			t.Errorf("process %d differs from a new one (-want +got):\n%s", k, cmp.Diff(want, got))
		}
	}
	st, err := os.Stat(filepath.Join(a.Dir, ledgerName))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > 3*a.lg.live+4<<10 {
		t.Errorf("ledger of %d bytes for %d bytes of live records: not compacted", st.Size(), a.lg.live)
	}
}

// The request record files of an older herdr-link are taken into the
// ledger by Prune, with their state, and removed.
func TestLegacyRecordFilesTakenIn(t *testing.T) {
	s := open(t)
	tok, err := s.Token()
	if err != nil {
		t.Fatal(err)
	}
	legacy := func(id string, seq int64, st byte, outcome string) string {
		r := Request{ID: id, Seq: seq, Accepted: t0, Expires: t0.Add(time.Hour), To: "rev", From: "brain", TargetKey: "term_rev", FromKey: "term_brain", Outcome: outcome}
		if outcome != "" {
			r.Ended = t0
		}
		name := fileName(seq, s.KeyHash("term_rev"), s.KeyHash("term_brain"), tok, id, st)
		b := fmt.Sprintf(`{"id":%q,"seq":%d,"accepted":%q,"expires":%q,"to":"rev","from":"brain","target_key":"term_rev","from_key":"term_brain","typed_seq":3,"outcome":%q}`,
			r.ID, r.Seq, t0.Format(time.RFC3339Nano), r.Expires.Format(time.RFC3339Nano), outcome)
		if err := os.WriteFile(filepath.Join(s.Dir, name), []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
		return name
	}
	files := []string{legacy("old1", 1, StatePending, ""), legacy("old2", 2, StateAnswered, "replied"), legacy("old3", 3, StatePending, "handled")}
	s.Prune(t0)
	want := []string{"old1/q typed=3 ", "old2/a typed=3 replied", "old3/a typed=3 handled"}
	for name, st := range map[string]*Store{"the pruner": s, "a new one": another(t, s)} {
		if got := records(t, st); !slices.Equal(got, want) {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
	for _, f := range files {
		if _, err := os.Lstat(filepath.Join(s.Dir, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("legacy file %s after Prune: got %v, want it removed", f, err)
		}
	}
	// Taken in once: a second Prune adds nothing.
	s.Prune(t0)
	if got := records(t, another(t, s)); !slices.Equal(got, want) {
		t.Errorf("after a second Prune: got %q, want %q", got, want)
	}
}

// Records that ended over EndedTTL ago are pruned; pending ones and those
// ended lately stay.
func TestLedgerPrunesEndedRecords(t *testing.T) {
	s := open(t)
	old, recent := addReq(t, s, "old", "rev"), addReq(t, s, "recent", "rev")
	addReq(t, s, "pending", "rev")
	if _, _, err := s.EndRequest(old.Entry(), OutcomeHandled, t0, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.EndRequest(recent.Entry(), OutcomeHandled, t0.Add(EndedTTL), nil); err != nil {
		t.Fatal(err)
	}
	s.Prune(t0.Add(EndedTTL + time.Minute))
	want := []string{"recent/a typed=0 handled", "pending/q typed=0 "}
	for name, st := range map[string]*Store{"the pruner": s, "a new one": another(t, s)} {
		if got := records(t, st); !slices.Equal(got, want) {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
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

// An older herdr-link's record that cannot be a ledger line (over its
// bound) stays where it is rather than being removed unrecorded.
func TestLegacyRecordTooLongKept(t *testing.T) {
	s := open(t)
	tok, err := s.Token()
	if err != nil {
		t.Fatal(err)
	}
	name := fileName(1, s.KeyHash("term_rev"), s.KeyHash("term_brain"), tok, "big", StatePending)
	body := fmt.Sprintf(`{"id":"big","seq":1,"to":"rev","from":%q}`, strings.Repeat("b", maxLedgerLine))
	if err := os.WriteFile(filepath.Join(s.Dir, name), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	s.Prune(t0)
	if _, err := os.Lstat(filepath.Join(s.Dir, name)); err != nil {
		t.Errorf("legacy file over the line bound after Prune: got %v, want it kept", err)
	}
}
