package outbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

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
	s.renameLedger = func(string, string) error { return errors.New("sharing violation") }
	for i := range 20 {
		r := addReq(t, s, fmt.Sprintf("r%d", i), "rev")
		if err := s.ForgetRequest(r); err != nil {
			t.Fatalf("ForgetRequest(%s) past the ledger's bound: got %v, want nil", r.ID, err)
		}
	}
}
