package outbox

import (
	"errors"
	"github.com/google/go-cmp/cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// t0 is the tests' clock: every time is t0 plus an offset, never the
// wall clock.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// open opens the store of scope "sim" in a fresh private base directory.
func open(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.TempDir(), "sim")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Release)
	return s
}

// another is a second process's handle on the same store.
func another(t *testing.T, s *Store) *Store {
	t.Helper()
	o := &Store{Dir: s.Dir, scope: s.scope, MaxPerTarget: s.MaxPerTarget, MaxMessages: s.MaxMessages, MaxBytes: s.MaxBytes}
	t.Cleanup(o.Release)
	return o
}

func msg(id, to, from, text string) Message {
	return Message{ID: id, To: to, From: from, TargetKey: "term_" + to, FromKey: "term_" + from,
		PaneID: "w1:p-" + to, Expires: t0.Add(time.Hour), Text: text}
}

func mustAdd(t *testing.T, s *Store, m Message, now time.Time) Message {
	t.Helper()
	m, err := s.Add(m, now)
	if err != nil {
		t.Fatalf("add %s: %v", m.ID, err)
	}
	return m
}

func ids(ents []Entry) string {
	var out []string
	for _, e := range ents {
		out = append(out, e.ID+"/"+string(e.State))
	}
	return strings.Join(out, " ")
}

func list(t *testing.T, s *Store) []Entry {
	t.Helper()
	ents, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	return ents
}

// forTarget is the ids of the entries of one target, in List order.
func forTarget(s *Store, ents []Entry, key string) string {
	h := s.KeyHash(key)
	return ids(slices.DeleteFunc(slices.Clone(ents), func(e Entry) bool { return e.Target != h }))
}

// List gives acceptance order (seq) across processes and senders: FIFO
// per target whoever sent; a clock that steps back within one process
// still gives later seqs.
func TestAddListOrder(t *testing.T) {
	type add struct {
		proc     int // 0 or 1: which process accepts it
		id       string
		to, from string
		at       time.Duration // offset from t0 of the acceptance
	}
	tests := []struct {
		name    string
		adds    []add
		want    string            // List
		targets map[string]string // per target key
	}{
		{name: "one sender", adds: []add{{0, "a", "rev", "brain", 1}, {0, "b", "rev", "brain", 2}, {0, "c", "rev", "brain", 3}},
			want: "a/h b/h c/h"},
		{name: "senders interleaved across processes",
			adds: []add{{0, "a", "rev", "brain", 10}, {1, "b", "rev", "tester", 20}, {0, "c", "rev", "brain", 30}, {1, "d", "coder", "tester", 25}},
			want: "a/h b/h d/h c/h", targets: map[string]string{"term_rev": "a/h b/h c/h", "term_coder": "d/h"}},
		{name: "same instant in one process",
			adds: []add{{0, "a", "rev", "brain", 5}, {0, "b", "rev", "writer", 5}, {0, "c", "rev", "brain", 5}},
			want: "a/h b/h c/h"},
		{name: "clock stepped back",
			adds: []add{{0, "a", "rev", "brain", time.Minute}, {0, "b", "rev", "brain", 0}},
			want: "a/h b/h"},
		{name: "acceptance order, not call order, across processes",
			adds: []add{{1, "late", "rev", "tester", time.Second}, {0, "early", "rev", "brain", time.Millisecond}},
			want: "early/h late/h"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			procs := []*Store{s, another(t, s)}
			for _, a := range tt.adds {
				mustAdd(t, procs[a.proc], msg(a.id, a.to, a.from, "text of "+a.id), t0.Add(a.at))
			}
			for _, p := range procs {
				ents := list(t, p)
				if got := ids(ents); got != tt.want {
					t.Errorf("List = %s, want %s", got, tt.want)
				}
				for key, want := range tt.targets {
					if got := forTarget(p, ents, key); got != want {
						t.Errorf("target %s: %s, want %s", key, got, want)
					}
				}
			}
		})
	}
}

