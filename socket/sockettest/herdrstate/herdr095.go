package herdrstate

import (
	"bytes"
	"strconv"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
)

// NewestModelled is the newest Herdr release the simulator models. No
// 0.9.2–0.9.5 source tree was readable: what those patches change comes
// from their public release notes, docs and issues (docs/herdr-versions.md
// names each), and [Patch095] says which of it is inferred.
const NewestModelled = "0.9.5"

// Patch095 is what the 0.9 patches after 0.9.1 change on the socket.
type Patch095 struct {
	// EventsLost (0.9.2): a subscription whose cursor fell out of the
	// retained event history (512 events) is told so with an error line
	// under the subscribe request's id, code events_lost, and its
	// connection closes; the client resubscribes and takes a snapshot.
	// Release notes 0.9.2 ("readers that fall too far behind get an
	// events_lost error"); herdrdev/herdr #4178 (silent loss before),
	// #4225 (the error envelope with the original id, then close). The
	// message text is the simulator's own.
	EventsLost bool
	// GraphicsRemoved (0.9.2): pane.graphics.set|clear|info are gone;
	// their requests fail to parse as an unknown method (release notes
	// 0.9.2). That the failure is the parser's is inferred.
	GraphicsRemoved bool
	// FirstTaskDone (0.9.2): an agent's first task counts as done (reads
	// done where the user cannot see it) even when the agent was started
	// with a prompt (release notes 0.9.2); before, the end of a managed
	// launch's first turn stayed idle.
	FirstTaskDone bool
	// CompletionSeq (0.9.3): AgentInfo carries completion_seq, a counter
	// that steps when an idle transition ends completed work (working or
	// blocked → idle); startup readiness, idle restore and conversation
	// switches do not step it (v0.9.3 socket API docs). Where: every
	// AgentInfo (agent.get, agent.list, session.snapshot's agents, the
	// prompt answers); the docs name the agent object, a third-party
	// client reads it from session.snapshot's agents, the other
	// answers are inferred. Per terminal, from 0 (inferred).
	CompletionSeq bool
}

// patch095 is the Patch095 of a 0.9-or-later version.
func patch095(major, minor, patch int) Patch095 {
	later := major > 0 || minor > 9
	return Patch095{
		EventsLost: later || patch >= 2, GraphicsRemoved: later || patch >= 2, FirstTaskDone: later || patch >= 2,
		CompletionSeq: later || patch >= 3,
	}
}

// GraphicsMethods are the methods 0.9.2 removed.
var GraphicsMethods = []string{schema.MethodPaneGraphicsSet, schema.MethodPaneGraphicsClear, schema.MethodPaneGraphicsInfo}

// MessageEventsLost is the message of the simulator's events_lost error.
const MessageEventsLost = "subscription fell behind the retained event history; resubscribe and take a snapshot"

// faults095 are the fault modes of a world: Herdr bugs reported against
// 0.9.x, each off until a test switches it on for a pane. They apply under
// any release (the bugs are in agent detection and input, not the wire).
type faults095 struct {
	idleFlap   map[*terminal]flapSpec
	picker     map[*terminal]bool
	noSubmit   map[*terminal]bool
	unattached map[*terminal]bool
	linger     time.Duration
	completion map[*terminal]uint64
	// misdelivered: per terminal, the prompts typed where they should
	// not have been (into a working agent during a flap, an open picker).
	misdelivered map[*terminal][]string
	// lost: subscriptions told to report events_lost at their next poll.
	loseEvents uint64 // generation: subscriptions older than it lose
	subGen     uint64
}

type flapSpec struct {
	every, length time.Duration
	on            bool // inside a flap now: reads idle, really working
	stop          func() bool
}

func (f *faults095) init() {
	if f.picker == nil {
		f.idleFlap, f.picker, f.noSubmit, f.unattached = map[*terminal]flapSpec{}, map[*terminal]bool{}, map[*terminal]bool{}, map[*terminal]bool{}
		f.completion, f.misdelivered = map[*terminal]uint64{}, map[*terminal][]string{}
	}
}

