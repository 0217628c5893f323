package hosttest

import (
	"fmt"
	"slices"

	"github.com/herdr-link/herdr-link/e2e/internal/fakemodel"
)

// SessionMetrics is what one session's model requests show.
type SessionMetrics struct {
	// Activation is the index (among script requests) of the request that
	// carried the activation result; -1 when there was none.
	Activation int `json:"activation"`
	// NamesBefore are the herdr-link tools listed in the request in which
	// the model activated; BehindSearch says they had to be loaded
	// through the host's tool search first.
	NamesBefore  []string `json:"names_before"`
	BehindSearch bool     `json:"behind_search"`
	// NamesAfter are those of the session's last request.
	NamesAfter []string `json:"names_after"`
	// ListChanged: "at once", "1 step late" ("N steps late"), "via tool
	// search", "no", "n/a".
	ListChanged string `json:"list_changed"`
	Honoured    bool   `json:"honoured"`
	// Dormant and Active are the largest herdr-link definitions in one
	// request before and after the activation result.
	Dormant int `json:"dormant"`
	Active  int `json:"active"`
}

var tier1 = []string{fakemodel.Peers, fakemodel.StartTool, fakemodel.Send, fakemodel.Wait, fakemodel.Close}

func displayName(t fakemodel.ToolDef) string {
	if t.Namespace != "" {
		return t.Namespace + "/" + t.Name
	}
	return t.Name
}

// linkNames are the host names of the herdr-link tools a request lists
// (loaded ones; deferred ones are marked).
func linkNames(q fakemodel.Request) []string {
	var out []string
	for _, t := range q.Tools {
		if t.Canonical == "" {
			continue
		}
		n := displayName(t)
		if t.Deferred {
			n += " (deferred)"
		}
		out = append(out, n)
	}
	return out
}

func tier1Listed(q fakemodel.Request) bool {
	for _, t := range q.Tools {
		if !t.Deferred && slices.Contains(tier1, t.Canonical) {
			return true
		}
	}
	return false
}

// measure computes a session's metrics from its fake model log.
func measure(reqs []fakemodel.Request) SessionMetrics {
	m := SessionMetrics{Activation: -1, ListChanged: "n/a"}
	main := mainRequests(reqs)
	if len(main) == 0 {
		return m
	}
	for i, q := range main {
		if slices.ContainsFunc(q.Results, func(r fakemodel.Result) bool { return r.Action == "activate" }) {
			m.Activation = i
			break
		}
	}
	m.NamesAfter = linkNames(main[len(main)-1])
	dormantEnd := len(main)
	if m.Activation >= 0 {
		dormantEnd = m.Activation
	}
	for i, q := range main {
		if i < dormantEnd {
			m.Dormant = max(m.Dormant, q.LinkDefBytes)
		} else {
			m.Active = max(m.Active, q.LinkDefBytes)
		}
	}
	if m.Activation < 0 {
		m.NamesBefore = linkNames(main[0])
		return m
	}
	if m.Activation > 0 {
		m.NamesBefore = linkNames(main[m.Activation-1])
		for _, q := range main[:m.Activation-1] {
			if q.Reply.Via == "search" {
				m.BehindSearch = true
			}
		}
	}
	j := -1
	for i := m.Activation; i < len(main); i++ {
		if tier1Listed(main[i]) {
			j = i
			break
		}
	}
	searched := false
	if j > m.Activation {
		for _, q := range main[m.Activation:j] {
			if q.Reply.Via == "search" {
				searched = true
			}
		}
	}
	switch {
	case j < 0 && m.Activation == len(main)-1:
		// The session ended right after activating: nothing to judge.
		m.ListChanged = "n/a"
	case j < 0:
		m.ListChanged = "no"
	case j == m.Activation:
		m.ListChanged, m.Honoured = "at once", true
	case searched:
		m.ListChanged, m.Honoured = "via tool search", true
	default:
		steps := "1 step late"
		if n := j - m.Activation; n > 1 {
			steps = fmt.Sprintf("%d steps late", n)
		}
		m.ListChanged, m.Honoured = steps, true
	}
	return m
}

// senderMetrics copies the sender session's view into the result.
func (r *Result) senderMetrics(a SessionResult) {
	m := a.Metrics
	r.NamesBefore, r.NamesAfter = m.NamesBefore, m.NamesAfter
	if m.BehindSearch {
		r.NamesBefore = append([]string{"ToolSearch →"}, r.NamesBefore...)
	}
	r.ListChanged, r.Honoured = m.ListChanged, m.Honoured
}

// footprint takes the largest per-request definitions of all sessions and
// checks them against the host's reference.
func (r *Result) footprint(ref Reference) {
	for _, s := range r.Sessions {
		if s.Host != "" && s.Host != r.Host {
			continue // another host's session (Mode.Reviewer)
		}
		r.DormantBytes = max(r.DormantBytes, s.Metrics.Dormant)
		r.ActiveBytes = max(r.ActiveBytes, s.Metrics.Active)
	}
	if ref.DormantMax > 0 && r.DormantBytes > ref.DormantMax {
		r.FootprintFailures = append(r.FootprintFailures, fmt.Sprintf("dormant herdr-link tool definitions take %d bytes per request, over the reference's %d", r.DormantBytes, ref.DormantMax))
	}
	if ref.ActiveMax > 0 && r.ActiveBytes > ref.ActiveMax {
		r.FootprintFailures = append(r.FootprintFailures, fmt.Sprintf("active herdr-link tool definitions take %d bytes per request, over the reference's %d", r.ActiveBytes, ref.ActiveMax))
	}
}
