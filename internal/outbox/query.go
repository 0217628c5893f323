package outbox

import (
	"slices"
)

// List returns every entry (held messages and requests) in acceptance
// order. A message id found both ended and held or typing (a crash
// between the two steps of ending it) is listed ended only. The slice is
// shared: callers must not modify it. It costs a listing of the index:
// callers that want one target's or one sender's entries use
// [Store.ListForTarget] and [Store.BySender].
func (s *Store) List() ([]Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fresh(); err != nil {
		return nil, err
	}
	if s.x.sorted == nil {
		out := make([]Entry, 0, len(s.x.visible))
		for n := range s.x.visible {
			out = append(out, s.x.byName[n])
		}
		slices.SortFunc(out, byAcceptance)
		s.x.sorted = out
	}
	return s.x.sorted, nil
}

// BySender returns the entries whose sender hash is h, in acceptance
// order.
func (s *Store) BySender(h string) ([]Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fresh(); err != nil {
		return nil, err
	}
	return inOrder(s.x.bySender[h], nil), nil
}

// CountsForSender is what the sender of hash h has outstanding, per
// target hash: messages held (or being typed), and requests awaiting
// their outcome (ids, oldest first).
func (s *Store) CountsForSender(h string) (held map[string]int, awaiting map[string][]string, err error) {
	ents, err := s.BySender(h)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range ents {
		switch {
		case e.Held():
			if held == nil {
				held = map[string]int{}
			}
			held[e.Target]++
		case e.Pending():
			if awaiting == nil {
				awaiting = map[string][]string{}
			}
			awaiting[e.Target] = append(awaiting[e.Target], e.ID)
		}
	}
	return held, awaiting, nil
}

// ListForTarget returns the messages held or being typed for the target
// of hash h, in acceptance order.
func (s *Store) ListForTarget(h string) ([]Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fresh(); err != nil {
		return nil, err
	}
	return inOrder(s.x.byTarget[h], nil), nil
}

// NextForTarget returns the oldest message held or being typed for the
// target of hash h; false when there is none.
func (s *Store) NextForTarget(h string) (Entry, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fresh(); err != nil {
		return Entry{}, false, err
	}
	var best Entry
	found := false
	for _, e := range s.x.byTarget[h] {
		if !found || byAcceptance(e, best) < 0 {
			best, found = e, true
		}
	}
	return best, found, nil
}

// Targets returns the hashes of the targets with messages held or being
// typed.
func (s *Store) Targets() ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fresh(); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(s.x.byTarget))
	for h := range s.x.byTarget {
		out = append(out, h)
	}
	slices.Sort(out)
	return out, nil
}

// PendingRequests returns the request records still waiting for their
// outcome, in acceptance order.
func (s *Store) PendingRequests() ([]Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fresh(); err != nil {
		return nil, err
	}
	return inOrder(s.x.pending, nil), nil
}

// byID returns the visible entry of message id that fits keep.
func (s *Store) byID(id string, keep func(Entry) bool) (Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fresh(); err != nil {
		return Entry{}, err
	}
	var out []Entry
	for _, n := range s.x.byID[id] {
		if e := s.x.byName[n]; s.x.visible[n] && keep(e) {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return Entry{}, ErrNotFound
	}
	slices.SortFunc(out, byAcceptance)
	return out[0], nil
}

// Find returns the entry of held message id, in whatever state (not its
// request record: see FindRequest).
func (s *Store) Find(id string) (Entry, error) {
	return s.byID(id, func(e Entry) bool { return !e.IsRequest() })
}