// SetIdleFlaps makes Herdr's detection of the working agent in paneID
// flap to idle for length every every (0 turns it off): the agent is
// really working, Herdr reads idle and back (state_change_seq steps twice
// per flap). herdrdev/herdr #5004, #3090, #4376, #4626, #3467 report false
// idle for Claude Code; a flap of 40 ms was measured here before a held
// message was typed into a working agent. A prompt typed during a flap is
// recorded as misdelivered ([World.Misdelivered]).
func (w *World) SetIdleFlaps(paneID string, every, length time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return err
	}
	w.f95.init()
	t := p.term
	if old, ok := w.f95.idleFlap[t]; ok {
		if old.stop != nil {
			old.stop()
		}
		if old.on && t.state == schema.AgentStatusIdle {
			w.applyState(p, schema.AgentStatusWorking, false) // the flap ends with it
		}
	}
	delete(w.f95.idleFlap, t)
	if every <= 0 || length <= 0 {
		return nil
	}
	w.f95.idleFlap[t] = flapSpec{every: every, length: length}
	w.scheduleFlap(p, t)
	return nil
}

// scheduleFlap arms t's next flap (w.mu held).
func (w *World) scheduleFlap(p *pane, t *terminal) {
	fs, ok := w.f95.idleFlap[t]
	if !ok {
		return
	}
	fs.stop = w.clock.AfterFunc(fs.every, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		cur, ok := w.f95.idleFlap[t]
		if !ok || p.term != t {
			return
		}
		if t.state != schema.AgentStatusWorking {
			w.scheduleFlap(p, t)
			return
		}
		cur.on = true
		w.f95.idleFlap[t] = cur
		w.applyState(p, schema.AgentStatusIdle, false)
		cur.stop = w.clock.AfterFunc(cur.length, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			c, ok := w.f95.idleFlap[t]
			if !ok {
				return
			}
			c.on = false
			w.f95.idleFlap[t] = c
			if p.term == t && t.state == schema.AgentStatusIdle {
				w.applyState(p, schema.AgentStatusWorking, false)
			}
			w.scheduleFlap(p, t)
		})
		w.f95.idleFlap[t] = cur
	})
	w.f95.idleFlap[t] = fs
}

// SetPickerOpen opens (true) or closes a picker over the composer of the
// agent in paneID, as Codex's /model picker or its rate-limit prompt: the
// agent reads idle (herdrdev/herdr #4647), the screen shows the picker,
// and text typed then answers the picker instead of reaching the
// composer (recorded as misdelivered). The screen drawn is the kind's:
// Codex a numbered model list, Claude Code a numbered permission dialog,
// others a generic numbered menu.
func (w *World) SetPickerOpen(paneID string, open bool) error {
	return w.setTermFault(paneID, open, true, func(f *faults095) map[*terminal]bool { return f.picker })
}

// SetPasteNeverSubmitted makes prompts to paneID leave their text in the
// composer: Herdr answers agent_prompted, the Enter never submits
// (herdrdev/herdr #4990; #4529 the first prompt to a fresh Claude Code).
func (w *World) SetPasteNeverSubmitted(paneID string, on bool) error {
	return w.setTermFault(paneID, on, false, func(f *faults095) map[*terminal]bool { return f.noSubmit })
}

// SetUnattached makes paneID an unattached (--no-focus) pane whose
// prompts never arrive: Herdr answers agent_prompted, nothing reaches the
// program (herdrdev/herdr #4537).
func (w *World) SetUnattached(paneID string, on bool) error {
	return w.setTermFault(paneID, on, false, func(f *faults095) map[*terminal]bool { return f.unattached })
}

