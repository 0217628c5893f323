package link

import "github.com/herdr-link/herdr-link/link/deliver"

// Herdr 0.9.3 and later count completed tasks per agent (completion_seq:
// it steps when an idle transition ends completed work; startup
// readiness, an idle restore and a conversation switch do not step it).
// A request counts as handled only once its recipient's turn ended; where
// Herdr reports the counter, that end must be a completion: a rest
// without one is not the end of its turn.

type typedAt struct {
	pane string
	seq  uint64
}

// maxTypedComp bounds the remembered completions; past it they are
// dropped (the requests then end by the state rule alone).
const maxTypedComp = 4096

// noteTyped remembers the completion_seq got (Herdr's answer to a
// prompt, the agent before submission) showed, when it shows one.
func (l *Link) noteTyped(pane string, got Agent) {
	comp, ok := got.CompletionSeq.Get()
	if !ok || got.Seq == 0 {
		return
	}
	l.compMu.Lock()
	defer l.compMu.Unlock()
	if l.typedComp == nil || len(l.typedComp) >= maxTypedComp {
		l.typedComp = map[typedAt]uint64{}
	}
	l.typedComp[typedAt{pane, got.Seq}] = comp
}

// forgetTyped drops what noteTyped remembered of a request.
func (l *Link) forgetTyped(pane string, seq uint64) {
	l.compMu.Lock()
	defer l.compMu.Unlock()
	delete(l.typedComp, typedAt{pane, seq})
}

// completedSince reports whether a (a reading of the recipient) shows a
// completed task since the message typed at state_change_seq seq, and
// whether that is known: Herdr reports completion_seq and this process
// remembers its value at the typing.
func (l *Link) completedSince(pane string, seq uint64, a Agent) (completed, known bool) {
	now, has := a.CompletionSeq.Get()
	if !has || seq == 0 {
		return false, false
	}
	l.compMu.Lock()
	then, ok := l.typedComp[typedAt{pane, seq}]
	l.compMu.Unlock()
	if !ok {
		return false, false
	}
	return deliver.SeqSteps(then, now) != 0, true
}
