package herdrstate

import (
	"strings"

	"github.com/herdr-link/herdr-link/schema"
)

// Methods of later protocols than the generated schema's (20), by the
// release field that enables them.
const (
	MethodPaneLinkResolve     = "pane.link.resolve"
	ResultTypePaneLinkResolve = "pane_link_resolved"
)

// takeSubmission returns the submission the last prompt started (w.mu
// held) and forgets it.
func (w *World) takeSubmission() *submission {
	sub := w.lastSubmit
	w.lastSubmit = nil
	return sub
}

// linkParams is PaneLinkActivateParams of the protocol-22 schema (shared
// by pane.link.resolve).
type linkParams struct {
	PaneID *string `json:"pane_id"`
	Row    *uint16 `json:"viewport_row"`
	Col    *uint16 `json:"col"`
}

// handlerFor is the handler of method under the world's release.
func (w *World) handlerFor(method string) (handler, bool) {
	if method == MethodPaneLinkResolve {
		w.mu.Lock()
		ok := w.rel().LinkResolve
		w.mu.Unlock()
		return paneLinkResolve, ok
	}
	h, ok := handlers[method]
	return h, ok
}

type linkRegion struct {
	Row      uint16 `json:"row"`
	StartCol uint16 `json:"start_col"`
	EndCol   uint16 `json:"end_col"`
}

type linkResolved struct {
	Type    string       `json:"type"`
	Regions []linkRegion `json:"regions"`
}

// paneLinkResolve answers pane.link.resolve: the display cells of the
// link (an http or https URL in the simulator) under the viewport cell,
// none when there is none. Modelled from the protocol-22 schema
// (PaneLinkActivateParams, result pane_link_resolved with regions).
func paneLinkResolve(c *call) (any, *herdrError) {
	var p linkParams
	c.params(&p)
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	pn, e := c.w.paneArg(*p.PaneID)
	if e != nil {
		return nil, e
	}
	lines := strings.Split(screenOf(pn.term, schema.ReadSourceVisible, true), "\n")
	if len(lines) > ViewportRows {
		lines = lines[len(lines)-ViewportRows:]
	}
	out := linkResolved{Type: ResultTypePaneLinkResolve, Regions: []linkRegion{}}
	if int(*p.Row) < len(lines) {
		if s, end, ok := urlAt(lines[*p.Row], int(*p.Col)); ok {
			out.Regions = append(out.Regions, linkRegion{Row: *p.Row, StartCol: uint16(s), EndCol: uint16(end)})
		}
	}
	return out, nil
}

// urlAt finds the http(s) URL covering column col of line (columns are
// runes here); end is inclusive.
func urlAt(line string, col int) (start, end int, ok bool) {
	rs := []rune(line)
	for i := 0; i < len(rs); {
		rest := string(rs[i:])
		if !strings.HasPrefix(rest, "http://") && !strings.HasPrefix(rest, "https://") {
			i++
			continue
		}
		j := i
		for j < len(rs) && rs[j] != ' ' && rs[j] != '\t' {
			j++
		}
		if col >= i && col < j {
			return i, j - 1, true
		}
		i = j
	}
	return 0, 0, false
}

// recentText applies the release's "recent" read (w.mu held): 0.8.2
// returned only the lines that had scrolled off the viewport.
func (w *World) recentText(source schema.ReadSource, text string) string {
	if w.release == nil || w.release.RecentIncludesViewport {
		return text
	}
	if source != schema.ReadSourceRecent && source != schema.ReadSourceRecentUnwrapped {
		return text
	}
	lines := strings.Split(text, "\n")
	if len(lines) <= ViewportRows {
		return ""
	}
	return strings.Join(lines[:len(lines)-ViewportRows], "\n")
}
