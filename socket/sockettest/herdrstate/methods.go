package herdrstate

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
)

// Env is what a request sees of the server answering it: what it reports
// about itself, its timings and its lifetime.
type Env struct {
	// Version and Protocol are what session.snapshot reports.
	Version  string
	Protocol uint32
	// Tick is the poll interval of waits (100 ms).
	Tick time.Duration
	// SubmitDelay is the delay between a prompt's text and its Enter, on
	// the world's clock (300 ms).
	SubmitDelay time.Duration
	// EffectTimeout bounds agent.prompt's wait for a state change (5 s).
	EffectTimeout time.Duration
	// Done is closed when the server closes: waits end with
	// server_unavailable.
	Done <-chan struct{}
	// Waiting counts the requests blocked in a wait.
	Waiting *atomic.Int64
}

// call is one request being handled.
type call struct {
	s   *Env
	w   *World
	raw jsonx.RawMessage // the params, already checked
	ctx context.Context  // cancelled when a waiting client goes away
}

func (c *call) params(v any) {
	// parseRequest already checked the params against their type.
	_ = jsonx.Unmarshal(c.raw, v)
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
	for m, h := range startHandlers {
		handlers[m] = h
	}
	for m, h := range inputHandlers {
		handlers[m] = h
	}
}

// Methods lists the methods [World.Handle] answers.
func Methods() []string {
	out := make([]string, 0, len(handlers))
	for m := range handlers {
		out = append(out, m)
	}
	return out
}

// Handle answers one request of method with params (checked as Herdr's
// parser checks them) against w: its result, or Herdr's error. ctx is
// cancelled when the client of a waiting request ([Waits]) goes away;
// the result is then of no use. A method Handle does not know answers
// not_implemented_in_simulator.
func (w *World) Handle(ctx context.Context, env *Env, method string, params jsonx.RawMessage) (any, *schema.ErrorBody) {
	h, ok := w.handlerFor(method)
	if !ok {
		return nil, &schema.ErrorBody{Code: "not_implemented_in_simulator", Message: "herdr-sim does not implement " + method}
	}
	res, e := h(&call{s: env, w: w, raw: params, ctx: ctx})
	if e != nil {
		return nil, &schema.ErrorBody{Code: e.code, Message: e.msg}
	}
	if w.Release().CompletionSeq {
		res = w.withCompletion(res)
	}
	return res, nil
}

// Waits reports whether a request holds its connection and watches for
// the client going away: agent.wait, and agent.prompt with wait. Without
// wait, agent.prompt is an ordinary request: Herdr never reads the
// connection again and always replies, even to a half-closed client or
// one that sent a stray byte.
func Waits(method string, params jsonx.RawMessage) bool {
	if method != schema.MethodAgentPrompt {
		return waits[method]
	}
	var p struct {
		Wait jsonx.RawMessage `json:"wait"`
	}
	_ = jsonx.Unmarshal(params, &p)
	return len(p.Wait) > 0 && string(p.Wait) != "null"
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

// herdrError is an error response of a method.
type herdrError struct{ code, msg string }

func herr(code, format string, args ...any) *herdrError {
	return &herdrError{code: code, msg: fmt.Sprintf(format, args...)}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
