package outbox

import (
	"fmt"
	"github.com/google/go-cmp/cmp"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// view is what the index answers, for comparison with a listing.
type view struct {
	List      string
	ByTarget  map[string]string
	Next      map[string]string
	Held      map[string]map[string]int
	Awaiting  map[string]map[string][]string
	Pending   string
	Live      int
	HeldBytes int64
}

func viewOf(t *testing.T, s *Store) view {
	t.Helper()
	v := view{List: ids(list(t, s)), ByTarget: map[string]string{}, Next: map[string]string{},
		Held: map[string]map[string]int{}, Awaiting: map[string]map[string][]string{}}
	for _, to := range []string{"rev", "coder", "brain"} {
		h := s.KeyHash("term_" + to)
		ents, err := s.ListForTarget(h)
		if err != nil {
			t.Fatal(err)
		}
		v.ByTarget[to] = ids(ents)
		if e, ok, _ := s.NextForTarget(h); ok {
			v.Next[to] = e.ID
		}
		held, awaiting, err := s.CountsForSender(h)
		if err != nil {
			t.Fatal(err)
		}
		if held != nil {
			v.Held[to] = held
		}
		if awaiting != nil {
			v.Awaiting[to] = awaiting
		}
	}
	pending, err := s.PendingRequests()
	if err != nil {
		t.Fatal(err)
	}
	v.Pending = ids(pending)
	s.mu.Lock()
	v.Live, v.HeldBytes = len(s.x.live), s.x.bytes
	s.mu.Unlock()
	return v
}

// Two processes changing one store, in any interleaving, each answer
// from its index what a fresh listing of the directory shows: the
// journal carries every change, across a replaced journal too.
func TestIndexMatchesListing(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 1))
			a := open(t)
			procs := []*Store{a, another(t, a)}
			for _, p := range procs {
				p.journalMax = 2 << 10 // replaced a few times per run
			}
			names := []string{"rev", "coder", "brain"}
			for i := range 200 {
				s := procs[rng.IntN(2)]
				now := t0.Add(time.Duration(i) * time.Millisecond)
				id := fmt.Sprintf("m%d", rng.IntN(40))
				switch op := rng.IntN(7); op {
				case 0, 1:
					m := msg(id, names[rng.IntN(3)], names[rng.IntN(3)], "hello")
					if _, err := s.Find(id); err == nil {
						continue
					}
					_, _ = s.Add(m, now)
				case 2:
					if _, err := s.FindRequest(id); err == nil {
						continue
					}
					_, _ = s.AddRequest(Request{ID: id, To: "rev", From: names[rng.IntN(3)], TargetKey: "term_rev",
						FromKey: "term_" + names[rng.IntN(3)], Expires: now.Add(time.Hour)}, now)
				case 3:
					if e, err := s.Find(id); err == nil && e.State == StateHeld {
						if m, err := s.Read(e); err == nil {
							_ = s.Claim(&m)
							if rng.IntN(2) == 0 {
								_ = s.Done(m)
							} else {
								_ = s.Unclaim(&m)
							}
						}
					}
				case 4:
					if e, err := s.Find(id); err == nil {
						if e.State == StateEnded {
							_ = s.Forget(e)
						} else if m, err := s.Read(e); err == nil {
							_ = s.End(m, EndCancelled, now)
						}
					}
				case 5:
					if e, err := s.FindRequest(id); err == nil {
						if rng.IntN(2) == 0 {
							_, _, _ = s.EndRequest(e, OutcomeHandled, now, nil)
						} else if r, err := s.Request(e); err == nil {
							_ = s.ForgetRequest(r)
						}
					}
				case 6:
					// An operator's rm, behind every index's back.
					if e, err := s.Find(id); err == nil {
						os.Remove(filepath.Join(s.Dir, e.name))
						// The directory's time moves by a tick at most: wait
						// one out, as any later look would be.
						time.Sleep(5 * time.Millisecond)
					}
				}
				fresh := another(t, a)
				want := viewOf(t, fresh)
				for k, p := range procs {
					if got := viewOf(t, p); !reflect.DeepEqual(got, want) {
						t.Fatalf("step %d: process %d's index differs from a listing (-want +got):\n%s", i, k, cmp.Diff(want, got))
					}
				}
			}
		})
	}
}

// A journal line nobody can read (a writer killed mid-line) makes its
// readers list the directory, not trust it.
func TestJournalGarbageRelists(t *testing.T) {
	a := open(t)
	b := another(t, a)
	mustAdd(t, a, msg("m1", "rev", "brain", "x"), t0)
	if got := ids(list(t, b)); got != "m1/h" {
		t.Fatalf("List = %s", got)
	}
	f, err := os.OpenFile(filepath.Join(a.Dir, journalName), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "+garbage\n")
	f.Close()
	m2 := msg("m2", "rev", "brain", "y")
	// Written without a journal line, as an older herdr-link would.
	m2.Target, m2.Sender, m2.Owner, m2.State, m2.Seq = a.KeyHash(m2.TargetKey), a.KeyHash(m2.FromKey), "0123456789abcdef", StateHeld, t0.Add(time.Second).UnixNano()
	m2.name = fileName(m2.Seq, m2.Target, m2.Sender, m2.Owner, m2.ID, StateHeld)
	if _, err := a.write(m2.name, m2); err != nil {
		t.Fatal(err)
	}
	if got := ids(list(t, b)); got != "m1/h m2/h" {
		t.Fatalf("List after a garbled journal = %s, want m1/h m2/h", got)
	}
}

