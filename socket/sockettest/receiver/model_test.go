package receiver_test

import (
	"sort"
	"testing"
	"time"

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
		t.Fatalf("a turn before claude's 0.4 s latency: %+v", ft.subs)
	}
	ft.advance(2 * time.Millisecond) // 0.4 s + 5.7 µs a byte
	if len(ft.subs) != 1 || ft.subs[0].Text != `<pasted_content id="1">hello</pasted_content id="1">` || ft.state != schema.AgentStatusWorking {
		t.Fatalf("turns %+v, state %s", ft.subs, ft.state)
	}
	ft.advance(time.Second)
	if ft.state != schema.AgentStatusIdle {
		t.Fatalf("after the turn: %s", ft.state)
	}
}
