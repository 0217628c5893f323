package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link"
)

// inflight is a tool call handed to the workers.
type inflight struct {
	h    *handler
	conn *jsonrpc2.Conn
	id   jsonrpc2.ID
	call parsedCall
	ctx  context.Context

	cancel context.CancelFunc
}

type handler struct {
	stream  *stream
	workers *workers
	opt     Options
	log     *slog.Logger
	ctx     context.Context
	bootCtx context.Context // the start-up bootstrap's lifetime

	mu          sync.Mutex
	revision    string
	initialized bool // initialize was answered
	active      bool
	bootOnce    sync.Once
	calls       tracker // tool calls and the bootstrap running
	shutdown    bool

	// contractSent: the Communication Contract went out with a result
	// (guarded by mu).
	contractSent bool

	responses sync.Pool // of *response, see respond
}

func (h *handler) structured() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.revision >= "2025-06-18"
}

// closeIntake stops starting new tool calls; those still arriving are
// dropped unanswered (the client is gone or going).
func (h *handler) closeIntake() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.shutdown = true
}

func (h *handler) cancelAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.shutdown = true
	h.stream.cancelAll()
}

// Handle is the connection's jsonrpc2.Handler. It runs in the
// connection's read loop, not wrapped in jsonrpc2.AsyncHandler: protocol
// messages (initialize, tools/list, ping, activation, cancellation) are
// handled in arrival order and answered at once, and tool work is handed
// to the workers (workers.go), so nothing here waits on Herdr and a ping
// is never behind a tool call.
func (h *handler) Handle(_ context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	defer func() {
		if p := recover(); p != nil {
			h.log.Error("mcp: handler panic", "method", req.Method, "panic", p, "stack", string(debug.Stack()))
			if !req.Notif {
				h.respondError(conn, req.ID, codeInternalError, "Internal error")
			}
		}
	}()
	if h.opt.beforeHandle != nil {
		h.opt.beforeHandle(req.Method)
	}
	if req.Notif {
		h.notification(req)
		return
	}
	h.mu.Lock()
	initialized := h.initialized
	h.mu.Unlock()
	switch req.Method {
	case "initialize":
		if initialized {
			// The MCP lifecycle has one initialize per session; a second
			// one would change the negotiated revision mid-session.
			h.respondError(conn, req.ID, codeInvalidRequest, "Invalid Request: this session is already initialized; initialize is sent once")
			return
		}
		h.initialize(conn, req)
	case "ping":
		h.respond(conn, req.ID, struct{}{})
	case "tools/list", "tools/call":
		if !initialized {
			h.respondError(conn, req.ID, codeInvalidRequest, "Invalid Request: "+req.Method+" before initialize; a session starts with initialize")
			return
		}
		if req.Method == "tools/call" {
			h.toolsCall(conn, req)
			return
		}
		h.mu.Lock()
		active := h.active
		h.mu.Unlock()
		h.respond(conn, req.ID, struct {
			Tools any `json:"tools"`
		}{toolList(h.opt.Link != nil, active, h.structured())})
	default:
		h.respondError(conn, req.ID, codeMethodNotFound, "Method not found: "+req.Method)
	}
}

func (h *handler) notification(req *jsonrpc2.Request) {
	switch req.Method {
	case "notifications/cancelled":
		m, _ := paramMap(req.Params)
		raw, ok := m["requestId"]
		if !ok {
			return
		}
		// Ids in flight are unique (the stream refuses duplicates), so the
		// cancellation reaches exactly the live request with that id; the
		// id is free for the client at once.
		if !h.stream.cancel(raw) {
			return
		}
		var reason string
		_ = jsonx.Unmarshal(m["reason"], &reason)
		h.log.Debug("mcp: cancelled", "id", string(raw), "reason", reason)
	case "notifications/initialized":
		h.mu.Lock()
		initialized := h.initialized
		h.mu.Unlock()
		if initialized {
			h.startBootstrap()
		}
	}
}

func (h *handler) startBootstrap() {
	if !h.opt.Bootstrap || h.opt.Link == nil {
		return
	}
	h.bootOnce.Do(func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.shutdown {
			return
		}
		h.calls.add()
		go func() {
			defer h.calls.done()
			// Bootstrap bounds itself with the Link's call deadline.
			name, err := h.opt.Link.Bootstrap(h.bootCtx)
			switch {
			case err != nil && h.bootCtx.Err() != nil:
				// The session ended first (stdin closed): nothing failed.
				h.log.Debug("start-up self bootstrap stopped: the session ended")
				return
			case err != nil:
				h.log.Info("start-up self bootstrap did not name this agent", "err", err)
				return
			}
			h.log.Info("start-up self bootstrap", "name", name)
		}()
	})
}