// The bounds: per target, messages, bytes; ended records count for none
// of them; a full store says which bound it hit.
func TestCaps(t *testing.T) {
	tests := []struct {
		name         string
		perTarget    int
		messages     int
		bytes        int64
		before       []Message
		endFirst     bool // end the first message before adding
		add          Message
		wantTarget   bool
		wantLimit    int64 // 0: the add succeeds
		wantMessages int   // non-ended entries after
	}{
		{name: "under every bound", perTarget: 2, messages: 3, before: []Message{msg("a", "rev", "brain", "x")},
			add: msg("b", "rev", "brain", "y"), wantMessages: 2},
		{name: "target full", perTarget: 2, before: []Message{msg("a", "rev", "brain", "x"), msg("b", "rev", "tester", "x")},
			add: msg("c", "rev", "writer", "y"), wantTarget: true, wantLimit: 2, wantMessages: 2},
		{name: "target full, another target free", perTarget: 1, before: []Message{msg("a", "rev", "brain", "x")},
			add: msg("b", "coder", "brain", "y"), wantMessages: 2},
		{name: "store full", perTarget: 5, messages: 2, before: []Message{msg("a", "rev", "brain", "x"), msg("b", "coder", "brain", "x")},
			add: msg("c", "ops", "brain", "y"), wantLimit: 2, wantMessages: 2},
		{name: "bytes full", bytes: 400, before: []Message{msg("a", "rev", "brain", strings.Repeat("x", 100))},
			add: msg("b", "coder", "brain", strings.Repeat("y", 200)), wantLimit: 400, wantMessages: 1},
		{name: "one message over the bytes bound", bytes: 100,
			add: msg("a", "rev", "brain", strings.Repeat("y", 101)), wantLimit: 100},
		{name: "an ended record frees its place", perTarget: 1, before: []Message{msg("a", "rev", "brain", "x")}, endFirst: true,
			add: msg("b", "rev", "brain", "y"), wantMessages: 1},
		{name: "defaults when zero", before: []Message{msg("a", "rev", "brain", "x")},
			add: msg("b", "rev", "brain", "y"), wantMessages: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			s.MaxPerTarget, s.MaxMessages, s.MaxBytes = tt.perTarget, tt.messages, tt.bytes
			var first Message
			for i, m := range tt.before {
				m = mustAdd(t, s, m, t0.Add(time.Duration(i)))
				if i == 0 {
					first = m
				}
			}
			if tt.endFirst {
				if err := s.End(first, EndExpired, t0); err != nil {
					t.Fatal(err)
				}
			}
			_, err := s.Add(tt.add, t0.Add(time.Second))
			var full *FullError
			switch {
			case tt.wantLimit == 0 && err != nil:
				t.Fatalf("Add: %v", err)
			case tt.wantLimit != 0 && (!errors.As(err, &full) || !errors.Is(err, ErrFull)):
				t.Fatalf("Add: %v, want a *FullError that is ErrFull", err)
			case tt.wantLimit != 0 && (full.Target != tt.wantTarget || full.Limit != tt.wantLimit):
				t.Fatalf("Add: FullError target %v limit %d, want target %v limit %d", full.Target, full.Limit, tt.wantTarget, tt.wantLimit)
			}
			n := 0
			for _, e := range list(t, s) {
				if e.State != StateEnded {
					n++
				}
			}
			if n != tt.wantMessages {
				t.Errorf("%d messages held, want %d", n, tt.wantMessages)
			}
		})
	}
}

// An id that cannot stand in a file name is refused: its file could not
// be listed (the message would be lost) or would leave the directory.
func TestAddBadID(t *testing.T) {
	s := open(t)
	for _, id := range []string{"", "a.b", "../x", "a/b", "a b", strings.Repeat("x", MaxIDLength+1), "é"} {
		if _, err := s.Add(msg(id, "rev", "brain", "x"), t0); !errors.Is(err, ErrBadID) {
			t.Errorf("Add(id %q) = %v, want ErrBadID", id, err)
		}
	}
	if got := list(t, s); len(got) != 0 {
		t.Errorf("stored %s", ids(got))
	}
	mustAdd(t, s, msg(strings.Repeat("z", MaxIDLength), "rev", "brain", "x"), t0)
	mustAdd(t, s, msg("hl_mk3a_Z-9", "rev", "brain", "x"), t0)
	if got := ids(list(t, s)); got != strings.Repeat("z", MaxIDLength)+"/h hl_mk3a_Z-9/h" {
		t.Errorf("List = %s", got)
	}
}

