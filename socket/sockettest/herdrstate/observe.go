package herdrstate

import (
	"bytes"
	"strings"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest/receiver"
)

// Agent returns the agent record of target (a pane id, alias included, or
// an agent name).
func (w *World) Agent(target string) (schema.AgentInfo, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(target)
	if p == nil {
		for _, q := range w.panes() {
			if q.term.name != nil && *q.term.name == target {
				p = q
				break
			}
		}
	}
	if p == nil || !p.term.isAgent() {
		return schema.AgentInfo{}, false
	}
	return w.agentInfo(p), true
}

// Inputs returns every write made to paneID's terminal, in order: prompt
// texts (with paste brackets when on), Copilot's focus-in report, the
// separate Enter ("\r") and whatever [World.Write] typed.
func (w *World) Inputs(paneID string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(paneID)
	if p == nil {
		return nil
	}
	return append([]string(nil), p.term.writes...)
}

// Prompts returns the text of each agent.prompt Herdr accepted for
// paneID's terminal, in order, as the request carried it (no paste
// brackets, no Enter).
func (w *World) Prompts(paneID string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(paneID)
	if p == nil {
		return nil
	}
	return append([]string(nil), p.term.prompts...)
}

// Submissions returns the user turns the agents in paneID received,
// oldest first: the exact text each model got, and when. Text waiting in
// a composer or a queue is not a submission yet.
func (w *World) Submissions(paneID string) []Submission {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(paneID)
	if p == nil {
		return nil
	}
	return append([]Submission(nil), p.term.subs...)
}

// Interrupts is how many turns of paneID's agent lost their partial
// answer to a submission that steered them (codex while working).
func (w *World) Interrupts(paneID string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(paneID)
	if p == nil {
		return 0
	}
	if m, ok := p.term.recv.(*receiver.Model); ok {
		return m.Interrupts()
	}
	return 0
}

// Composer returns what paneID's agent holds unsent: the composer, and
// the input queued until its turn ends, each as the model would get it.
func (w *World) Composer(paneID string) (composer, queued string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(paneID)
	if p == nil {
		return "", ""
	}
	if m, ok := p.term.recv.(*receiver.Model); ok {
		return m.Composer()
	}
	return "", ""
}

// Write writes data to paneID's terminal as typed input (a user typing, a
// test injecting keys): the agent program reads it as Herdr's writes.
// "\r" is Enter; ESC[200~ … ESC[201~ is a paste.
func (w *World) Write(paneID, data string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return err
	}
	w.write(p.term, data)
	return nil
}

// write records one write to t and hands it to its program (w.mu held).
func (w *World) write(t *terminal, data string) {
	t.writes = append(t.writes, data)
	if t.recv != nil {
		t.recv.Input(data)
	}
	w.bump()
}

// bracketed reports whether Herdr would send t a paste (w.mu held).
func (t *terminal) bracketed() bool { return t.recv != nil && t.recv.BracketedPaste() }

// Read returns what pane.read shows for paneID: for an agent pane, the
// turns it received and its composer with the kind's screen signs; for a
// shell, what was typed into it.
func (w *World) Read(paneID string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(paneID)
	if p == nil {
		return ""
	}
	return screenText(p.term, true)
}

func screenText(t *terminal, strip bool) string {
	return screenOf(t, schema.ReadSourceVisible, strip)
}

// screenOf is what pane.read shows of t from source: a real program's
// terminal screen (styled unless strip), else the receiver's, else what
// was typed.
func screenOf(t *terminal, source schema.ReadSource, strip bool) string {
	if t.prog != nil {
		return t.prog.Screen(source != schema.ReadSourceVisible, !strip)
	}
	if t.recv != nil {
		return t.recv.Screen()
	}
	return screen(t, strip)
}

// Typed returns everything written to paneID's terminal as text, with
// escape sequences removed and Enter as a line break.
func (w *World) Typed(paneID string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(paneID)
	if p == nil {
		return ""
	}
	return screen(p.term, true)
}

// Screen is [World.Typed], kept for existing callers. It is what was typed
// into the pane, not what pane.read shows ([World.Read]) nor what the
// agent received ([World.Submissions]).
func (w *World) Screen(paneID string) string { return w.Typed(paneID) }

func screen(t *terminal, strip bool) string {
	var b strings.Builder
	for _, s := range t.writes {
		if s == "\r" {
			b.WriteString("\n")
			continue
		}
		if strip {
			s = stripANSI(s)
		}
		b.WriteString(s)
	}
	return b.String()
}

func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	var b bytes.Buffer
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && !(s[j] >= 0x40 && s[j] <= 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Turns returns the user turns the agents in paneID received, like
// [World.Submissions] (never nil), and whether the pane exists.
func (w *World) Turns(paneID string) ([]Submission, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(paneID)
	if p == nil {
		return nil, false
	}
	return append([]Submission{}, p.term.subs...), true
}

// EventLines returns the event hub's lines, oldest first, as Herdr
// writes them (keys sorted).
func (w *World) EventLines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, len(w.events.recs))
	for i, r := range w.events.recs {
		out[i] = string(r.line)
	}
	return out
}
