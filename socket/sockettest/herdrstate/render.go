package herdrstate

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/herdr-link/herdr-link/schema"
)

func (w *World) agentInfo(p *pane) schema.AgentInfo {
	t := p.term
	info := schema.AgentInfo{
		TerminalID:       t.id,
		Name:             t.name,
		Agent:            t.label,
		AgentStatus:      t.status(),
		WorkspaceID:      p.tab.ws.id,
		TabID:            p.tab.id,
		PaneID:           p.id,
		Focused:          p == w.focused,
		StateChangeSeq:   t.seq,
		Revision:         t.revision,
		LaunchPending:    t.launch == launchPending || t.launch == launchBlocked,
		InteractiveReady: t.interactiveReady,
		AgentSession:     t.session,
		// Written only when true, as Herdr does.
		ScreenDetectionSkipped: t.skipDetection,
	}
	if t.launch == launchPending {
		// Real Herdr 0.8.2 names no kind before its detection sees the
		// launched program (agent.start's answer does).
		info.Agent = nil
	}
	info.TerminalTitle, info.TerminalTitleStripped = t.titles()
	info.CWD, info.ForegroundCWD = p.cwds()
	info.Title, info.DisplayAgent, info.StateLabels, info.Tokens = t.meta.title, t.meta.displayAgent, t.meta.stateLabels, t.meta.tokens
	return info
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// cwds are a pane's cwd and its foreground process's cwd (the same here).
func (p *pane) cwds() (*string, *string) {
	if p.cwd == "" {
		return nil, nil
	}
	a, b := p.cwd, p.cwd
	return &a, &b
}

// titles are the terminal title and the title without a leading spinner
// or status glyph ("✳ task" → "task").
func (t *terminal) titles() (*string, *string) {
	if t.title == nil {
		return nil, nil
	}
	full, stripped := *t.title, *t.title
	if r, size := utf8.DecodeRuneInString(stripped); r >= 0x80 && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
		stripped = strings.TrimLeft(stripped[size:], " ")
	}
	return &full, &stripped
}

func (w *World) paneInfo(p *pane) schema.PaneInfo {
	info := schema.PaneInfo{
		PaneID:      p.id,
		TerminalID:  p.term.id,
		WorkspaceID: p.tab.ws.id,
		TabID:       p.tab.id,
		Focused:     p == w.focused,
		AgentStatus: schema.AgentStatusUnknown,
		Agent:       p.term.label,
		Revision:    p.term.revision,
		Scroll:      &schema.PaneScrollInfo{ViewportRows: 40},
	}
	if p.term.label != nil {
		info.AgentStatus = p.term.status()
		info.AgentSession = p.term.session
		m := p.term.meta
		info.Title, info.DisplayAgent, info.StateLabels, info.Tokens = m.title, m.displayAgent, m.stateLabels, m.tokens
	}
	info.Label = optional(p.label)
	info.TerminalTitle, info.TerminalTitleStripped = p.term.titles()
	info.CWD, info.ForegroundCWD = p.cwds()
	return info
}

func aggregate(statuses []schema.AgentStatus) schema.AgentStatus {
	// Herdr's attention order (pane_attention_priority): an unseen
	// completion outranks work in progress.
	rank := map[schema.AgentStatus]int{schema.AgentStatusBlocked: 5, schema.AgentStatusDone: 4, schema.AgentStatusWorking: 3, schema.AgentStatusIdle: 2, schema.AgentStatusUnknown: 1}
	best := schema.AgentStatusUnknown
	for _, s := range statuses {
		if rank[s] > rank[best] {
			best = s
		}
	}
	return best
}

func (w *World) tabInfo(t *tab, number int) schema.TabInfo {
	var st []schema.AgentStatus
	focused := false
	for _, p := range t.panes {
		if p.term.label != nil {
			st = append(st, p.term.status())
		}
		focused = focused || p == w.focused
	}
	label := t.label
	if label == "" {
		label = strconv.Itoa(number)
	}
	return schema.TabInfo{TabID: t.id, WorkspaceID: t.ws.id, Number: uint(number), Label: label, Focused: focused,
		PaneCount: uint(len(t.panes)), AgentStatus: aggregate(st)}
}

func (w *World) workspaceInfo(ws *workspace, number int) schema.WorkspaceInfo {
	var st []schema.AgentStatus
	panes, focused := 0, false
	active := ws.tabs[0].id
	for _, t := range ws.tabs {
		for _, p := range t.panes {
			panes++
			if p.term.label != nil {
				st = append(st, p.term.status())
			}
			if p == w.focused {
				focused = true
				active = t.id
			}
		}
	}
	return schema.WorkspaceInfo{WorkspaceID: ws.id, Number: uint(number), Label: ws.label, Focused: focused,
		PaneCount: uint(panes), TabCount: uint(len(ws.tabs)), ActiveTabID: active, AgentStatus: aggregate(st),
		Tokens: ws.tokens, Worktree: ws.worktree}
}

func (w *World) layout(t *tab) schema.PaneLayoutSnapshot {
	const width, height = 200, 50
	l := schema.PaneLayoutSnapshot{TabID: t.id, WorkspaceID: t.ws.id, Area: schema.PaneLayoutRect{Width: width, Height: height},
		FocusedPaneID: t.panes[0].id, Panes: []schema.PaneLayoutPane{}, Splits: []schema.PaneLayoutSplit{}}
	n := len(t.panes)
	for i, p := range t.panes {
		x := uint16(i * width / n)
		wd := uint16((i+1)*width/n) - x
		l.Panes = append(l.Panes, schema.PaneLayoutPane{PaneID: p.id, Focused: p == w.focused, Rect: schema.PaneLayoutRect{X: x, Width: wd, Height: height}})
		if p == w.focused {
			l.FocusedPaneID = p.id
		}
		if i > 0 {
			l.Splits = append(l.Splits, schema.PaneLayoutSplit{ID: "s" + strconv.Itoa(i), Direction: schema.SplitDirectionRight,
				Ratio: float64(i) / float64(n), Rect: schema.PaneLayoutRect{Width: width, Height: height}})
		}
	}
	return l
}

// --- mutations for tests (exported) ---
