package receiver

import (
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/schema"
)

// Submission is one user turn an agent received: the exact text its model
// got, and when.
type Submission struct {
	At   time.Time `json:"at"`
	Text string    `json:"text"`
}

// Behaviour is how the modelled agent in a pane reacts to input; see
// [World.SetBehaviour]. The zero value is the kind's defaults.
type Behaviour struct {
	// Stuck makes Enter never submit: the text stays in the composer.
	Stuck bool
	// SwallowEnters is how many Enters that follow a paste the composer
	// swallows, for a kind whose real TUI may do that (see
	// [MaySwallowPasteEnter]); other kinds ignore it.
	SwallowEnters int
	// PlaceholderEnters is how many Enters that follow a paste submit the
	// paste's placeholder instead of its text, for a kind whose real TUI
	// may do that (qwen: see [MayPlaceholderPasteEnter]).
	PlaceholderEnters int
	// TurnTime is how long a turn lasts (from its submission until the
	// agent is idle again); 0 means the default (1 s), negative never
	// ends (end it with [World.SetStatus]).
	TurnTime time.Duration
	// SubmitLatency, when set, replaces the kind's delay from Enter to the
	// turn starting (the model request); see the package doc.
	SubmitLatency *time.Duration
	// BracketedPaste, when set, fixes whether the program has bracketed
	// paste on; by default it is on once the agent is ready (its status
	// is no longer unknown).
	BracketedPaste *bool
}

// DefaultTurnTime is how long a modelled turn lasts unless configured.
const DefaultTurnTime = time.Second

// piece is one run of composer input: typed text (a draft, raw typing) or
// one bracketed paste.
type piece struct {
	text  string
	paste bool
	id    int // the kind's paste number (claude, pi), from 1 per pane
}

// kind is what differs between agent kinds (hosts-and-delivery §2).
type kind struct {
	name string
	// pasteAfterPaste and pasteAfterText separate a paste from what is
	// already in the composer when both land in one submission.
	pasteAfterPaste, pasteAfterText string
	// tagPastes wraps each paste as <pasted_content id="N">…</pasted_content id="N"> (claude).
	tagPastes bool
	// trailing is appended to what the model gets (opencode: one space).
	trailing string
	// interrupts: Enter while working submits at once and discards the
	// partial answer (codex); otherwise it is queued until the turn ends.
	interrupts bool
	// queueDelay is how long after the turn ends queued input is sent.
	queueDelay time.Duration
	// rawPerByte is how long raw (unbracketed) typing takes to read; an
	// Enter that arrives before that is swallowed (codex: 0.85 s per KB).
	rawPerByte time.Duration
	// pastePerByte is the same for a bracketed paste (qwen: a 64 KiB
	// paste is still being read when Enter comes, and stays unsent).
	pastePerByte time.Duration
	// swallowRisk reports whether the real TUI may swallow the Enter that
	// follows a paste of n bytes (Herdr's, 300 ms later): it did in some
	// runs and not in others, so a row of the model-vs-TUI table allows
	// both. Behaviour.SwallowEnters makes the model do it; swallowAs is
	// what the swallowed Enter leaves in the composer ("\n": it became a
	// newline; "": it was lost).
	swallowRisk func(n int) bool
	swallowAs   string
	// placeholderRisk: where swallowRisk holds, the Enter may instead
	// submit the paste's placeholder, its text not yet stored behind it
	// (Behaviour.PlaceholderEnters).
	placeholderRisk bool
	// latency is the delay from Enter to the turn starting for n bytes.
	latency func(n int) time.Duration
	// collapse reports whether a paste is shown as a placeholder.
	collapse func(p piece) bool
}

func linear(base, perByte time.Duration) func(int) time.Duration {
	return func(n int) time.Duration { return base + time.Duration(n)*perByte }
}

