package herdrstate

import (
	"bytes"
	"encoding/json"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
)

// maxEvents is the size of Herdr's event hub ring.
const maxEvents = 512

type eventRec struct {
	seq    uint64
	kind   string // snake_case event kind
	line   []byte // the envelope, one JSON line without "\n", keys sorted
	status *schema.EventDataPaneAgentStatusChanged
}

type eventRing struct {
	seq  uint64
	recs []eventRec
	ids  []string // ids that appeared in events (for privacy tests)
}

// emit records a plain lifecycle event (w.mu held). Herdr turns every
// event line into a generic JSON value before writing it, so its keys are
// sorted at every level.
func (w *World) emit(d schema.EventData) {
	kind := d.Tag()
	data, err := jsonx.Marshal(d)
	if err != nil {
		panic(err)
	}
	line := sortedEnvelope(kind, data)
	w.events.seq++
	w.events.recs = append(w.events.recs, eventRec{seq: w.events.seq, kind: kind, line: line, status: d.PaneAgentStatusChanged})
	if len(w.events.recs) > maxEvents {
		w.events.recs = append(w.events.recs[:0:0], w.events.recs[len(w.events.recs)-maxEvents:]...)
	}
	w.bump()
}

// sortedEnvelope writes {"data":…,"event":kind} with every object's keys
// in alphabetical order, as serde_json::Value (without preserve_order)
// writes them.
func sortedEnvelope(kind string, data []byte) []byte {
	var v any
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		panic(err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"event": kind, "data": v}); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// eventAfter returns the first event of kind with a sequence above after.
func (w *World) eventAfter(kind string, after uint64) (eventRec, bool) {
	for _, r := range w.events.recs {
		if r.seq > after && r.kind == kind {
			return r, true
		}
	}
	return eventRec{}, false
}

// statusEventsAfter returns the pane_agent_status_changed events of
// paneID with a sequence above after, in order.
func (w *World) statusEventsAfter(paneID string, after uint64) []eventRec {
	var out []eventRec
	for _, r := range w.events.recs {
		if r.seq > after && r.status != nil && r.status.PaneID == paneID {
			out = append(out, r)
		}
	}
	return out
}

func (w *World) emitStatus(p *pane) {
	w.emit(schema.EventData{PaneAgentStatusChanged: &schema.EventDataPaneAgentStatusChanged{
		PaneID: p.id, WorkspaceID: p.tab.ws.id, AgentStatus: p.term.status(), Agent: p.term.label,
		Title: p.term.meta.title, DisplayAgent: p.term.meta.displayAgent, StateLabels: p.term.meta.stateLabels,
	}})
}

func (w *World) emitPaneUpdated(p *pane) {
	w.emit(schema.EventData{PaneUpdated: &schema.EventDataPaneUpdated{Pane: w.paneInfo(p)}})
}

func (w *World) wsNumber(ws *workspace) int {
	for i, x := range w.workspaces {
		if x == ws {
			return i + 1
		}
	}
	return 0
}

// closePane removes p and its terminal (w.mu held). Closing the last pane
// of a workspace closes the workspace; the last of a tab, the tab.
func (w *World) closePane(p *pane) {
	w.failQueued(p.term)
	t, ws := p.tab, p.tab.ws
	// workspace_closed carries the workspace as it was before the close.
	before := w.workspaceInfo(ws, w.wsNumber(ws))
	for i, q := range t.panes {
		if q == p {
			t.panes = append(t.panes[:i:i], t.panes[i+1:]...)
			break
		}
	}
	for a, q := range w.aliases {
		if q == p {
			delete(w.aliases, a)
		}
	}
	p.term.name, p.term.label = nil, nil
	if p.term.recv != nil {
		p.term.recv.Stop()
		p.term.recv = nil
	}
	w.events.ids = append(w.events.ids, p.id, p.term.id)
	w.emit(schema.EventData{PaneClosed: &schema.EventDataPaneClosed{PaneID: p.id, WorkspaceID: ws.id}})
	if len(t.panes) == 0 {
		for i, x := range ws.tabs {
			if x == t {
				ws.tabs = append(ws.tabs[:i:i], ws.tabs[i+1:]...)
				break
			}
		}
	}
	if len(ws.tabs) == 0 {
		info := before
		for i, x := range w.workspaces {
			if x == ws {
				w.workspaces = append(w.workspaces[:i:i], w.workspaces[i+1:]...)
				break
			}
		}
		w.emit(schema.EventData{WorkspaceClosed: &schema.EventDataWorkspaceClosed{WorkspaceID: ws.id, Workspace: &info}})
	} else if len(t.panes) > 0 {
		w.emit(schema.EventData{LayoutUpdated: &schema.EventDataLayoutUpdated{Layout: w.layout(t)}})
	}
	if w.focused == p {
		w.focused = nil
		if ps := w.panes(); len(ps) > 0 {
			w.focused = ps[0]
		}
	}
	w.bump()
}

