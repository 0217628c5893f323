package herdrstate

import (
	"strings"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
)

type subState struct {
	plainKind string // snake_case kind for plain subscriptions
	cursor    uint64
	paneID    string // for pane.agent_status_changed
	filter    *schema.AgentStatus
	last      schema.AgentStatus
	pane      *pane
	initial   []byte // the first event of a filter already matched
}

// statusLine is the subscription line of a status change.
func statusLine(ev schema.PaneAgentStatusChangedEvent) []byte {
	data, _ := jsonx.Marshal(ev)
	return sortedEnvelope(schema.SubscriptionTagPaneAgentStatusChanged, data)
}

func (w *World) statusEvent(p *pane) schema.PaneAgentStatusChangedEvent {
	m := p.term.meta
	return schema.PaneAgentStatusChangedEvent{PaneID: p.id, WorkspaceID: p.tab.ws.id, AgentStatus: p.term.status(), Agent: p.term.label,
		Title: m.title, DisplayAgent: m.displayAgent, StateLabels: m.stateLabels}
}

// pollStatus is one tick of a pane.agent_status_changed subscription, as
// Herdr polls it (w.mu held): the pane's status events in the hub, one per
// tick, each one delivered (filtered on the wanted status); the initial
// event of a filter the pane already matched when nothing happened since;
// a pane snapshot when the hub has nothing.
func (w *World) pollStatus(st *subState) []byte {
	saw := false
	for _, r := range w.statusEventsAfter(st.paneID, st.cursor) {
		st.cursor = r.seq
		saw = true
		st.last = r.status.AgentStatus
		if st.filter != nil && *st.filter != r.status.AgentStatus {
			continue
		}
		st.initial = nil
		return statusLine(schema.PaneAgentStatusChangedEvent{PaneID: r.status.PaneID, WorkspaceID: r.status.WorkspaceID,
			AgentStatus: r.status.AgentStatus, Agent: r.status.Agent, Title: r.status.Title, DisplayAgent: r.status.DisplayAgent,
			StateLabels: r.status.StateLabels})
	}
	st.cursor = w.events.seq
	if saw {
		st.initial = nil
	} else if st.initial != nil {
		line := st.initial
		st.initial = nil
		return line
	}
	if w.paneByTarget(st.paneID) != st.pane {
		return nil
	}
	cur := st.pane.term.status()
	if cur == st.last {
		return nil
	}
	st.last = cur
	if st.filter != nil && *st.filter != cur {
		return nil
	}
	return statusLine(w.statusEvent(st.pane))
}

// specialPaneKinds are the subscriptions that probe a pane first.
var specialPaneKinds = map[string]bool{
	schema.SubscriptionTagPaneAgentStatusChanged: true,
	schema.SubscriptionTagPaneOutputMatched:      true,
	schema.SubscriptionTagPaneScrollChanged:      true,
}

func subPaneID(sub schema.Subscription) string {
	switch {
	case sub.PaneAgentStatusChanged != nil:
		return sub.PaneAgentStatusChanged.PaneID
	case sub.PaneOutputMatched != nil:
		return sub.PaneOutputMatched.PaneID
	case sub.PaneScrollChanged != nil:
		return sub.PaneScrollChanged.PaneID
	}
	return ""
}

// ProbeError is a subscription whose pane does not exist: Herdr answers
// it with the error of its probe, under the id <request id>:sub:<Index>:probe.
type ProbeError struct {
	Index int
	schema.ErrorBody
}

// Subscription is the state of one events.subscribe request: one cursor
// per subscription it names.
type Subscription struct {
	w    *World
	subs []*subState
	gen  uint64 // its number among the world's subscriptions
	lost bool   // events_lost was reported: it polls nothing more
}

// Subscribe starts the subscriptions of p, as Herdr does before it
// answers subscription_started: the pane subscriptions probe their pane
// first. Output-matched and scroll subscriptions are accepted but never
// fire.
func (w *World) Subscribe(p schema.EventsSubscribeParams) (*Subscription, *ProbeError) {
	var subs []*subState
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, sub := range p.Subscriptions {
		tag := sub.Tag()
		st := &subState{}
		if specialPaneKinds[tag] {
			pid := subPaneID(sub)
			pn := w.paneByTarget(pid)
			if pn == nil {
				return nil, &ProbeError{i, schema.ErrorBody{Code: "pane_not_found", Message: "pane " + pid + " not found"}}
			}
			if tag != schema.SubscriptionTagPaneAgentStatusChanged {
				continue // accepted, but the simulator produces no such events
			}
			st.paneID, st.pane, st.filter, st.last, st.cursor = pn.id, pn, sub.PaneAgentStatusChanged.AgentStatus, pn.term.status(), w.events.seq
			if st.filter != nil && *st.filter == st.last {
				st.initial = statusLine(w.statusEvent(pn))
			}
		} else {
			st.plainKind = strings.ReplaceAll(tag, ".", "_")
			if !w.rel().SubscribeReplays {
				st.cursor = w.events.seq // 0.9: live events only
			}
		}
		subs = append(subs, st)
	}
	w.f95.subGen++
	return &Subscription{w: w, subs: subs, gen: w.f95.subGen}, nil
}

// Poll is one tick of the subscriptions, as Herdr polls them: the event
// lines to write now, in order, keys sorted.
func (s *Subscription) Poll() [][]byte {
	w := s.w
	var lines [][]byte
	w.mu.Lock()
	defer w.mu.Unlock()
	if s.lost || w.lostNow(s) {
		s.lost = true
		return nil
	}
	batch := 1
	if w.rel().EventsLost {
		batch = drainBatch // 0.9.2 drains the retained events in batches
	}
	for _, st := range s.subs {
		if st.plainKind != "" {
			for range batch {
				r, ok := w.eventAfter(st.plainKind, st.cursor)
				if !ok {
					break
				}
				st.cursor = r.seq
				lines = append(lines, r.line)
			}
			continue
		}
		if line := w.pollStatus(st); line != nil {
			lines = append(lines, line)
		}
	}
	return lines
}

// drainBatch is how many retained events of one kind a 0.9.2 subscription
// writes per tick at most (the batch size is inferred; #4225 drains in
// bounded batches).
const drainBatch = 64

// Lost reports whether the subscription lost events (0.9.2's
// events_lost): the server writes that error and closes it.
func (s *Subscription) Lost() bool {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	return s.lost
}
