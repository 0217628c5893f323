package deliver

import (
	"context"
	"sync"
	"time"
)

// SettleGap is the spacing of the two readings (0: one reading is
// trusted).
func (d *Deliverer) SettleGap() time.Duration {
	if d.cfg.SettleGap != 0 {
		return max(d.cfg.SettleGap, 0)
	}
	return DefaultSettleGap
}

// Settled reads the target again a settle gap after first (a reading
// that showed it able to take a turn) and reports whether it is still the
// same: at rest, the same state_change_seq, the same occupant. It returns
// the second reading. An error, or ctx ending, is not settled.
func (d *Deliverer) Settled(ctx context.Context, first Agent) (Agent, bool) {
	if d.SettleGap() == 0 {
		return first, true // off: one reading is trusted
	}
	t := time.NewTimer(d.SettleGap())
	defer t.Stop()
	select {
	case <-ctx.Done():
		return first, false
	case <-t.C:
	}
	a, err := d.cfg.Herdr.GetAgent(ctx, first.PaneID)
	if err != nil {
		return first, false
	}
	same := a.Seq == first.Seq && Takes(a) && SameOccupant(first, a) && SameSession(SessionOf(first), a)
	if !same {
		d.log.Debug("target not settled", "pane_id", first.PaneID, "seq", first.Seq, "now_seq", a.Seq, "status", a.Status)
	}
	return a, same
}

// SettleFirst is a lease whose release waits for Settled: an Unlock
// before it is done then.
type SettleFirst struct {
	Lease
	mu      sync.Mutex
	done    bool // Settled was called
	pending bool // Unlock was called before Settled
}

// Unlock releases the lease, or once Settled is called when it was not
// yet.
func (s *SettleFirst) Unlock() {
	s.mu.Lock()
	if !s.done {
		s.pending = true
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.Lease.Unlock()
}

// Settled lets the lease go: at once if Unlock was called before.
func (s *SettleFirst) Settled() {
	s.mu.Lock()
	s.done = true
	p := s.pending
	s.mu.Unlock()
	if p {
		s.Lease.Unlock()
	}
}