// movePane moves p to the end of tab dst (w.mu held), giving it a new id
// when the workspace changes. newTab and newWS say the move made dst (and
// its workspace). Events follow Herdr's order: tab_closed,
// workspace_closed (without a snapshot), workspace_created, tab_created,
// pane_moved, then layout_updated for the source tab (when it remains)
// and the target tab.
//
// Long: Herdr's pane.move is one transaction: detach, create, attach, clean
// up, and the events of each step, in Herdr's order.
func (w *World) movePane(p *pane, dst *tab, newTab, newWS bool) schema.PaneMoveResult {
	src := p.tab
	res := schema.PaneMoveResult{PreviousPaneID: p.id, PreviousTabID: src.id, PreviousWorkspaceID: src.ws.id}
	if src == dst {
		reason := schema.PaneMoveReasonSameTab
		res.Reason = &reason
		res.Pane = w.paneInfo(p)
		res.TargetLayout = w.layout(dst)
		res.FocusedPaneID = res.TargetLayout.FocusedPaneID
		return res
	}
	for i, q := range src.panes {
		if q == p {
			src.panes = append(src.panes[:i:i], src.panes[i+1:]...)
			break
		}
	}
	if dst.ws != src.ws {
		old := p.id
		dst.ws.paneSeq++
		p.id = dst.ws.id + ":p" + EncodeNumber(uint64(dst.ws.paneSeq))
		w.aliases[old] = p
		w.events.ids = append(w.events.ids, old)
	}
	p.tab = dst
	dst.panes = append(dst.panes, p)
	res.Changed = true
	if len(src.panes) == 0 {
		for i, x := range src.ws.tabs {
			if x == src {
				src.ws.tabs = append(src.ws.tabs[:i:i], src.ws.tabs[i+1:]...)
				break
			}
		}
		id := src.id
		res.ClosedTabID = &id
		if len(src.ws.tabs) == 0 {
			for i, x := range w.workspaces {
				if x == src.ws {
					w.workspaces = append(w.workspaces[:i:i], w.workspaces[i+1:]...)
					break
				}
			}
			wid := src.ws.id
			res.ClosedWorkspaceID = &wid
		}
	} else {
		sl := w.layout(src)
		res.SourceLayout = &sl
	}
	if w.focused == p || w.focused == nil {
		w.focused = p
	}
	if newTab || newWS {
		ti := w.tabInfo(dst, w.tabNumber(dst))
		res.CreatedTab = &ti
	}
	if newWS {
		wi := w.workspaceInfo(dst.ws, w.wsNumber(dst.ws))
		res.CreatedWorkspace = &wi
	}
	res.Pane = w.paneInfo(p)
	res.TargetLayout = w.layout(dst)
	res.FocusedPaneID = res.TargetLayout.FocusedPaneID
	if res.ClosedTabID != nil {
		w.emit(schema.EventData{TabClosed: &schema.EventDataTabClosed{TabID: *res.ClosedTabID, WorkspaceID: res.PreviousWorkspaceID}})
	}
	if res.ClosedWorkspaceID != nil {
		w.emit(schema.EventData{WorkspaceClosed: &schema.EventDataWorkspaceClosed{WorkspaceID: *res.ClosedWorkspaceID}})
	}
	if res.CreatedWorkspace != nil {
		w.emit(schema.EventData{WorkspaceCreated: &schema.EventDataWorkspaceCreated{Workspace: *res.CreatedWorkspace}})
	}
	if res.CreatedTab != nil {
		w.emit(schema.EventData{TabCreated: &schema.EventDataTabCreated{Tab: *res.CreatedTab}})
	}
	w.emit(schema.EventData{PaneMoved: &schema.EventDataPaneMoved{Pane: res.Pane, PreviousPaneID: res.PreviousPaneID,
		PreviousTabID: res.PreviousTabID, PreviousWorkspaceID: res.PreviousWorkspaceID, ClosedTabID: res.ClosedTabID,
		ClosedWorkspaceID: res.ClosedWorkspaceID, CreatedTab: res.CreatedTab, CreatedWorkspace: res.CreatedWorkspace}})
	if res.SourceLayout != nil {
		w.emit(schema.EventData{LayoutUpdated: &schema.EventDataLayoutUpdated{Layout: *res.SourceLayout}})
	}
	w.emit(schema.EventData{LayoutUpdated: &schema.EventDataLayoutUpdated{Layout: res.TargetLayout}})
	w.bump()
	return res
}

func (w *World) tabNumber(t *tab) int {
	for i, x := range t.ws.tabs {
		if x == t {
			return i + 1
		}
	}
	return 0
}
