package outbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A crash between End's two steps (the ended record written, the held or
// typing file not yet removed) leaves both: the message is listed ended
// only, Prune finishes the removal, and once the ended record is pruned
// or forgotten the message does not show held again.
func TestEndCutShort(t *testing.T) {
	for _, state := range []byte{StateHeld, StateTyping} {
		for _, then := range []string{"prune", "forget", "prune-expired"} {
			t.Run(string(state)+" "+then, func(t *testing.T) {
				s := open(t)
				m := mustAdd(t, s, msg("m", "rev", "brain", "hello"), t0)
				mustAdd(t, s, msg("other", "rev", "brain", "x"), t0.Add(time.Second))
				// The message is also a request: its record is not a held
				// file, and nothing here removes it.
				if _, err := s.AddRequest(Request{ID: "m", To: "rev", From: "brain", TargetKey: "term_rev", FromKey: "term_brain", Expires: t0.Add(time.Hour)}, t0); err != nil {
					t.Fatal(err)
				}
				if state == StateTyping {
					if err := s.Claim(&m); err != nil {
						t.Fatal(err)
					}
				}
				// End's first step only.
				ended := m
				ended.End, ended.Ended, ended.Text = EndCancelled, t0, ""
				if _, err := s.write(fileName(m.Seq, m.Target, m.Sender, m.Owner, m.ID, StateEnded), ended); err != nil {
					t.Fatal(err)
				}
				if got := ids(list(t, s)); got != "m/e other/h m/q" {
					t.Fatalf("List = %s, want m ended only (and its request)", got)
				}
				if e, _ := s.Find("m"); e.State != StateEnded {
					t.Errorf("Find = %c", e.State)
				}
				switch then {
				case "prune":
					s.Prune(t0)
				case "prune-expired":
					age(t, s, "m", 2*EndedTTL)
					s.Prune(time.Now())
				case "forget":
					e, _ := s.Find("m")
					if err := s.Forget(e); err != nil {
						t.Fatal(err)
					}
				}
				want := map[string]string{"prune": "m/e other/h m/q", "prune-expired": "other/h m/q", "forget": "other/h m/q"}[then]
				if got := ids(list(t, s)); got != want {
					t.Errorf("after %s: List = %s, want %s", then, got, want)
				}
				if names := dirNames(t, s); slices.ContainsFunc(names, func(n string) bool {
					e, ok := parseName(n)
					return ok && e.ID == "m" && e.Held()
				}) {
					t.Errorf("after %s the %c file is still there: %q", then, state, names)
				}
			})
		}
	}
}

// age sets the modification time of every file of message id to d ago.
func age(t *testing.T, s *Store, id string, d time.Duration) {
	t.Helper()
	for _, n := range dirNames(t, s) {
		if e, ok := parseName(n); ok && e.ID == id {
			old := time.Now().Add(-d)
			if err := os.Chtimes(filepath.Join(s.Dir, n), old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func dirNames(t *testing.T, s *Store) []string {
	t.Helper()
	d, err := os.ReadDir(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range d {
		out = append(out, de.Name())
	}
	return out
}

// Prune removes temporary files older than a minute and ended records
// older than EndedTTL, nothing younger, and never a held message.
func TestPrune(t *testing.T) {
	tests := []struct {
		name  string
		file  string // "tmp", "ended", "held", "typing", "other"
		age   time.Duration
		gone  bool
		moved bool // the file was written in the future (clock stepped back)
	}{
		{name: "fresh tmp", file: "tmp", age: 10 * time.Second},
		{name: "old tmp", file: "tmp", age: 2 * time.Minute, gone: true},
		{name: "recent ended", file: "ended", age: EndedTTL - time.Minute},
		{name: "old ended", file: "ended", age: EndedTTL + time.Minute, gone: true},
		{name: "ended from the future", file: "ended", age: -time.Hour},
		{name: "old held", file: "held", age: 100 * EndedTTL},
		{name: "old typing", file: "typing", age: 100 * EndedTTL},
		{name: "foreign file", file: "other", age: 100 * EndedTTL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			m := mustAdd(t, s, msg("m", "rev", "brain", "x"), t0)
			var path string
			switch tt.file {
			case "tmp":
				f, err := os.CreateTemp(s.Dir, ".tmp-*")
				if err != nil {
					t.Fatal(err)
				}
				f.Close()
				path = f.Name()
			case "ended":
				if err := s.End(m, EndExpired, t0); err != nil {
					t.Fatal(err)
				}
				e, _ := s.Find("m")
				path = filepath.Join(s.Dir, e.name)
			case "typing":
				if err := s.Claim(&m); err != nil {
					t.Fatal(err)
				}
				path = filepath.Join(s.Dir, m.name)
			case "held":
				path = filepath.Join(s.Dir, m.name)
			case "other":
				path = filepath.Join(s.Dir, "README")
				if err := os.WriteFile(path, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			now := time.Now()
			old := now.Add(-tt.age)
			if err := os.Chtimes(path, old, old); err != nil {
				t.Fatal(err)
			}
			s.Prune(now)
			_, err := os.Stat(path)
			if gone := errors.Is(err, fs.ErrNotExist); gone != tt.gone {
				t.Errorf("%s aged %v: removed %v, want %v", tt.file, tt.age, gone, tt.gone)
			}
		})
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
