package sockettest

import (
	"context"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
)

// call is one request being handled.
type call struct {
	s   *Server
	w   *World
	req parsedRequest
	ctx context.Context // cancelled when a waiting client goes away
}

func (c *call) params(v any) {
	// parseRequest already checked the params against their type.
	_ = jsonx.Unmarshal(c.req.Params, v)
}

type handler func(*call) (any, *herdrError)

var handlers map[string]handler

// waits are the methods that hold the connection and watch for the client
// going away.
var waits = map[string]bool{schema.MethodAgentWait: true, schema.MethodAgentPrompt: true}

func init() {
	handlers = map[string]handler{
		schema.MethodAgentGet:        agentGet,
		schema.MethodAgentList:       agentList,
		schema.MethodAgentPrompt:     agentPrompt,
		schema.MethodAgentRename:     agentRename,
		schema.MethodAgentRead:       agentRead,
		schema.MethodAgentWait:       agentWait,
		schema.MethodPaneGet:         paneGet,
		schema.MethodPaneList:        paneList,
		schema.MethodPaneClose:       paneClose,
		schema.MethodPaneMove:        paneMove,
		schema.MethodPaneRead:        paneRead,
		schema.MethodWorkspaceList:   workspaceList,
		schema.MethodTabList:         tabList,
		schema.MethodSessionSnapshot: sessionSnapshot,
	}
}

// Implemented lists the methods the simulator implements; every other
// method of the schema answers not_implemented_in_simulator.
func Implemented() []string {
	out := []string{schema.MethodPing, schema.MethodServerStop, schema.MethodEventsSubscribe}
	for m := range handlers {
		out = append(out, m)
	}
	return out
}

// withParams is the shape most handlers share: decode the params into a P,
// then run f with the world locked.
func withParams[P any](c *call, f func(w *World, p *P) (any, *herdrError)) (any, *herdrError) {
	var p P
	c.params(&p)
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	return f(c.w, &p)
}

// onPane is withParams for pane.* methods: f gets the pane that the
// pane_id argument names (pane_not_found otherwise).
func onPane[P any](c *call, id func(*P) string, f func(w *World, pn *pane, p *P) (any, *herdrError)) (any, *herdrError) {
	return withParams(c, func(w *World, p *P) (any, *herdrError) {
		pn, e := w.paneArg(id(p))
		if e != nil {
			return nil, e
		}
		return f(w, pn, p)
	})
}

// onAgent is withParams for agent.* methods: f gets the pane of the agent
// the target argument names (Herdr's agent target rules).
func onAgent[P any](c *call, target func(*P) string, f func(w *World, pn *pane, p *P) (any, *herdrError)) (any, *herdrError) {
	return withParams(c, func(w *World, p *P) (any, *herdrError) {
		pn, e := w.resolveAgent(target(p))
		if e != nil {
			return nil, e
		}
		return f(w, pn, p)
	})
}
