package link

import (
	"context"
	"sync"
	"time"
)

// DefaultSettleGap is the spacing of the two readings of a target that a
// held message waits for: Herdr's detection flaps (a working agent read
// idle for tens of milliseconds), and one reading is not trusted. Two
// readings at rest with the same state_change_seq this far apart mean no
// change in between: a flap inside the gap moves the counter twice.
const DefaultSettleGap = 100 * time.Millisecond

func (l *Link) settleGap() time.Duration {
	if l.cfg.SettleGap != 0 {
		return max(l.cfg.SettleGap, 0)
	}
	return DefaultSettleGap
}

// settled reads the target again a settle gap after first (a reading
// that showed it able to take a turn) and reports whether it is still the
// same: at rest, the same state_change_seq, the same occupant. It returns
// the second reading. An error, or ctx ending, is not settled.
func (l *Link) settled(ctx context.Context, first Agent) (Agent, bool) {
	if l.settleGap() == 0 {
		return first, true // off: one reading is trusted
	}
	t := time.NewTimer(l.settleGap())
	defer t.Stop()
	select {
	case <-ctx.Done():
		return first, false
	case <-t.C:
	}
	a, err := l.cfg.Herdr.GetAgent(ctx, first.PaneID)
	if err != nil {
		return first, false
	}
	same := a.Seq == first.Seq && Takes(a) && sameOccupant(first, a) && sameSession(sessionOf(first), a)
	if !same {
		l.log().Debug("target not settled", "pane_id", first.PaneID, "seq", first.Seq, "now_seq", a.Seq, "status", a.Status)
	}
	return a, same
}

// settleFirst is a lease whose release waits for settled: an Unlock
// before it is done then.
type settleFirst struct {
	Lease
	mu      sync.Mutex
	done    bool // settled was called
	pending bool // Unlock was called before settled
}

func (s *settleFirst) Unlock() {
	s.mu.Lock()
	if !s.done {
		s.pending = true
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.Lease.Unlock()
}

func (s *settleFirst) settled() {
	s.mu.Lock()
	s.done = true
	p := s.pending
	s.mu.Unlock()
	if p {
		s.Lease.Unlock()
	}
}