// setTermFault sets (on) or clears the fault of set m for the terminal
// of paneID; redraw marks its screen changed (a fault that draws).
func (w *World) setTermFault(paneID string, on, redraw bool, m func(*faults095) map[*terminal]bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return err
	}
	w.f95.init()
	if on {
		m(&w.f95)[p.term] = true
	} else {
		delete(m(&w.f95), p.term)
	}
	if redraw {
		w.bump()
	}
	return nil
}

// SetNameLinger makes an exited agent's name stay bound for d (0: off):
// the pane keeps answering to it, so a prompt by name reaches whoever
// occupies the pane next (herdrdev/herdr #4764, about 10 s).
func (w *World) SetNameLinger(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.f95.linger = d
}

// Replace makes the agent in paneID exit and another of kind take the
// pane's terminal, as a user quitting an agent and starting the next
// one in the same shell: the new occupant has its own agent session
// (session, "" for none). Under [World.SetNameLinger] the old name stays
// bound to the pane for the linger time.
func (w *World) Replace(paneID, kind, session string) error {
	w.mu.Lock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		w.mu.Unlock()
		return err
	}
	name := p.term.name
	w.exit(p)
	w.mu.Unlock()
	if err := w.Detect(paneID, kind); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	t := p.term
	w.applyState(p, schema.AgentStatusIdle, true) // the next occupant is ready
	if session != "" {
		t.session = &schema.AgentSessionInfo{Source: "herdr:" + kind, Agent: kind, Kind: schema.AgentSessionRefKindID, Value: session}
	}
	if name != nil && w.f95.linger > 0 {
		t.name = name
		w.emitPaneUpdated(p)
		w.clock.AfterFunc(w.f95.linger, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			if p.term == t && t.name == name {
				t.name = nil
				w.emitPaneUpdated(p)
				w.bump()
			}
		})
	}
	w.bump()
	return nil
}

// Misdelivered returns what was typed into paneID where it should not
// have been, one line per prompt: "flap: <text>" (a working agent that
// read idle), "picker: <text>" (an open picker answered).
func (w *World) Misdelivered(paneID string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(paneID)
	if p == nil {
		return nil
	}
	return append([]string(nil), w.f95.misdelivered[p.term]...)
}

// CompletionSeq is paneID's completion_seq ([Patch095.CompletionSeq]).
func (w *World) CompletionSeq(paneID string) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(paneID)
	if p == nil {
		return 0
	}
	return w.f95.completion[p.term]
}

// LoseEvents makes every open subscription report events_lost at its
// next poll, as one that fell behind the retained history ([Patch095]):
// a test's way to provoke what a slow reader causes. Only under a
// release with EventsLost.
func (w *World) LoseEvents() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.f95.loseEvents = w.f95.subGen
}

// noteFinish counts a completed task of t (w.mu held).
func (w *World) noteFinish(t *terminal) {
	w.f95.init()
	w.f95.completion[t]++
}

// finishedTask reports whether a change from old to idle ends completed
// work (w.mu held): working or blocked → idle, outside a managed launch
// before 0.9.2, also inside it since ([Patch095.FirstTaskDone]).
func (w *World) finishedTask(t *terminal, old schema.AgentStatus) bool {
	if old != schema.AgentStatusWorking && old != schema.AgentStatusBlocked {
		return false
	}
	if t.launch != launchPending && t.launch != launchBlocked {
		return true
	}
	return w.rel().FirstTaskDone && old == schema.AgentStatusWorking
}

// beforeTyping applies the input faults to a prompt about to be typed
// into t (w.mu held): it records a misdelivery, and reports whether the
// text reaches the program (typed) and whether its Enter is written.
func (w *World) beforeTyping(t *terminal, text string) (typed, enter bool) {
	f := &w.f95
	if f.picker == nil {
		return true, true
	}
	if fs, ok := f.idleFlap[t]; ok && fs.on {
		f.misdelivered[t] = append(f.misdelivered[t], "flap: "+text)
	}
	if f.unattached[t] {
		return false, false
	}
	if f.picker[t] {
		f.misdelivered[t] = append(f.misdelivered[t], "picker: "+text)
		return false, false
	}
	return true, !f.noSubmit[t]
}