var kinds = map[string]*kind{
	// Claude Code 2.1.328: 0.4–0.6 s from Enter to the model request up to
	// 64 KB, 1.9 s at 256 KB; queued input goes ~0.2 s after the turn.
	"claude": {name: "claude", pasteAfterPaste: "\n\n", pasteAfterText: "\n\n", tagPastes: true,
		queueDelay: 200 * time.Millisecond, latency: linear(400*time.Millisecond, 5700*time.Nanosecond),
		collapse: func(p piece) bool { return strings.Contains(p.text, "\n") || len(p.text) > 800 }},
	// Codex 0.171.0: 0.1–0.9 s up to 64 KB, 14.8 s at 256 KB (growing
	// with the square of the size); Enter while working steers.
	"codex": {name: "codex", interrupts: true, rawPerByte: 830 * time.Microsecond,
		latency: func(n int) time.Duration {
			x := float64(n) / (256 << 10)
			return 100*time.Millisecond + time.Duration(x*x*float64(14700*time.Millisecond))
		},
		collapse: func(p piece) bool { return len([]rune(p.text)) > 1000 }},
	// OpenCode 1.18.33: 1.4–1.8 s (a title request comes first), two
	// pastes joined by one space, one trailing space for the model,
	// queued input sent 0.07–0.09 s after the turn.
	"opencode": {name: "opencode", pasteAfterPaste: " ", trailing: " ",
		queueDelay: 80 * time.Millisecond, latency: linear(1500*time.Millisecond, 0),
		collapse: func(p piece) bool { return strings.Count(p.text, "\n") >= 2 }},
	// Pi 0.73.1: 0.14 s short, 2.6 s at 64 KB; glued; queued input sent
	// ~20 ms after the turn.
	"pi": {name: "pi", queueDelay: 20 * time.Millisecond, latency: linear(140*time.Millisecond, 37500*time.Nanosecond),
		collapse: func(p piece) bool { return len([]rune(p.text)) > 1000 }},
}

// plainKind is every other agent kind: text glued as typed, input queued
// while working.
var plainKind = &kind{name: "", queueDelay: 50 * time.Millisecond, latency: linear(100*time.Millisecond, 0),
	collapse: func(piece) bool { return false }}

// agentKind returns the model of an agent label.
func agentKind(label string) *kind {
	if k, ok := kinds[label]; ok {
		return k
	}
	return plainKind
}

// Kinds lists the agent kinds with a behaviour of their own; every other
// kind behaves as the plain default.
func Kinds() []string {
	return []string{"claude", "codex", "copilot", "gemini", "opencode", "pi", "qwen"}
}

// pendingSub is a submission between Enter and the turn starting.
type pendingSub struct {
	pieces []piece
	delay  time.Duration
}

// steerDelay is how fast a working codex takes a steering message: it
// closes the streaming answer within ~10 ms.
const steerDelay = 10 * time.Millisecond

// Model is the simulator's receiver: a composer that holds typed text
// until Enter, then a turn (working → idle after the turn time), with the
// kind's merging, queueing or interrupting.
type Model struct {
	t Terminal
	k *kind
	b Behaviour

	parser   inputParser
	composer []piece
	queue    []piece // queued while working: one turn when it ends
	queued   int     // submissions in queue
	pending  []pendingSub
	pasteN   int
	ingest   time.Time // input is read until then (rawPerByte, pastePerByte)
	stopped  bool
	interrup int  // turns whose partial answer a submission discarded
	escArmed bool // claude: one Escape pressed; a second clears the composer

	pendingStop, turnStop, flushStop func() bool
}

// NewModel returns the model of an agent of kind label reading t, with
// draft already in its composer.
func NewModel(t Terminal, label string, b Behaviour, draft string) *Model {
	m := &Model{t: t, k: agentKind(label), b: b}
	if draft != "" {
		m.composer = []piece{{text: draft}}
	}
	return m
}

func (m *Model) now() time.Time { return m.t.Now() }

func (m *Model) BracketedPaste() bool {
	if m.b.BracketedPaste != nil {
		return *m.b.BracketedPaste
	}
	return m.t.State() != schema.AgentStatusUnknown
}

func (m *Model) EnterKey() string { return "\r" }

func (m *Model) Input(data string) {
	if m.stopped {
		return
	}
	if data == "\x1b" && !m.parser.inPaste && len(m.parser.esc) == 0 {
		m.escape() // a write of ESC alone is the Escape key
		return
	}
	for _, ev := range m.parser.feed(data) {
		m.escArmed = false
		switch ev.kind {
		case inputKey:
			m.editKey(ev.text)
		case inputTyped:
			m.typed(ev.text)
		case inputPaste:
			m.reading(len(ev.text), m.k.pastePerByte)
			m.pasteN++
			m.composer = append(m.composer, piece{text: ev.text, paste: true, id: m.pasteN})
		case inputEnter:
			m.enter()
		}
	}
}

func (m *Model) typed(s string) {
	m.reading(len(s), m.k.rawPerByte)
	if n := len(m.composer); n > 0 && !m.composer[n-1].paste {
		m.composer[n-1].text += s
		return
	}
	m.composer = append(m.composer, piece{text: s})
}

func (m *Model) busy() bool { return m.t.State() == schema.AgentStatusWorking || len(m.pending) > 0 }

