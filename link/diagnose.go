package link

import "context"

// Diagnosis is what the server's own resolution finds for the caller, in
// operator terms (ids included). It is for diagnosis tools such as
// `herdr-link probe` and is never shown to a model.
type Diagnosis struct {
	// Self is the agent detected in the caller's pane; nil when Herdr has
	// detected none there (yet).
	Self *Agent
	// PaneID is the caller's current pane id; it differs from the Link's
	// PaneID when the pane moved to another workspace since start-up.
	PaneID string
	// WorkspaceID is the caller's current workspace ("" when Herdr did not
	// report it: then no agent is a peer).
	WorkspaceID string
	// Peers are the agents Peers would list, in its order.
	Peers []Agent
	// Unnamed counts the other agents of the workspace without a valid
	// Agent Name (not listed); Elsewhere the agents of other workspaces.
	Unnamed, Elsewhere int
}

// Diagnose resolves the caller and its peers exactly as Peers, Send and
// Close do (one agent.list, and pane.get when the caller's pane moved or
// hosts no detected agent), without naming an unnamed caller. Its errors
// are the operations' own (*Error, with the cause for the operator).
func (l *Link) Diagnose(ctx context.Context) (Diagnosis, error) {
	ctx, cancel := l.bound(ctx)
	defer cancel()
	s, err := l.resolve(ctx)
	if err != nil {
		return Diagnosis{}, err
	}
	d := Diagnosis{Self: s.self, PaneID: s.pane, WorkspaceID: s.ws, Peers: s.peers()}
	for _, a := range s.agents {
		switch {
		case !s.inWorkspace(a):
			d.Elsewhere++
		case a.PaneID == s.pane:
		case !ValidName(a.Name):
			d.Unnamed++
		}
	}
	return d, nil
}
