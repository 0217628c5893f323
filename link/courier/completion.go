package courier

import (
	"sync"

	"github.com/herdr-link/herdr-link/link/deliver"
)

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

// completions is the completion_seq Herdr showed when this process typed
// a message, by pane and state_change_seq.
type completions struct {
	mu sync.Mutex
	m  map[typedAt]uint64
}

// maxTypedComp bounds the remembered completions; past it they are
// dropped (the requests then end by the state rule alone).
const maxTypedComp = 4096

// note remembers the completion_seq got (Herdr's answer to a prompt, the
// agent before submission) showed, when it shows one.
func (r *completions) note(pane string, got deliver.Agent) {
	comp, ok := got.CompletionSeq.Get()
	if !ok || got.Seq == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil || len(r.m) >= maxTypedComp {
		r.m = map[typedAt]uint64{}
	}
	r.m[typedAt{pane, got.Seq}] = comp
}

// forget drops what note remembered of a request.
func (r *completions) forget(pane string, seq uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, typedAt{pane, seq})
}

// completedSince reports whether a (a reading of the recipient) shows a
// completed task since the message typed at state_change_seq seq, and
// whether that is known: Herdr reports completion_seq and this process
// remembers its value at the typing.
func (r *completions) completedSince(pane string, seq uint64, a deliver.Agent) (completed, known bool) {
	now, has := a.CompletionSeq.Get()
	if !has || seq == 0 {
		return false, false
	}
	r.mu.Lock()
	then, ok := r.m[typedAt{pane, seq}]
	r.mu.Unlock()
	if !ok {
		return false, false
	}
	return deliver.SeqSteps(then, now) != 0, true
}