// enter is the Enter key: submit what the composer holds.
func (m *Model) enter() {
	switch {
	case m.b.Stuck, len(m.composer) == 0, m.t.State() == schema.AgentStatusBlocked:
		return // stuck; nothing to send; the key went to a dialog
	case m.now().Before(m.ingest):
		return // still reading raw typing or a paste: Enter is swallowed
	case m.b.SwallowEnters > 0 && m.pasteEnterAtRisk():
		m.b.SwallowEnters--
		m.composer[len(m.composer)-1].text += m.k.swallowAs
		m.t.Changed()
		return
	}
	if m.b.PlaceholderEnters > 0 && m.k.placeholderRisk && m.pasteEnterAtRisk() {
		m.b.PlaceholderEnters--
		last := &m.composer[len(m.composer)-1]
		*last = piece{text: "[Pasted Content " + itoa(len([]rune(last.text))) + " chars]"}
	}
	text := m.composer
	m.composer = nil
	if m.busy() && !m.k.interrupts {
		m.queue = append(m.queue, text...)
		m.queued++
		m.t.Changed()
		return
	}
	delay := m.k.latency(len(m.k.merge(text)))
	switch {
	case m.b.SubmitLatency != nil:
		delay = *m.b.SubmitLatency
	case m.busy():
		delay = steerDelay
	}
	m.pending = append(m.pending, pendingSub{text, delay})
	if len(m.pending) == 1 {
		m.schedulePending()
	}
	m.t.Changed()
}

func (m *Model) schedulePending() {
	m.pendingStop = m.after(m.pending[0].delay, m.startPending)
}

// after runs f on the world clock, with the world locked, unless the
// program stopped meanwhile.
func (m *Model) after(d time.Duration, f func()) func() bool {
	return m.t.AfterFunc(d, func() {
		if !m.stopped {
			f()
		}
	})
}

// startPending makes the oldest pending submission a turn (w.mu held).
func (m *Model) startPending() {
	if len(m.pending) == 0 {
		return
	}
	text := m.pending[0].pieces
	m.pending = m.pending[1:]
	if len(m.pending) > 0 {
		defer m.schedulePending()
	}
	if (m.t.State() == schema.AgentStatusWorking && !m.k.interrupts) || m.t.State() == schema.AgentStatusBlocked {
		// Became busy meanwhile (SetStatus), or a dialog opened: wait
		// until the agent is idle again.
		m.queue = append(m.queue, text...)
		m.queued++
		m.t.Changed()
		return
	}
	m.submit(text)
}

// submit hands text to the agent's model as a user turn (w.mu held). A
// working codex is steered: its partial answer is discarded and the turn
// goes on with the new message.
func (m *Model) submit(pieces []piece) {
	if m.t.State() == schema.AgentStatusWorking {
		m.interrup++
	}
	m.t.Submitted(Submission{At: m.now().UTC(), Text: m.k.merge(pieces) + m.k.trailing})
	if m.turnStop != nil {
		m.turnStop()
		m.turnStop = nil
	}
	m.t.SetState(schema.AgentStatusWorking)
	m.startTurnTimer(m.turnTime())
	m.t.Changed()
}

func (m *Model) turnTime() time.Duration {
	if m.b.TurnTime == 0 {
		return DefaultTurnTime
	}
	return m.b.TurnTime
}

func (m *Model) startTurnTimer(d time.Duration) {
	if d < 0 {
		return
	}
	m.turnStop = m.after(d, func() {
		m.turnStop = nil
		if m.t.State() == schema.AgentStatusWorking {
			m.t.SetState(schema.AgentStatusIdle)
		}
	})
}

func (m *Model) StateChanged(from, to schema.AgentStatus) {
	if m.stopped {
		return
	}
	if to != schema.AgentStatusWorking {
		if m.turnStop != nil {
			m.turnStop()
			m.turnStop = nil
		}
	}
	free := to == schema.AgentStatusIdle || to == schema.AgentStatusUnknown
	if free && len(m.queue) > 0 && m.flushStop == nil {
		m.flushStop = m.after(m.k.queueDelay, m.flush)
	}
}

// flush submits what was queued during the turn, as one turn (w.mu held).
func (m *Model) flush() {
	m.flushStop = nil
	if len(m.queue) == 0 || m.t.State() == schema.AgentStatusWorking || m.t.State() == schema.AgentStatusBlocked {
		return
	}
	q := m.queue
	m.queue, m.queued = nil, 0
	m.submit(q)
}

func (m *Model) Stop() {
	m.stopped = true
	for _, s := range []func() bool{m.pendingStop, m.turnStop, m.flushStop} {
		if s != nil {
			s()
		}
	}
}
