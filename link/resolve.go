package link

import (
	"context"
	"strings"
)

// snapshot is one resolution of the caller against Herdr's agent list.
type snapshot struct {
	agents []Agent
	self   *Agent // nil: no agent detected in the caller's pane
	ws     string // the caller's current workspace
	pane   string // the caller's current pane id (HERDR_PANE_ID unless it moved)
}

// resolve reads agent.list and finds the caller in it. When the caller's
// pane id is not a current pane id (the pane moved to another workspace
// and HERDR_PANE_ID is now an alias) or its pane hosts no detected agent,
// pane.get resolves the id to the pane's current record.
func (l *Link) resolve(ctx context.Context) (snapshot, error) {
	var s snapshot
	agents, err := l.cfg.Herdr.ListAgents(ctx)
	if err != nil {
		return s, l.fail(opLookup, "agent.list", err)
	}
	s.agents, s.pane = agents, l.cfg.PaneID
	for i := range agents {
		if agents[i].PaneID == l.cfg.PaneID {
			s.self, s.ws = &agents[i], agents[i].WorkspaceID
			return s, nil
		}
	}
	pane, err := l.cfg.Herdr.GetPane(ctx, l.cfg.PaneID)
	if err != nil {
		return s, l.herdrError(opSelfPane, "pane.get", err, "pane_id", l.cfg.PaneID)
	}
	s.ws, s.pane = pane.WorkspaceID, pane.PaneID
	for i := range agents {
		if agents[i].PaneID == pane.PaneID {
			s.self = &agents[i]
			break
		}
	}
	if pane.PaneID != l.cfg.PaneID {
		l.log().Debug("caller's pane moved", "pane_id", l.cfg.PaneID, "current_pane_id", pane.PaneID, "workspace_id", pane.WorkspaceID)
	}
	return s, nil
}

// fail turns an error of a Herdr call into a link error (errorTable):
// transport and environment failures are NOT_IN_HERDR; refusals become
// the operation's error.
func (l *Link) fail(op operation, method string, err error) *Error {
	return l.herdrError(op, method, err)
}

// peers are the agents Peers lists: validly named, in the caller's
// workspace, not the caller, in Herdr's order.
func (s snapshot) peers() []Agent {
	var out []Agent
	for i := range s.agents {
		if s.isPeer(&s.agents[i]) {
			out = append(out, s.agents[i])
		}
	}
	return out
}

// isPeer reports whether a is one of the agents peers lists.
func (s snapshot) isPeer(a *Agent) bool {
	return s.inWorkspace(*a) && a.PaneID != s.pane && ValidName(a.Name)
}

// inWorkspace reports whether a is in the caller's workspace. A workspace
// Herdr did not report, on either side, is in no one's: it fails closed.
// The agent's pane id must be one of that workspace too (Herdr's pane ids
// are "<workspace>:p<n>"): an entry whose pane id is not — an agent of
// another machine in some combined list, whose workspace id happens to be
// the caller's — is in no one's workspace either.
func (s snapshot) inWorkspace(a Agent) bool {
	return s.ws != "" && a.WorkspaceID == s.ws && strings.HasPrefix(a.PaneID, s.ws+":")
}

// peer finds a validly named agent of workspace ws by name (not the agent
// of pane exclude when set).
func (s snapshot) peer(name string, exclude string) (Agent, bool) {
	// An agent Herdr knows by the name itself comes before one known by
	// an alias of it (two can share a workspace after a pane moved).
	var alias *Agent
	for i, a := range s.agents {
		if a.Name == name && s.inWorkspace(a) && (exclude == "" || a.PaneID != exclude) {
			if a.HerdrName == "" {
				return a, true
			}
			if alias == nil {
				alias = &s.agents[i]
			}
		}
	}
	if alias != nil {
		return *alias, true
	}
	return Agent{}, false
}
