package link

import "sync"

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
