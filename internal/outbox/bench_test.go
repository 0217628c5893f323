package outbox

import (
	"fmt"
	"testing"
	"time"
)

// benchStore is a store holding n entries (held messages and pending
// requests, from 50 senders to 50 targets) besides two held messages
// from "me" to "busy" (what the benchmarks look up: the same whatever n),
// as process "a", with a second process's handle on it.
func benchStore(b *testing.B, n int) (a, other *Store) {
	b.Helper()
	a, err := Open(b.TempDir(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	a.MaxMessages, a.MaxPerTarget = 1<<20, 1<<20
	b.Cleanup(a.Release)
	for i := range 2 {
		m := Message{ID: fmt.Sprintf("mine%d", i), To: "busy", From: "me", TargetKey: "term_busy", FromKey: "term_me", Expires: t0.Add(time.Hour), Text: "hello"}
		if _, err := a.Add(m, t0); err != nil {
			b.Fatal(err)
		}
	}
	for i := range n {
		to, from := fmt.Sprintf("t%d", i%50), fmt.Sprintf("s%d", i%50)
		m := Message{ID: fmt.Sprintf("m%d", i), To: to, From: from, TargetKey: "term_" + to, FromKey: "term_" + from,
			Expires: t0.Add(time.Hour), Text: "a held message of about a hundred bytes, as a short request between agents is"}
		if i%2 == 0 {
			if _, err := a.Add(m, t0); err != nil {
				b.Fatal(err)
			}
			continue
		}
		if _, err := a.AddRequest(Request{ID: m.ID, To: to, From: from, TargetKey: m.TargetKey, FromKey: m.FromKey, Expires: m.Expires}, t0); err != nil {
			b.Fatal(err)
		}
	}
	other = &Store{Dir: a.Dir, scope: a.scope, MaxMessages: a.MaxMessages, MaxPerTarget: a.MaxPerTarget}
	b.Cleanup(other.Release)
	// Both have their index: what a running server has.
	if _, err := other.List(); err != nil {
		b.Fatal(err)
	}
	return a, other
}

// The store's three hot operations, each at 0, 100 and 1,000 entries:
// accepting a message (Add, then Done to keep the count), one sender's
// listing (herdr_link_peers' held and awaiting_reply), a target's next
// message (the courier). "after-change" runs the operation in a second
// process right after the first accepted and removed a message, so that
// it has the journal to read. Cost must stay flat as the entries grow:
// compare ns/op across the sizes of one run.
func BenchmarkStore(b *testing.B) {
	for _, n := range []int{0, 100, 1000} {
		b.Run(fmt.Sprintf("accept/entries=%d", n), func(b *testing.B) {
			s, _ := benchStore(b, n)
			m := Message{ID: "bench", To: "busy", From: "me", TargetKey: "term_busy", FromKey: "term_me", Expires: t0.Add(time.Hour), Text: "hello"}
			b.ReportAllocs()
			for b.Loop() {
				am, err := s.Add(m, t0)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Done(am); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n), "entries")
		})
		for _, after := range []bool{false, true} {
			suffix := ""
			if after {
				suffix = "/after-change"
			}
			for _, q := range []struct {
				name, key string
				query     func(s *Store, h string) error
			}{
				{"list-for-sender", "term_me", func(s *Store, h string) error { _, _, err := s.CountsForSender(h); return err }},
				{"next-for-target", "term_busy", func(s *Store, h string) error { _, _, err := s.NextForTarget(h); return err }},
			} {
				b.Run(fmt.Sprintf("%s/entries=%d%s", q.name, n, suffix), func(b *testing.B) {
					s, other := benchStore(b, n)
					h := s.KeyHash(q.key)
					m := Message{ID: "bench", To: "busy", From: "me", TargetKey: "term_busy", FromKey: "term_me", Expires: t0.Add(time.Hour), Text: "hello"}
					b.ReportAllocs()
					for b.Loop() {
						if after {
							b.StopTimer()
							am, _ := s.Add(m, t0)
							_ = s.Done(am)
							b.StartTimer()
						}
						if err := q.query(other, h); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(n), "entries")
				})
			}
		}
	}
}

// A request's life in the store as a direct send and the courier make
// it, with and without spare files (spare.go): its record (AddRequest,
// on the send's path: add-µs), its typing (MarkTyped), its outcome
// (EndRequest), the notice to its sender (Add, Claim, End as typed), and
// the request's record forgotten. Run it on the disk the store lives on
// (TMPDIR): on tmpfs a create is cheap anyway.
func BenchmarkRequestLife(b *testing.B) {
	for _, spares := range []bool{false, true} {
		b.Run(fmt.Sprintf("spares=%v", spares), func(b *testing.B) {
			s, err := Open(b.TempDir(), "bench")
			if err != nil {
				b.Fatal(err)
			}
			s.Spares = spares
			b.Cleanup(s.Release)
			var add time.Duration
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				i++
				t := time.Now()
				r, err := s.AddRequest(Request{ID: fmt.Sprintf("r%d", i), To: "busy", From: "me", TargetKey: "term_busy", FromKey: "term_me", Expires: t0.Add(time.Hour)}, t0)
				add += time.Since(t)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.MarkTyped(r.Entry(), t0, 1); err != nil {
					b.Fatal(err)
				}
				ended, _, err := s.EndRequest(r.Entry(), OutcomeHandled, t0, nil)
				if err != nil {
					b.Fatal(err)
				}
				n, err := s.Add(Message{ID: fmt.Sprintf("n%d", i), To: "me", From: "busy", TargetKey: "term_me", FromKey: "term_me", Expires: t0.Add(time.Hour), Text: "a notice", Notice: true}, t0)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Claim(&n); err != nil {
					b.Fatal(err)
				}
				if err := s.End(n, EndTyped, t0); err != nil {
					b.Fatal(err)
				}
				if err := s.ForgetRequest(ended); err != nil {
					b.Fatal(err)
				}
				if err := s.Forget(Entry{Seq: n.Seq, Target: n.Target, Sender: n.Sender, Owner: n.Owner, ID: n.ID, State: StateEnded, name: fileName(n.Seq, n.Target, n.Sender, n.Owner, n.ID, StateEnded)}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(add.Microseconds())/float64(i), "add-µs")
		})
	}
}
