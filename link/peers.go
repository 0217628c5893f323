package link

import "context"

// The two tool operations besides Send: Peers lists the agents a model
// can reach, Close closes one. They stand above the delivery core; the
// type and its configuration (link.go) call none of them.

// Peers lists the live, validly named agents of the caller's workspace,
// the caller excluded, in Herdr's layout order.
func (l *Link) Peers(ctx context.Context) (PeersResult, error) {
	ctx, cancel := l.bound(ctx)
	defer cancel()
	s, name, err := l.named(ctx)
	if err != nil {
		return PeersResult{}, err
	}
	n := 0
	for i := range s.agents {
		if s.isPeer(&s.agents[i]) {
			n++
		}
	}
	out := PeersResult{Self: Peer{Name: name, State: State(s.self.Status)}, Peers: make([]Peer, 0, n)}
	held, awaiting := l.c.Owed(*s.self)
	for i := range s.agents {
		if a := &s.agents[i]; s.isPeer(a) {
			p := Peer{Name: a.Name, State: State(a.Status)}
			if held != nil || awaiting != nil {
				h := l.cfg.Outbox.KeyHash(lockKey(*a))
				p.Held, p.AwaitingReply = held[h], awaiting[h]
			}
			out.Peers = append(out.Peers, p)
		}
	}
	return out, nil
}

// Close closes the pane of the agent named agent in the caller's
// workspace. The caller needs no name of its own. Closing the caller's own
// pane is allowed; the process may end before the answer arrives.
func (l *Link) Close(ctx context.Context, agent string) (CloseResult, error) {
	if !ValidName(agent) {
		return CloseResult{}, newErr(PeerNotFound, detailPeer, nil)
	}
	ctx, cancel := l.bound(ctx)
	defer cancel()
	s, err := l.resolve(ctx)
	if err != nil {
		return CloseResult{}, err
	}
	target, ok := s.peer(agent, "")
	if !ok {
		return CloseResult{}, newErr(PeerNotFound, detailPeer, nil)
	}
	if err := l.cfg.Herdr.ClosePane(ctx, target.PaneID); err != nil {
		return CloseResult{}, l.herdrError(opClose, "pane.close", err, "pane_id", target.PaneID)
	}
	l.log().Info("closed", "agent", agent, "pane_id", target.PaneID)
	return CloseResult{Status: "closed", Agent: agent}, nil
}