func (h *handler) initialize(conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	// Keys match exactly; a key this server does not read is ignored, so
	// that a newer client still connects.
	var p struct{ protocolVersion, clientName, clientVersion string }
	m, _ := paramMap(h.stream.params(req.ID))
	_ = jsonx.Unmarshal(m["protocolVersion"], &p.protocolVersion)
	if ci, err := rawMap(m["clientInfo"]); err == nil {
		_ = jsonx.Unmarshal(ci["name"], &p.clientName)
		_ = jsonx.Unmarshal(ci["version"], &p.clientVersion)
	}
	rev := latestRevision
	for _, r := range revisions {
		if r == p.protocolVersion {
			rev = r
		}
	}
	h.mu.Lock()
	h.revision = rev
	h.initialized = true
	h.mu.Unlock()
	// Batches exist only in revision 2025-03-26.
	h.stream.batches.Store(rev == "2025-03-26")
	h.log.Info("mcp: initialize", "client", p.clientName, "client_version", p.clientVersion, "asked", p.protocolVersion, "revision", rev, "in_herdr", h.opt.Link != nil)
	version := h.opt.Version
	if version == "" {
		version = "dev"
	}
	res := initializeResult{ProtocolVersion: rev, ServerInfo: serverInfo{Name: "herdr-link", Title: "Herdr Link", Version: version}}
	res.Capabilities.Tools.ListChanged = true
	if h.opt.Link != nil {
		res.Instructions = instructionsInHerdr
	} else {
		res.Instructions = h.outside()
		h.log.Warn("herdr-link: " + h.outside())
	}
	h.respond(conn, req.ID, res)
	// Hosts that skip notifications/initialized still get the bootstrap.
	h.startBootstrap()
}

// initializeResult is initialize's result, in the specification's order.
type initializeResult struct {
	ProtocolVersion string `json:"protocolVersion"`
	Capabilities    struct {
		Tools struct {
			ListChanged bool `json:"listChanged"`
		} `json:"tools"`
	} `json:"capabilities"`
	ServerInfo   serverInfo `json:"serverInfo"`
	Instructions string     `json:"instructions"`
}

type serverInfo struct {
	Name    string `json:"name"`
	Title   string `json:"title"`
	Version string `json:"version"`
}

func (h *handler) toolsCall(conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	params := h.stream.params(req.ID) // the edge holds a request's params
	p, msg := callParams(params)
	if msg != "" {
		h.respondError(conn, req.ID, codeInvalidParams, msg)
		return
	}
	if !knownTool(p.name) {
		h.respondError(conn, req.ID, codeInvalidParams, "Unknown tool: "+p.name)
		return
	}
	if h.opt.Link == nil {
		h.respond(conn, req.ID, errorResult(link.ErrNotInHerdr.Code, h.outside()))
		return
	}
	call, perr := parseCall(p.name, p.arguments)
	// Any call of a herdr-link tool activates the connection, once.
	h.activate(conn)
	if perr != nil {
		h.respond(conn, req.ID, h.withContract(errorResult(link.InvalidArgument, perr.Error())))
		return
	}
	if call.action == "activate" {
		h.respond(conn, req.ID, h.success(activationResult(h.claimContract())))
		return
	}
	if call.action == "wait" {
		call.progress = h.progressFunc(conn, params)
	}
	h.start(conn, req.ID, call)
}

// start hands a tool call to the workers.
func (h *handler) start(conn *jsonrpc2.Conn, id jsonrpc2.ID, call parsedCall) {
	// One allocation holds the call, its context and its state.
	f := &inflight{h: h, conn: conn, id: id, call: call}
	f.ctx, f.cancel = context.WithCancel(h.ctx)
	h.mu.Lock()
	if h.shutdown {
		h.mu.Unlock()
		f.cancel()
		h.stream.forget(id)
		return
	}
	// Under h.mu, so that cancelAll cannot pass between the check and
	// the record.
	h.stream.track(id, f.cancel)
	h.calls.add()
	h.mu.Unlock()
	h.workers.run(f.run)
}

// run runs the call on a worker and answers it, unless the client
// cancelled it.
func (f *inflight) run() {
	h := f.h
	defer h.calls.done()
	defer f.cancel()
	res := h.run(f.ctx, f.call)
	if h.stream.dropped(f.id) {
		h.stream.forget(f.id)
		return // the client cancelled: no response
	}
	h.respond(f.conn, f.id, h.withContract(res))
}

// activate switches the connection to the active surface and notifies the
// client, before the activating call's response.
func (h *handler) activate(conn *jsonrpc2.Conn) {
	h.mu.Lock()
	was := h.active
	h.active = true
	h.mu.Unlock()
	if !was {
		h.log.Info("mcp: activated")
		if err := conn.Notify(h.ctx, "notifications/tools/list_changed", nil); err != nil {
			h.log.Debug("mcp: cannot notify", "err", err)
		}
	}
}