// pickerScreen is what the screen of t shows while its picker is open
// (w.mu held), or "" when none is.
func (w *World) pickerScreen(t *terminal) string {
	if w.f95.picker == nil || !w.f95.picker[t] {
		return ""
	}
	kind := ""
	if t.label != nil {
		kind = *t.label
	}
	switch kind {
	case "codex":
		return "  Select Model and Effort\n  Access legacy models by running codex -m <model_name>\n\n" +
			"› 1. gpt-5.5 (current)  Frontier model\n  2. gpt-5.4             Everyday coding\n  3. gpt-5.4-mini         Fast\n\n" +
			"  Press enter to confirm or esc to go back\n"
	case "claude":
		return "────────────────────────────────────────\n Bash command\n\n   rm -rf build\n\n Do you want to proceed?\n" +
			" ❯ 1. Yes\n   2. Yes, and don't ask again for this command\n   3. No, and tell Claude what to do differently (esc)\n"
	}
	return "  Select an option\n\n› 1. Continue\n  2. Cancel\n\n  ↑/↓ to move · enter to select · esc to close\n"
}

// withCompletion adds completion_seq to every AgentInfo of a result
// ([Patch095.CompletionSeq]; w.mu not held), right after its
// state_change_seq. An AgentInfo is written with terminal_id first and
// state_change_seq later; another object with a terminal_id (a
// PaneInfo) has no state_change_seq before the next terminal_id.
func (w *World) withCompletion(res any) any {
	raw, err := jsonx.Marshal(res)
	if err != nil || !bytes.Contains(raw, seqKey) {
		return res
	}
	w.mu.Lock()
	byTerm := make(map[string]uint64, len(w.f95.completion))
	for t, n := range w.f95.completion {
		byTerm[t.id] = n
	}
	w.mu.Unlock()
	out := make([]byte, 0, len(raw)+len(raw)/8)
	rest := raw
	for {
		i := bytes.Index(rest, termKey)
		if i < 0 {
			break
		}
		idStart := i + len(termKey)
		idEnd := bytes.IndexByte(rest[idStart:], '"')
		if idEnd < 0 {
			break
		}
		id := rest[idStart : idStart+idEnd]
		after := rest[idStart+idEnd:]
		j := bytes.Index(after, seqKey)
		next := bytes.Index(after, termKey)
		if j < 0 || (next >= 0 && next < j) {
			out = append(out, rest[:idStart+idEnd]...)
			rest = after
			continue
		}
		k := j + len(seqKey)
		for k < len(after) && after[k] >= '0' && after[k] <= '9' {
			k++
		}
		out = append(out, rest[:idStart+idEnd]...)
		out = append(out, after[:k]...)
		out = append(out, `,"completion_seq":`...)
		out = strconv.AppendUint(out, byTerm[string(id)], 10)
		rest = after[k:]
	}
	out = append(out, rest...)
	return jsonx.RawMessage(out)
}

var (
	termKey = []byte(`"terminal_id":"`)
	seqKey  = []byte(`"state_change_seq":`)
)

// lostNow reports whether the subscription s has lost events (w.mu held):
// a cursor that fell out of the retained history, or [World.LoseEvents].
func (w *World) lostNow(s *Subscription) bool {
	if !w.rel().EventsLost {
		return false
	}
	if s.gen <= w.f95.loseEvents && w.f95.loseEvents != 0 {
		return true
	}
	if len(w.events.recs) == 0 {
		return false
	}
	oldest := w.events.recs[0].seq
	for _, st := range s.subs {
		if st.cursor+1 < oldest {
			return true
		}
	}
	return false
}
