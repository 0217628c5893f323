package herdrstate

import (
	"time"

	"github.com/herdr-link/herdr-link/schema"
)

// promptAndWait is agent.prompt with wait (Herdr's server-side wait).
func (c *call) promptAndWait(p schema.AgentPromptParams) (any, *herdrError) {
	w := c.w
	start := time.Now()
	w.mu.Lock()
	if _, e := w.resolveAgent(p.Target); e != nil { // agent.get runs first
		w.mu.Unlock()
		return nil, e
	}
	pn, _, e := c.prompt(p)
	sub := w.takeSubmission()
	if e != nil {
		w.mu.Unlock()
		return nil, e
	}
	pin := pinAgent(pn, p.Target != pn.id)
	term := pn.term
	seq0 := term.seq
	status := term.status()
	w.mu.Unlock()
	if e := c.awaitSubmission(sub); e != nil {
		return nil, e
	}

	var timeout time.Duration
	hasTimeout := p.Wait.TimeoutMS != nil
	if hasTimeout {
		timeout = time.Duration(*p.Wait.TimeoutMS) * time.Millisecond
	}
	if status != schema.AgentStatusWorking {
		gate := c.s.EffectTimeout
		if hasTimeout && timeout < gate {
			gate = timeout
		}
		ok, e := c.waitFor(start.Add(gate), func() (bool, *herdrError) {
			if pin.gone(w) {
				return false, errNotRunning()
			}
			return term.seq > seq0, nil
		})
		if e != nil {
			return nil, e
		}
		if !ok {
			if hasTimeout && *p.Wait.TimeoutMS <= uint64(c.s.EffectTimeout/time.Millisecond) {
				return nil, herr("timeout", "timed out waiting for agent status")
			}
			w.mu.Lock()
			st, sq := term.status(), term.seq
			w.mu.Unlock()
			return nil, herr("agent_prompt_stalled", "agent prompt produced no observed state change within %d ms; status is %s and state_change_seq remained %d",
				c.s.EffectTimeout.Milliseconds(), st, sq)
		}
	}
	var deadline time.Time
	if hasTimeout {
		deadline = start.Add(timeout)
	}
	final, e := c.waitStatus(pin, p.Wait.Until, deadline, false)
	if e != nil {
		return nil, e
	}
	return schema.ResultAgentPrompted{Type: schema.ResultTypeAgentPrompted, Agent: final}, nil
}

// pinned is the agent a wait follows (Herdr pins it by terminal, agent
// label, and name when the target was a name).
type pinned struct {
	pn                  *pane
	term                *terminal
	label, name, paneID string
	byName              bool
	cursor              uint64 // hub sequence when the wait started
}

func pinAgent(pn *pane, byName bool) pinned {
	return pinned{pn: pn, term: pn.term, label: derefOr(pn.term.label), name: derefOr(pn.term.name), paneID: pn.id, byName: byName}
}

// pinAt is pinAgent that also remembers the hub position (w.mu held), for
// waits that accept transient statuses.
func (w *World) pinAt(pn *pane, byName bool) pinned {
	p := pinAgent(pn, byName)
	p.cursor = w.events.seq
	return p
}

// gone reports (w.mu held) whether the pane closed or moved (its id
// changed), or its occupant exited, was replaced or lost its name.
func (p pinned) gone(w *World) bool {
	if p.pn.id != p.paneID || w.paneByID(p.paneID) != p.pn || p.pn.term != p.term || derefOr(p.term.label) != p.label {
		return true
	}
	return p.byName && derefOr(p.term.name) != p.name
}

func errNotRunning() *herdrError {
	return herr("agent_not_running", "agent is no longer running in the target pane")
}

// defaultUntil is the status set waits use when the request names none.
var defaultUntil = []schema.AgentStatus{schema.AgentStatusIdle, schema.AgentStatusDone, schema.AgentStatusBlocked}

// waitStatus waits until the pinned agent's status is in until (default:
// idle, done, blocked), the deadline (zero: none) passes, or it is gone.
//
// With transient (agent.wait), a status the agent passed through since the
// wait started counts too, as Herdr reads it from the event hub: the reply
// is the current record carrying that status.
func (c *call) waitStatus(p pinned, until []schema.AgentStatus, deadline time.Time, transient bool) (schema.AgentInfo, *herdrError) {
	if len(until) == 0 {
		until = defaultUntil
	}
	var info schema.AgentInfo
	ok, e := c.waitFor(deadline, func() (bool, *herdrError) {
		if p.gone(c.w) {
			return false, errNotRunning()
		}
		if transient {
			var matched *schema.AgentStatus
			for _, r := range c.w.statusEventsAfter(p.paneID, p.cursor) {
				p.cursor = r.seq
				if inStatuses(r.status.AgentStatus, until) {
					st := r.status.AgentStatus
					matched = &st
				}
			}
			if matched != nil {
				info = c.w.agentInfo(p.pn)
				info.AgentStatus = *matched
				return true, nil
			}
		}
		if inStatuses(p.term.status(), until) {
			info = c.w.agentInfo(p.pn)
			return true, nil
		}
		return false, nil
	})
	if e != nil {
		return info, e
	}
	if !ok {
		return info, herr("timeout", "timed out waiting for agent status")
	}
	return info, nil
}

func derefOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func inStatuses(s schema.AgentStatus, l []schema.AgentStatus) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// waitFor polls check (under w.mu) every Tick until it reports done, an
// error, the deadline (zero: none) or the client leaving. ok is false on
// deadline or departure.
func (c *call) waitFor(deadline time.Time, check func() (bool, *herdrError)) (bool, *herdrError) {
	for counted := false; ; {
		c.w.mu.Lock()
		done, e := check()
		c.w.mu.Unlock()
		if e != nil || done {
			return done, e
		}
		if !counted {
			counted = true
			c.s.Waiting.Add(1)
			defer c.s.Waiting.Add(-1)
		}
		wait := c.s.Tick
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return false, nil
			}
			if left < wait {
				wait = left
			}
		}
		select {
		case <-c.ctx.Done():
			return false, nil
		case <-c.s.Done:
			return false, herr("server_unavailable", "server is shutting down")
		case <-time.After(wait):
		}
	}
}

func agentWait(c *call) (any, *herdrError) {
	var p schema.AgentWaitParams
	c.params(&p)
	w := c.w
	w.mu.Lock()
	pn, e := w.resolveAgent(p.Target)
	if e != nil {
		w.mu.Unlock()
		return nil, e
	}
	pin := w.pinAt(pn, false)
	w.mu.Unlock()
	var deadline time.Time
	if p.TimeoutMS != nil {
		deadline = time.Now().Add(time.Duration(*p.TimeoutMS) * time.Millisecond)
	}
	info, e := c.waitStatus(pin, p.Until, deadline, true)
	if e != nil {
		return nil, e
	}
	return schema.ResultAgentInfo{Type: schema.ResultTypeAgentInfo, Agent: info}, nil
}
