package herdrstate

import (
	"github.com/herdr-link/herdr-link/schema"
)

func paneRead(c *call) (any, *herdrError) {
	return onPane(c, func(p *schema.PaneReadParams) string { return p.PaneID },
		func(w *World, pn *pane, p *schema.PaneReadParams) (any, *herdrError) {
			return readResult(w, pn, p.Source, p.Format, p.Lines, p.StripANSI), nil
		})
}

// paneArg resolves a pane.* pane_id argument (w.mu held): a current id
// or a moved-pane alias, else pane_not_found.
func (w *World) paneArg(id string) (*pane, *herdrError) {
	pn := w.paneByTarget(id)
	if pn == nil {
		return nil, herr("pane_not_found", "pane %s not found", id)
	}
	return pn, nil
}

func paneGet(c *call) (any, *herdrError) {
	return onPane(c, paneTargetID, func(w *World, pn *pane, _ *schema.PaneTarget) (any, *herdrError) {
		return schema.ResultPaneInfo{Type: schema.ResultTypePaneInfo, Pane: w.paneInfo(pn)}, nil
	})
}

func paneTargetID(p *schema.PaneTarget) string { return p.PaneID }

// workspaceFilter resolves an optional workspace_id argument (w.mu held):
// nil for none, workspace_not_found when it does not resolve.
func (w *World) workspaceFilter(id *string) (*workspace, *herdrError) {
	if id == nil {
		return nil, nil
	}
	ws := w.workspaceByArg(*id)
	if ws == nil {
		return nil, herr("workspace_not_found", "workspace %s not found", *id)
	}
	return ws, nil
}

func paneList(c *call) (any, *herdrError) {
	return withParams(c, func(w *World, p *schema.PaneListParams) (any, *herdrError) {
		only, e := w.workspaceFilter(p.WorkspaceID)
		if e != nil {
			return nil, e
		}
		panes := []schema.PaneInfo{}
		for _, pn := range w.panes() {
			if only == nil || pn.tab.ws == only {
				panes = append(panes, w.paneInfo(pn))
			}
		}
		return schema.ResultPaneList{Type: schema.ResultTypePaneList, Panes: panes}, nil
	})
}

func paneClose(c *call) (any, *herdrError) {
	return onPane(c, paneTargetID, func(w *World, pn *pane, _ *schema.PaneTarget) (any, *herdrError) {
		w.closePane(pn)
		return schema.ResultOk{Type: schema.ResultTypeOk}, nil
	})
}

func paneMove(c *call) (any, *herdrError) {
	var p schema.PaneMoveParams
	c.params(&p)
	w := c.w
	w.mu.Lock()
	defer w.mu.Unlock()
	pn := w.paneByTarget(p.PaneID)
	if pn == nil {
		return nil, herr("pane_not_found", "source pane not found")
	}
	var dst *tab
	d := p.Destination
	switch {
	case d.Tab != nil:
		if dst = w.tabByID(d.Tab.TabID); dst == nil {
			return nil, herr("tab_not_found", "tab %s not found", d.Tab.TabID)
		}
		if d.Tab.TargetPaneID != nil && w.paneByTarget(*d.Tab.TargetPaneID) == nil {
			return nil, herr("target_pane_not_found", "target pane %s not found", *d.Tab.TargetPaneID)
		}
	case d.NewTab != nil:
		ws := pn.tab.ws
		if d.NewTab.WorkspaceID != nil {
			if ws = w.workspaceByArg(*d.NewTab.WorkspaceID); ws == nil {
				return nil, herr("workspace_not_found", "workspace %s not found", *d.NewTab.WorkspaceID)
			}
		}
		ws.tabSeq++
		dst = &tab{id: ws.id + ":t" + EncodeNumber(uint64(ws.tabSeq)), ws: ws, label: derefOr(d.NewTab.Label)}
		ws.tabs = append(ws.tabs, dst)
	case d.NewWorkspace != nil:
		w.wsSeq++
		id := "w" + EncodeNumber(uint64(w.wsSeq))
		for w.workspaceByArg(id) != nil {
			w.wsSeq++
			id = "w" + EncodeNumber(uint64(w.wsSeq))
		}
		ws := &workspace{id: id, label: derefOr(d.NewWorkspace.Label), tabSeq: 1}
		if ws.label == "" {
			ws.label = id
		}
		dst = &tab{id: id + ":t1", ws: ws, label: derefOr(d.NewWorkspace.TabLabel)}
		ws.tabs = []*tab{dst}
		w.workspaces = append(w.workspaces, ws)
	default:
		return nil, herr("invalid_request", "unsupported pane.move destination")
	}
	// A new container holds no pane yet; its info is taken after the move.
	res := w.movePane(pn, dst, d.NewTab != nil, d.NewWorkspace != nil)
	return schema.ResultPaneMove{Type: schema.ResultTypePaneMove, MoveResult: res}, nil
}

func workspaceList(c *call) (any, *herdrError) {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	out := []schema.WorkspaceInfo{}
	for i, ws := range c.w.workspaces {
		out = append(out, c.w.workspaceInfo(ws, i+1))
	}
	return schema.ResultWorkspaceList{Type: schema.ResultTypeWorkspaceList, Workspaces: out}, nil
}

func tabList(c *call) (any, *herdrError) {
	return withParams(c, func(w *World, p *schema.TabListParams) (any, *herdrError) {
		only, e := w.workspaceFilter(p.WorkspaceID)
		if e != nil {
			return nil, e
		}
		out := []schema.TabInfo{}
		for _, ws := range w.workspaces {
			if only != nil && ws != only {
				continue
			}
			for i, t := range ws.tabs {
				out = append(out, w.tabInfo(t, i+1))
			}
		}
		return schema.ResultTabList{Type: schema.ResultTypeTabList, Tabs: out}, nil
	})
}

func sessionSnapshot(c *call) (any, *herdrError) {
	w := c.w
	w.mu.Lock()
	defer w.mu.Unlock()
	snap := schema.SessionSnapshot{Version: c.s.Version, Protocol: c.s.Protocol,
		Workspaces: []schema.WorkspaceInfo{}, Tabs: []schema.TabInfo{}, Panes: []schema.PaneInfo{},
		Layouts: []schema.PaneLayoutSnapshot{}, Agents: []schema.AgentInfo{}}
	if f := w.focused; f != nil {
		wid, tid, pid := f.tab.ws.id, f.tab.id, f.id
		snap.FocusedWorkspaceID, snap.FocusedTabID, snap.FocusedPaneID = &wid, &tid, &pid
	}
	for i, ws := range w.workspaces {
		snap.Workspaces = append(snap.Workspaces, w.workspaceInfo(ws, i+1))
		for j, t := range ws.tabs {
			snap.Tabs = append(snap.Tabs, w.tabInfo(t, j+1))
			snap.Layouts = append(snap.Layouts, w.layout(t))
			for _, p := range t.panes {
				snap.Panes = append(snap.Panes, w.paneInfo(p))
				if p.term.isAgent() {
					snap.Agents = append(snap.Agents, w.agentInfo(p))
				}
			}
		}
	}
	return schema.ResultSessionSnapshot{Type: schema.ResultTypeSessionSnapshot, Snapshot: snap}, nil
}

// --- events.subscribe ---