// respond answers request id with result, encoded once by the one wire
// encoder (jsonx). The response goes through the connection, which
// serializes its writes (list_changed before the activating response),
// with the encoded result staged at the edge: the connection encodes a
// stand-in, and the edge writes the staged result under the client's id
// (see [stream.stage]).
func (h *handler) respond(conn *jsonrpc2.Conn, id jsonrpc2.ID, result any) {
	b, err := jsonx.Marshal(result)
	if err != nil {
		h.log.Error("mcp: cannot encode a result", "err", err)
		h.respondError(conn, id, codeInternalError, "Internal error")
		return
	}
	// The connection is done with the response when SendResponse returns
	// (the edge has written it), so responses are reused.
	r, _ := h.responses.Get().(*response)
	if r == nil {
		r = new(response)
	}
	r.raw = b
	if h.stream.stage(id, b) {
		r.raw = stagedResult // the edge writes b in its place
	}
	r.resp = jsonrpc2.Response{ID: id, Result: &r.raw}
	if err := conn.SendResponse(h.ctx, &r.resp); err != nil {
		h.log.Debug("mcp: cannot answer", "err", err)
	}
	*r = response{}
	h.responses.Put(r)
}

// response is a result response and its result, in one allocation.
type response struct {
	resp jsonrpc2.Response
	raw  json.RawMessage
}

// respondError answers request id with a JSON-RPC error.
func (h *handler) respondError(conn *jsonrpc2.Conn, id jsonrpc2.ID, code int, msg string) {
	if err := conn.ReplyWithError(h.ctx, id, &jsonrpc2.Error{Code: int64(code), Message: msg}); err != nil {
		h.log.Debug("mcp: cannot answer", "err", err)
	}
}

// run executes a tool call and turns its outcome into a tool result.
func (h *handler) run(ctx context.Context, c parsedCall) (res toolResult) {
	defer func() {
		if p := recover(); p != nil {
			h.log.Error("mcp: tool panic", "tool", c.tool, "panic", p, "stack", string(debug.Stack()))
			res = errorResult(link.NotInHerdr, "herdr-link failed internally")
		}
	}()
	l := h.opt.Link
	start := time.Now()
	var out any
	var err error
	switch c.action {
	case "peers":
		out, err = l.Peers(ctx)
	case "send":
		out, err = l.Send(ctx, c.send)
	case "close":
		out, err = l.Close(ctx, c.agent)
	case "start":
		out, err = l.Start(ctx, c.start)
	case "wait":
		out, err = l.WaitReply(ctx, c.wait.id, c.wait.timeout, c.progress)
	default:
		err = fmt.Errorf("unknown action %q", c.action)
	}
	h.log.Debug("mcp: tool call", "tool", c.tool, "action", c.action, "took", time.Since(start), "err", err)
	if err != nil {
		var le *link.Error
		if errors.As(err, &le) {
			if cause := errors.Unwrap(le); cause != nil {
				h.log.Info("mcp: tool failed", "tool", c.tool, "code", le.Code, "cause", cause)
			}
			return toolResult{Content: []content{{Type: "text", Text: le.Error()}}, IsError: true}
		}
		h.log.Error("mcp: unclassified failure", "err", err)
		return errorResult(link.NotInHerdr, "herdr-link failed internally")
	}
	// Encoded once: the text content and structuredContent are the same
	// bytes.
	b, err := jsonx.Marshal(out)
	if err != nil {
		h.log.Error("mcp: cannot encode a tool result", "err", err)
		return errorResult(link.NotInHerdr, "herdr-link failed internally")
	}
	return h.success(string(b), jsonx.RawMessage(b))
}

type content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type toolResult struct {
	Content           []content `json:"content"`
	StructuredContent any       `json:"structuredContent,omitempty"`
	IsError           bool      `json:"isError,omitempty"`
}

func (h *handler) success(text string, structured any) toolResult {
	r := toolResult{Content: []content{{Type: "text", Text: text}}}
	if h.structured() {
		r.StructuredContent = structured
	}
	return r
}

func errorResult(code link.Code, detail string) toolResult {
	return toolResult{Content: []content{{Type: "text", Text: string(code) + ": " + detail}}, IsError: true}
}

// progressFunc returns what reports the progress of a long call to the
// client, when the client asked for it (a progressToken in the call's
// _meta), else nil.
func (h *handler) progressFunc(conn *jsonrpc2.Conn, params *json.RawMessage) func(time.Duration) {
	if params == nil {
		return nil
	}
	var p struct {
		Meta struct {
			ProgressToken jsonx.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if jsonx.Unmarshal(*params, &p) != nil || len(p.Meta.ProgressToken) == 0 || string(p.Meta.ProgressToken) == "null" {
		return nil
	}
	token := p.Meta.ProgressToken
	return func(waited time.Duration) {
		// Encoded by the wire encoder; the connection passes raw params on.
		n, _ := jsonx.Marshal(progressNote{Token: token, Progress: waited.Seconds(), Message: "waiting for the outcome"})
		if err := conn.Notify(h.ctx, "notifications/progress", json.RawMessage(n)); err != nil {
			h.log.Debug("mcp: cannot report progress", "err", err)
		}
	}
}

type progressNote struct {
	Token    jsonx.RawMessage `json:"progressToken"`
	Progress float64          `json:"progress"`
	Message  string           `json:"message"`
}
