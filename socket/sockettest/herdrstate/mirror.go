package herdrstate

import (
	"fmt"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
)

// SpecFromSnapshot returns the world file of a session.snapshot answer:
// its workspaces, tabs and panes (in layout order) with their ids, labels,
// cwds and terminal titles, the agents with their kinds, names, statuses,
// sessions and launch flags, and the focused pane. A world built from it
// renders a snapshot of the same shape (ids and counters aside), which is
// how live recordings are replayed against the simulator.
func SpecFromSnapshot(snap schema.SessionSnapshot) WorldSpec {
	agents := map[string]schema.AgentInfo{}
	for _, a := range snap.Agents {
		agents[a.PaneID] = a
	}
	var spec WorldSpec
	if snap.FocusedPaneID != nil {
		spec.Focused = *snap.FocusedPaneID
	}
	for _, ws := range snap.Workspaces {
		wsp := WorkspaceSpec{ID: ws.WorkspaceID, Label: ws.Label, Tokens: ws.Tokens, Worktree: ws.Worktree}
		for _, tab := range snap.Tabs {
			if tab.WorkspaceID != ws.WorkspaceID {
				continue
			}
			ts := TabSpec{ID: tab.TabID, Label: tab.Label}
			for _, p := range snap.Panes {
				if p.TabID != tab.TabID {
					continue
				}
				ps := PaneSpec{ID: p.PaneID, CWD: derefOr(p.CWD), Title: derefOr(p.TerminalTitle), Label: derefOr(p.Label)}
				a, isAgent := agents[p.PaneID]
				if isAgent || p.Agent != nil {
					as := &AgentSpec{Kind: derefOr(p.Agent), Status: string(p.AgentStatus)}
					if isAgent {
						as.Kind, as.Name, as.Status = derefOr(a.Agent), derefOr(a.Name), string(a.AgentStatus)
						as.LaunchPending, as.InteractiveReady, as.ScreenDetectionSkipped = a.LaunchPending, a.InteractiveReady, a.ScreenDetectionSkipped
						if a.AgentSession != nil {
							as.Session = a.AgentSession.Value
						}
						as.DisplayTitle, as.DisplayAgent, as.StateLabels, as.Tokens = derefOr(a.Title), derefOr(a.DisplayAgent), a.StateLabels, a.Tokens
					}
					ps.Agent = as
				}
				ts.Panes = append(ts.Panes, ps)
			}
			if len(ts.Panes) > 0 {
				wsp.Tabs = append(wsp.Tabs, ts)
			}
		}
		if len(wsp.Tabs) > 0 {
			spec.Workspaces = append(spec.Workspaces, wsp)
		}
	}
	if spec.Focused != "" {
		found := false
		for _, ws := range spec.Workspaces {
			for _, t := range ws.Tabs {
				for _, p := range t.Panes {
					found = found || p.ID == spec.Focused
				}
			}
		}
		if !found {
			spec.Focused = ""
		}
	}
	return spec
}

// RenderEvent returns the event line this world would write now for an
// event of kind about paneID (a pane_updated, pane_agent_detected,
// pane_closed or pane_agent_status_changed hub event, or a
// pane.agent_status_changed subscription line), keys sorted as Herdr
// writes them. It lets a recorded event line be compared with the
// simulator's rendering of the same event.
func (w *World) RenderEvent(kind, paneID string) ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(paneID)
	if p == nil {
		return nil, fmt.Errorf("sockettest: no pane %s", paneID)
	}
	var d schema.EventData
	switch kind {
	case schema.SubscriptionTagPaneAgentStatusChanged:
		return statusLine(w.statusEvent(p)), nil
	case "pane_updated":
		d.PaneUpdated = &schema.EventDataPaneUpdated{Pane: w.paneInfo(p)}
	case "pane_agent_detected":
		d.PaneAgentDetected = &schema.EventDataPaneAgentDetected{PaneID: p.id, WorkspaceID: p.tab.ws.id, Agent: p.term.label}
	case "pane_closed":
		d.PaneClosed = &schema.EventDataPaneClosed{PaneID: p.id, WorkspaceID: p.tab.ws.id}
	case "pane_agent_status_changed":
		d.PaneAgentStatusChanged = &schema.EventDataPaneAgentStatusChanged{PaneID: p.id, WorkspaceID: p.tab.ws.id,
			AgentStatus: p.term.status(), Agent: p.term.label, Title: p.term.meta.title, DisplayAgent: p.term.meta.displayAgent,
			StateLabels: p.term.meta.stateLabels}
	default:
		return nil, fmt.Errorf("sockettest: cannot render %s events", kind)
	}
	data, err := jsonx.Marshal(d)
	if err != nil {
		return nil, err
	}
	return sortedEnvelope(kind, data), nil
}