// listSorted is List's order, checked on its own: acceptance order
// whatever order the changes came in.
func TestListForTargetOrder(t *testing.T) {
	s := open(t)
	o := another(t, s)
	// Each process's clock runs forward; the two are interleaved.
	for i, at := range []int{1, 0, 2, 3} {
		p := []*Store{s, o}[i%2]
		mustAdd(t, p, msg(fmt.Sprintf("m%d", at), "rev", "brain", "x"), t0.Add(time.Duration(at)*time.Second))
	}
	ents, err := s.ListForTarget(s.KeyHash("term_rev"))
	if err != nil {
		t.Fatal(err)
	}
	got := ids(ents)
	if want := "m0/h m1/h m2/h m3/h"; got != want {
		t.Errorf("ListForTarget = %s, want %s", got, want)
	}
	e, ok, _ := o.NextForTarget(s.KeyHash("term_rev"))
	if !ok || e.ID != "m0" {
		t.Errorf("NextForTarget = %v %v, want m0", e.ID, ok)
	}
	if !slices.IsSortedFunc(list(t, o), byAcceptance) {
		t.Error("List not in acceptance order")
	}
}

// A journal line, whatever its bytes, is applied or refused (the index
// then listed again); an applied "+" line names an entry the index holds
// under that very name, a "-" line leaves none by that name.
func FuzzJournalLine(f *testing.F) {
	s := &Store{x: newIndex()}
	name := fileName(t0.UnixNano(), "0123456789abcdef", "0123456789abcdef", "0123456789abcdef", "m1", StateHeld)
	for _, l := range []string{"+" + name + " 12", "-" + name, "!", "+" + name, "+x 1", "+" + name + " -1", "", "-", "+" + name + " 99999999999999999999"} {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, l []byte) {
		ok := s.applyLine(l)
		if !ok || len(l) < 2 {
			return
		}
		n := string(l[1:])
		if l[0] == '+' {
			n, _, _ = strings.Cut(n, " ")
		}
		_, held := s.x.byName[n]
		if l[0] == '+' && !held || l[0] == '-' && held {
			t.Fatalf("applied %q: entry present %v", l, held)
		}
		if e, in := s.x.byName[n]; in && e.name != n {
			t.Fatalf("applied %q: indexed under %q", l, e.name)
		}
	})
}

// Writers of two processes at once (goroutines of each, a journal
// replaced under them): at the end each index shows what a listing does.
func TestIndexConcurrentWriters(t *testing.T) {
	a := open(t)
	procs := []*Store{a, another(t, a)}
	for _, p := range procs {
		p.journalMax, p.MaxPerTarget = 4<<10, 1000
	}
	var wg sync.WaitGroup
	for k, p := range procs {
		for g := range 3 {
			wg.Go(func() {
				for i := range 40 {
					id := fmt.Sprintf("p%dg%dm%d", k, g, i)
					m, err := p.Add(msg(id, []string{"rev", "coder"}[i%2], "brain", "x"), t0)
					if err != nil {
						t.Error(err)
						return
					}
					if i%3 == 0 {
						_ = p.Done(m)
					}
					_, _ = p.ListForTarget(m.Target)
				}
			})
		}
	}
	wg.Wait()
	want := viewOf(t, another(t, a))
	if n := strings.Count(want.List, "/h"); n != 2*3*40-2*3*14 {
		t.Errorf("%d held in the listing, want %d", n, 2*3*40-2*3*14)
	}
	for k, p := range procs {
		if got := viewOf(t, p); !reflect.DeepEqual(got, want) {
			t.Errorf("process %d's index differs from a listing (-want +got):\n%s", k, cmp.Diff(want, got))
		}
	}
}

// A look while this process's own change is between its file operation
// and its journal line does not list the directory again; with none in
// flight, an undescribed change of the directory does.
func TestLookDuringOwnChange(t *testing.T) {
	for _, tc := range []struct {
		name     string
		inFlight bool
		want     bool // listed again
	}{
		{"own change in flight", true, false},
		{"none in flight", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			mustAdd(t, s, msg("m1", "rev", "coder", "hi"), t0)
			list(t, s)
			if tc.inFlight {
				defer s.changing()()
			}
			if err := os.Chtimes(s.Dir, t0, t0); err != nil {
				t.Fatal(err)
			}
			built := s.built
			if got := ids(list(t, s)); got != "m1/h" {
				t.Errorf("list: got %q, want %q", got, "m1/h")
			}
			if got := !s.built.Equal(built); got != tc.want {
				t.Errorf("listed again: got %v, want %v", got, tc.want)
			}
		})
	}
}

// A journal replaced past its bound is replaced by one this process
// keeps, locked and appended to (not given up for a listing of the
// directory at the next look).
func TestJournalReplacedStaysOpen(t *testing.T) {
	s := open(t)
	mustAdd(t, s, msg("m", "rev", "brain", "x"), t0)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.tail(true); err != nil {
		t.Fatal(err)
	}
	if !s.replaceJournal() {
		t.Fatal("replaceJournal: got false, want the new journal in place")
	}
	defer unlock(s.j)
	cur, err := os.Stat(filepath.Join(s.Dir, journalName))
	if err != nil {
		t.Fatal(err)
	}
	if st, err := s.j.Stat(); err != nil || !os.SameFile(st, cur) {
		t.Errorf("journal open: got another file than the one in place (%v)", err)
	}
}
