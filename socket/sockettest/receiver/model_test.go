package receiver_test

import (
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest/receiver"
)

// fakeTerminal is a receiver.Terminal without a world: a state, the turns
// recorded, and a manual clock.
type fakeTerminal struct {
	m      *receiver.Model
	state  schema.AgentStatus
	subs   []receiver.Submission
	now    time.Time
	timers []timer
}

type timer struct {
	at time.Time
	f  func()
	on *bool
}

func (f *fakeTerminal) State() schema.AgentStatus { return f.state }
func (f *fakeTerminal) SetState(s schema.AgentStatus) {
	old := f.state
	f.state = s
	f.m.StateChanged(old, s)
}
func (f *fakeTerminal) Submitted(s receiver.Submission)    { f.subs = append(f.subs, s) }
func (f *fakeTerminal) Submissions() []receiver.Submission { return f.subs }
func (f *fakeTerminal) Changed()                           {}
func (f *fakeTerminal) Now() time.Time                     { return f.now }
func (f *fakeTerminal) AfterFunc(d time.Duration, fn func()) func() bool {
	on := true
	f.timers = append(f.timers, timer{f.now.Add(d), fn, &on})
	return func() bool { was := on; on = false; return was }
}

// advance runs the timers due within d, in time order.
func (f *fakeTerminal) advance(d time.Duration) {
	end := f.now.Add(d)
	for {
		sort.SliceStable(f.timers, func(i, j int) bool { return f.timers[i].at.Before(f.timers[j].at) })
		if len(f.timers) == 0 || f.timers[0].at.After(end) {
			f.now = end
			return
		}
		t := f.timers[0]
		f.timers = f.timers[1:]
		f.now = t.at
		if *t.on {
			*t.on = false
			t.f()
		}
	}
}

// TestModelWithoutWorld: the model reaches its world only through its
// Terminal: a claude paste and Enter become one tagged turn after the
// kind's latency, the agent works for the turn time, then is idle.
func TestModelWithoutWorld(t *testing.T) {
	ft := &fakeTerminal{state: schema.AgentStatusIdle, now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	ft.m = receiver.NewModel(ft, "claude", receiver.Behaviour{TurnTime: time.Second}, "")
	if !ft.m.BracketedPaste() {
		t.Fatal("a ready claude has bracketed paste on")
	}
	ft.m.Input("\x1b[200~hello\x1b[201~")
	ft.m.Input("\r")
	ft.advance(399 * time.Millisecond)
	if len(ft.subs) != 0 {
		t.Fatalf("%d turns before claude's 0.4 s latency, want 0", len(ft.subs))
	}
	ft.advance(2 * time.Millisecond) // 0.4 s + 5.7 µs a byte
	if ft.state != schema.AgentStatusWorking {
		t.Fatalf("state %s, want working", ft.state)
	}
	if diff := cmp.Diff([]string{`<pasted_content id="1">hello</pasted_content id="1">`}, texts(ft.subs)); diff != "" {
		t.Fatalf("turns mismatch (-want +got):\n%s", diff)
	}
	ft.advance(time.Second)
	if ft.state != schema.AgentStatusIdle {
		t.Fatalf("after the turn: %s", ft.state)
	}
}

// TestSwallowedPasteEnter: a kind whose real TUI may swallow the Enter
// after a paste does so SwallowEnters times (gemini turns it into a
// newline; qwen loses it, and only after a 64 KiB paste); the next
// Enter submits what the composer holds.
func TestSwallowedPasteEnter(t *testing.T) {
	big := string(make([]byte, 64<<10))
	for _, tc := range []struct {
		kind, paste string
		swallow     int
		placeholder int
		draft       string
		risk        bool
		want        []string // the turns after two Enters
	}{
		{"gemini", "hello", 1, 0, "", false, []string{"hello"}},
		{"gemini", big, 0, 0, "", true, []string{big}},
		{"gemini", big, 1, 0, "", true, []string{big + "\n"}},
		{"gemini", big, 2, 0, "", true, nil},
		{"gemini", big, 0, 1, "", true, []string{big}},
		{"qwen", "hello", 1, 1, "", false, []string{"hello"}},
		{"qwen", big, 1, 0, "", true, []string{big}},
		{"qwen", big, 0, 1, "", true, []string{"[Pasted Content 65536 chars]"}},
		{"copilot", big, 1, 0, "", true, []string{big}},
		{"claude", "hello", 1, 1, "", false, []string{`<pasted_content id="1">hello</pasted_content id="1">`}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			if got := receiver.MaySwallowPasteEnter(tc.kind, len(tc.paste)); got != tc.risk {
				t.Errorf("MaySwallowPasteEnter(%s, %d) = %v, want %v", tc.kind, len(tc.paste), got, tc.risk)
			}
			ft := &fakeTerminal{state: schema.AgentStatusIdle, now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
			ft.m = receiver.NewModel(ft, tc.kind, receiver.Behaviour{TurnTime: time.Second, SwallowEnters: tc.swallow, PlaceholderEnters: tc.placeholder}, tc.draft)
			ft.m.Input("\x1b[200~" + tc.paste + "\x1b[201~")
			ft.m.Input("\r")
			ft.advance(300 * time.Millisecond)
			ft.m.Input("\r")
			ft.advance(5 * time.Second)
			var got []string
			for _, s := range ft.subs {
				got = append(got, s.Text)
			}
			if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
				t.Fatalf("turns %q, want %q", abbrev(got), abbrev(tc.want))
			}
		})
	}
}

func abbrev(s []string) []string {
	var out []string
	for _, x := range s {
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		out = append(out, x)
	}
	return out
}

// texts lists the submitted texts for a comparison.
func texts(subs []receiver.Submission) []string {
	out := []string{}
	for _, s := range subs {
		out = append(out, s.Text)
	}
	return out
}