// A message's record holds what Add was given; Read gives it back with
// its index fields.
func TestReadRoundTrip(t *testing.T) {
	s := open(t)
	in := msg("hl_1", "rev", "brain", "the text\n\"quoted\"")
	in.Kind, in.TerminalID, in.WorkspaceID, in.FromPane = "codex", "term_rev", "w1", "w1:p1"
	added := mustAdd(t, s, in, t0)
	e, err := s.Find("hl_1")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Read(e)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Accepted.Equal(t0) || got.Seq != t0.UnixNano() {
		t.Errorf("accepted %v seq %d", got.Accepted, got.Seq)
	}
	got.Accepted, added.Accepted = time.Time{}, time.Time{}
	if diff := cmp.Diff(added, got, cmp.AllowUnexported(Message{})); diff != "" {
		t.Errorf("Read mismatch (-Add +Read):\n%s", diff)
	}
	tok, _ := s.Token()
	type index struct {
		State                 byte
		Owner, Target, Sender string
	}
	want := index{StateHeld, tok, s.KeyHash("term_rev"), s.KeyHash("term_brain")}
	if diff := cmp.Diff(want, index{got.State, got.Owner, got.Target, got.Sender}); diff != "" {
		t.Errorf("index fields mismatch (-want +got):\n%s", diff)
	}
	if err := os.Remove(filepath.Join(s.Dir, e.name)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(e); !errors.Is(err, ErrNotFound) {
		t.Errorf("Read of a removed message: %v", err)
	}
}

// Claim, Unclaim, Done, End and Forget move a message through its states
// and refuse the moves that do not fit its state.
func TestLifecycle(t *testing.T) {
	tests := []struct {
		name  string
		steps []string // claim, unclaim, done, end, forget; a "!" prefix: must fail
		want  string   // the message's entries after
		end   string   // the ended record's End
	}{
		{name: "typed", steps: []string{"claim", "done"}, want: ""},
		{name: "refused before typing", steps: []string{"claim", "unclaim"}, want: "m/h"},
		{name: "claimed twice", steps: []string{"claim", "!claim"}, want: "m/t"},
		{name: "unclaim of held", steps: []string{"!unclaim"}, want: "m/h"},
		{name: "ended held", steps: []string{"end"}, want: "m/e", end: EndCancelled},
		{name: "ended while typing", steps: []string{"claim", "end"}, want: "m/e", end: EndCancelled},
		{name: "forgotten", steps: []string{"end", "forget"}, want: ""},
		{name: "forget of held", steps: []string{"!forget"}, want: "m/h"},
		{name: "done twice", steps: []string{"claim", "done", "done"}, want: ""},
		{name: "claim after it was typed", steps: []string{"claim", "done", "unclaim-stale", "!claim"}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			m := mustAdd(t, s, msg("m", "rev", "brain", "hello"), t0)
			for _, step := range tt.steps {
				fail := strings.HasPrefix(step, "!")
				var err error
				switch strings.TrimPrefix(step, "!") {
				case "claim":
					err = s.Claim(&m)
				case "unclaim":
					err = s.Unclaim(&m)
				case "unclaim-stale": // a stale copy of the held message
					m.State, m.name = StateHeld, fileName(m.Seq, m.Target, m.Sender, m.Owner, m.ID, StateHeld)
				case "done":
					err = s.Done(m)
				case "end":
					err = s.End(m, EndCancelled, t0.Add(time.Minute))
				case "forget":
					var e Entry
					if e, err = s.Find("m"); err == nil {
						err = s.Forget(e)
					}
				}
				if fail != (err != nil) {
					t.Fatalf("step %s: err %v", step, err)
				}
			}
			ents := list(t, s)
			if got := ids(ents); got != tt.want {
				t.Fatalf("entries %q, want %q", got, tt.want)
			}
			if tt.end != "" {
				e, _ := s.Find("m")
				r, err := s.Read(e)
				if err != nil {
					t.Fatal(err)
				}
				if r.End != tt.end || !r.Ended.Equal(t0.Add(time.Minute)) || r.Text != "" || r.To != "rev" || r.From != "brain" {
					t.Errorf("ended record: End %s at %v, text %q, %s → %s; want End %s at %v, no text, brain → rev",
						r.End, r.Ended, r.Text, r.From, r.To, tt.end, t0.Add(time.Minute))
				}
			}
		})
	}
}

