package outbox

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The outcomes of a request (Request.Outcome).
const (
	OutcomeReplied = "replied" // the recipient answered it
	OutcomeHandled = "handled" // the recipient's turn with it ended, no answer came
	OutcomeBlocked = "blocked" // the recipient stopped at an interactive prompt while on it
	OutcomeGone    = "gone"    // the recipient's pane closed, or another occupant took it
	OutcomeExpired = "expired" // its lifetime passed
	// OutcomeCancelled: it was held, and an operator cancelled it.
	OutcomeCancelled = "cancelled"
	// OutcomeNotSubmitted: it was typed, but its text stayed in the
	// recipient's composer, unsent (its Enter did not submit it).
	OutcomeNotSubmitted = "not_submitted"
)

// EndNotSubmitted is a held message's End when it was typed but its text
// stayed in the target's composer, unsent.
const EndNotSubmitted = "not_submitted"

// AddRequest records r as pending, owned by this process: one line of
// the ledger. Request records count towards MaxMessages with the held
// messages: when the store is full, the oldest records of requests that
// have their outcome (kept only for a late wait) make room, and with none
// left it is [ErrFull].
func (s *Store) AddRequest(r Request, now time.Time) (Request, error) {
	if !validID(r.ID) {
		return Request{}, fmt.Errorf("%w: %q", ErrBadID, r.ID)
	}
	tok, err := s.Token()
	if err != nil {
		return Request{}, err
	}
	r.Target, r.Sender = s.KeyHash(r.TargetKey), s.KeyHash(r.FromKey)
	r.Owner, r.State = tok, StatePending
	err = s.updateLedger(func() (string, error) {
		evict, err := s.roomForRequest(r.ID)
		if err != nil {
			return "", err
		}
		r.Seq, r.Accepted = s.nextSeq(now), now
		r.name = fileName(r.Seq, r.Target, r.Sender, r.Owner, r.ID, StatePending)
		l, err := addLine(r)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		for _, id := range evict {
			b.WriteString("-" + id + "\n")
		}
		b.WriteString(l)
		return b.String(), nil
	})
	if err != nil {
		return Request{}, err
	}
	return r, nil
}

// roomForRequest returns the ids of the oldest answered request records
// to remove so that the store has room for one more message, id.
func (s *Store) roomForRequest(id string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.x == nil { // listed again since the ledger was locked (Release)
		if err := s.fresh(); err != nil {
			return nil, err
		}
	}
	over := len(s.x.live) - s.maxMessages() + 1
	if s.x.live[id] {
		over--
	}
	if over <= 0 {
		return nil, nil
	}
	var answered []Entry
	for _, r := range s.lg.recs {
		if r.State == StateAnswered && s.x.visible[r.name] {
			answered = append(answered, r.Entry())
		}
	}
	if len(answered) < over {
		return nil, &FullError{Limit: int64(s.maxMessages())}
	}
	slices.SortFunc(answered, byAcceptance)
	ids := make([]string, 0, over)
	for _, e := range answered[:over] {
		ids = append(ids, e.ID)
	}
	return ids, nil
}

// FindRequest returns the request record of message id.
func (s *Store) FindRequest(id string) (Entry, error) {
	return s.byID(id, Entry.IsRequest)
}

// Request returns the request record of e (ErrNotFound when it is gone,
// or is another request's).
func (s *Store) Request(e Entry) (Request, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fresh(); err != nil {
		return Request{}, err
	}
	return s.recordOf(e)
}

// recordOf returns e's record (the caller holds s.mu).
func (s *Store) recordOf(e Entry) (Request, error) {
	r, ok := s.record(e.ID)
	if !ok || r.Seq != e.Seq || r.Owner != e.Owner {
		return Request{}, ErrNotFound
	}
	return r, nil
}

// lockedRecord is recordOf under s.mu, for a ledger update's decision.
func (s *Store) lockedRecord(e Entry) (Request, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recordOf(e)
}

// MarkTyped records that the pending request of e was typed at at, the
// recipient then at state_change_seq seq (0 when not known).
func (s *Store) MarkTyped(e Entry, at time.Time, seq uint64) error {
	return s.updateLedger(func() (string, error) {
		r, err := s.lockedRecord(e)
		if err != nil || r.State != StatePending || !r.Typed.IsZero() {
			return "", err
		}
		return fmt.Sprintf("t%s %d %d\n", r.ID, at.UnixNano(), seq), nil
	})
}

// EndRequest gives the pending request of e its outcome. before, when
// set, runs first under the ledger's exclusive flock (the caller writes
// the notice there, idempotently: a crash after it and before the
// outcome is written runs it again); an error from it leaves the request
// pending. It returns the request as ended, and false when the request
// had its outcome already. ErrNotFound: its record is gone (forgotten,
// evicted, pruned).
func (s *Store) EndRequest(e Entry, outcome string, now time.Time, before func(Request) error) (Request, bool, error) {
	if outcome == "" || strings.ContainsAny(outcome, " \n") {
		return Request{}, false, fmt.Errorf("outbox: outcome %q", outcome)
	}
	var (
		out   Request
		ended bool
	)
	err := s.updateLedger(func() (string, error) {
		r, err := s.lockedRecord(e)
		if err != nil {
			return "", err
		}
		if r.State != StatePending {
			out = r
			return "", nil
		}
		if before != nil {
			if err := before(r); err != nil {
				return "", err
			}
		}
		r.Outcome, r.Ended = outcome, now
		r.State = StateAnswered
		r.name = fileName(r.Seq, r.Target, r.Sender, r.Owner, r.ID, StateAnswered)
		out, ended = r, true
		return fmt.Sprintf("e%s %s %d\n", r.ID, outcome, now.UnixNano()), nil
	})
	if err != nil {
		return Request{}, false, err
	}
	return out, ended, nil
}

// ForgetRequest removes the record of a request that was never handed
// over (its typing failed before anything reached the pane).
func (s *Store) ForgetRequest(r Request) error {
	return s.updateLedger(func() (string, error) {
		if _, err := s.lockedRecord(r.Entry()); err != nil {
			return "", nil // gone already
		}
		return "-" + r.ID + "\n", nil
	})
}
