// Package board is herdr-board: a terminal view of the conversation of a
// Herdr workspace's agents — the agents and their states, the messages
// held for busy agents, the open requests, recent outcomes and notices —
// read from Herdr (agent.list, events) and herdr-link's outbox. It never
// types anything into a pane; its one write is the cancellation of a held
// message its user confirmed.
package board

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link"
)

// Snapshot is what the board shows at one moment.
type Snapshot struct {
	// Scope says what is shown: "this workspace", or "every workspace"
	// when the board runs outside a Herdr pane.
	Scope    string
	Agents   []AgentRow
	Held     []HeldRow
	Requests []RequestRow
	Recent   []RecentRow
	// Err is why part of the view is missing ("" when whole).
	Err string
}

// AgentRow is an agent of the workspace.
type AgentRow struct {
	Name, Kind, Status string
	// Held is how many messages wait for it; Awaits how many of its
	// requests wait for an answer.
	Held, Awaits int
}

// HeldRow is a message held for a busy agent.
type HeldRow struct {
	ID       string
	From, To string
	Age      time.Duration
	Why      string
	Notice   bool
	Cancel   bool // it can be cancelled (held, not being typed)
}

// RequestRow is a request waiting for its answer.
type RequestRow struct {
	From, To string
	Age      time.Duration
	State    string // "not typed yet" (held) or "typed, no answer yet"
}

// RecentRow is an outcome of the last minutes: a request that ended, a
// held message that ended untyped, a notice typed.
type RecentRow struct {
	From, To string
	Ago      time.Duration
	What     string
}

// Source is where a snapshot is read from.
type Source struct {
	// Agents lists Herdr's agents (agent.list).
	Agents func(ctx context.Context) ([]link.Agent, error)
	// Store is herdr-link's outbox of that Herdr (nil: none).
	Store *outbox.Store
	// Workspace restricts the view to one workspace ("" for all).
	Workspace string
	// Now is the clock.
	Now func() time.Time
}

// Collect reads a snapshot. A part that cannot be read is left out, and
// Err says why.
func (s Source) Collect(ctx context.Context) Snapshot {
	now := s.Now()
	snap := Snapshot{Scope: "this workspace"}
	if s.Workspace == "" {
		snap.Scope = "every workspace"
	}
	var errs []string
	agents, err := s.Agents(ctx)
	if err != nil {
		errs = append(errs, "agents: "+err.Error())
	}
	byPane := map[string]*AgentRow{}
	byName := map[string]*AgentRow{}
	for _, a := range agents {
		if s.Workspace != "" && a.WorkspaceID != s.Workspace {
			continue
		}
		name := a.Name
		if name == "" {
			name = "(unnamed)"
		}
		snap.Agents = append(snap.Agents, AgentRow{Name: name, Kind: a.Kind, Status: link.State(a.Status)})
	}
	slices.SortFunc(snap.Agents, func(a, b AgentRow) int { return cmp.Compare(a.Name, b.Name) })
	for i := range snap.Agents {
		byName[snap.Agents[i].Name] = &snap.Agents[i]
	}
	for _, a := range agents {
		if r := byName[a.Name]; r != nil && a.Name != "" {
			byPane[a.PaneID] = r
		}
	}
	if s.Store != nil {
		if err := s.collectStore(&snap, now, byPane, byName); err != nil {
			errs = append(errs, "outbox: "+err.Error())
		}
	}
	snap.Err = strings.Join(errs, "; ")
	return snap
}

func (s Source) collectStore(snap *Snapshot, now time.Time, byPane, byName map[string]*AgentRow) error {
	ents, err := s.Store.List()
	if err != nil {
		return err
	}
	in := func(ws string) bool { return s.Workspace == "" || ws == s.Workspace }
	alive := map[string]bool{}
	ownerAlive := func(tok string) bool {
		ok, seen := alive[tok]
		if !seen {
			ok = s.Store.OwnerAlive(tok)
			alive[tok] = ok
		}
		return ok
	}
	for _, e := range ents {
		switch {
		case e.Held():
			m, err := s.Store.Read(e)
			if err != nil || !in(m.WorkspaceID) {
				continue
			}
			row := HeldRow{ID: m.ID, From: m.From, To: m.To, Age: now.Sub(m.Accepted), Notice: m.Notice,
				Cancel: e.State == outbox.StateHeld}
			row.Why = heldWhy(e, byPane[m.PaneID], ownerAlive(e.Owner))
			snap.Held = append(snap.Held, row)
			if r := byName[m.To]; r != nil {
				r.Held++
			}
		case e.State == outbox.StateEnded:
			m, err := s.Store.Read(e)
			if err != nil || !in(m.WorkspaceID) {
				continue
			}
			what := "not typed: " + m.End
			if m.Notice {
				what = "notice " + m.End
				if m.End == outbox.EndTyped {
					what = "notice typed"
				}
			}
			snap.Recent = append(snap.Recent, RecentRow{From: m.From, To: m.To, Ago: now.Sub(m.Ended), What: what})
		case e.IsRequest():
			r, err := s.Store.Request(e)
			if err != nil || !in(r.WorkspaceID) {
				continue
			}
			if r.State == outbox.StatePending {
				st := "typed, no answer yet"
				if r.Typed.IsZero() {
					st = "not typed yet"
				}
				snap.Requests = append(snap.Requests, RequestRow{From: r.From, To: r.To, Age: now.Sub(r.Accepted), State: st})
				if a := byName[r.From]; a != nil {
					a.Awaits++
				}
				continue
			}
			snap.Recent = append(snap.Recent, RecentRow{From: r.From, To: r.To, Ago: now.Sub(r.Ended), What: "request " + r.Outcome})
		}
	}
	slices.SortStableFunc(snap.Recent, func(a, b RecentRow) int { return cmp.Compare(a.Ago, b.Ago) })
	return nil
}

// heldWhy says why a held message waits: what its target is doing, and
// whether any herdr-link server is left to move it.
func heldWhy(e outbox.Entry, target *AgentRow, ownerAlive bool) string {
	var why string
	switch {
	case e.State == outbox.StateTyping:
		return "being typed"
	case target == nil:
		why = "target not found"
	case target.Status == "idle" || target.Status == "done":
		why = "target ready, its turn is next"
	default:
		why = "target " + target.Status
	}
	if !ownerAlive {
		why += "; sender's server gone (a hook or any server moves it)"
	}
	return why
}