// Stores of distinct Herdr servers are distinct directories; one server's
// store is one directory whoever opens it.
func TestOpenScopes(t *testing.T) {
	base := t.TempDir()
	a, err := Open(base, "inode:1:2")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(base, "inode:1:3")
	if err != nil {
		t.Fatal(err)
	}
	a2, err := Open(base, "inode:1:2")
	if err != nil {
		t.Fatal(err)
	}
	if a.Dir == b.Dir || a.Dir != a2.Dir || !strings.HasPrefix(filepath.Base(a.Dir), "outbox-") {
		t.Errorf("dirs %s %s %s", a.Dir, b.Dir, a2.Dir)
	}
	if a.KeyHash("term_1") == b.KeyHash("term_1") || a.KeyHash("term_1") != a2.KeyHash("term_1") || a.KeyHash("term_1") == a.KeyHash("term_2") {
		t.Error("key hashes do not follow the scope and the key")
	}
	if h := a.KeyHash("term_1"); len(h) != 16 || !isHex(h) || strings.Contains(h, "term") {
		t.Errorf("KeyHash = %q", h)
	}
}

// FuzzParseName: parseName accepts exactly the names fileName writes: a
// name it parses is the one fileName gives for its fields, whose parts
// are well formed.
func FuzzParseName(f *testing.F) {
	f.Add(fileName(1, "0123456789abcdef", "0123456789abcdef", "fedcba9876543210", "hl_mk3a_1", StateHeld))
	f.Add(fileName(1<<62, "0123456789abcdef", "0123456789abcdef", "fedcba9876543210", "x", StateEnded))
	f.Add("+0000000000000000001.0123456789abcdef.0123456789abcdef.0123456789abcdef.id.h")
	f.Add("-0000000000000000000.0123456789abcdef.0123456789abcdef.0123456789abcdef.id.t")
	f.Add("99999999999999999999.0123456789abcdef.0123456789abcdef.0123456789abcdef.id.t")
	f.Add("00000000000000000001.0123456789ABCDEF.0123456789abcdef.0123456789abcdef.id.h")
	f.Add("00000000000000000001.0123456789abcdef.0123456789abcdef.0123456789abcdef..h")
	f.Add("00000000000000000001.0123456789abcdef.0123456789abcdef.0123456789abcdef.a b.h")
	f.Add("00000000000000000001.0123456789abcdef.0123456789abcdef.0123456789abcdef.id.x")
	f.Add(".tmp-123")
	f.Add("owner.0123456789abcdef")
	f.Fuzz(func(t *testing.T, name string) {
		e, ok := parseName(name)
		if !ok {
			return
		}
		if got := fileName(e.Seq, e.Target, e.Sender, e.Owner, e.ID, e.State); got != name {
			t.Fatalf("fileName(parseName(%q)) = %q, want the name back", name, got)
		}
		if e.Seq < 0 || !validID(e.ID) || e.name != name {
			t.Fatalf("parseName(%q) = seq %d, id %q, name %q; want seq ≥ 0, a valid id, the name kept", name, e.Seq, e.ID, e.name)
		}
		for _, h := range []string{e.Target, e.Sender, e.Owner} {
			if len(h) != 16 || !isHex(h) {
				t.Fatalf("parseName(%q): hash %q", name, h)
			}
		}
		if e.State != StateHeld && e.State != StateTyping && e.State != StateEnded {
			t.Fatalf("parseName(%q): state %q", name, e.State)
		}
		if strings.HasPrefix(name, ".") || strings.Contains(name, "/") {
			t.Fatalf("parseName(%q) took a hidden or nested name", name)
		}
	})
}
