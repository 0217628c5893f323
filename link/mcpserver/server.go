package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link"
)

// Protocol revisions the server speaks; anything else is answered with
// the newest.
var revisions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

const latestRevision = "2025-11-25"

// Options configure a server.
type Options struct {
	// Link runs the operations. Nil means the environment gate failed:
	// the tool list is empty and every call answers NOT_IN_HERDR.
	Link *link.Link
	// Version is reported as serverInfo.version.
	Version string
	// Logger receives operator logs (stderr); nil discards them.
	Logger *slog.Logger
	// MaxLineBytes bounds an incoming line (DefaultMaxLineBytes when 0).
	MaxLineBytes int
	// Outside, when Link is nil, tells the user why the environment gate
	// failed and how to fix it (link.Gate.Advice): it is the initialize
	// result's instructions and the NOT_IN_HERDR detail of every call.
	Outside string
	// Bootstrap runs the self bootstrap in the background after
	// initialize, when Link is set.
	Bootstrap bool
	// ShutdownGrace bounds the wait for in-flight calls after the input
	// ends or ctx is cancelled (500 ms when 0).
	ShutdownGrace time.Duration

	// beforeHandle, when set (the package's tests), runs at the start of
	// every Handle.
	beforeHandle func(method string)
}

// Serve runs an MCP server on one connection (in, out) until in reaches
// EOF, a write to out fails, or ctx is cancelled. On EOF the requests
// already read are finished and answered, within ShutdownGrace; only then
// are the calls still running cancelled. When ctx is cancelled or out is
// broken, in-flight calls are cancelled at once. Before it returns it
// waits for the Link's delivery locks still held in the background
// ([link.Link.Wait], at most the longest hold). It returns nil on an
// orderly end.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opt Options) error {
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := newStream(in, out, opt.MaxLineBytes, log)
	st.onBroken = func(err error) {
		log.Info("mcp: output closed; ending the session", "err", err)
		cancel()
	}
	bootCtx, stopBoot := context.WithCancel(ctx)
	defer stopBoot()
	h := &handler{opt: opt, log: log, ctx: ctx, bootCtx: bootCtx, inflight: map[jsonrpc2.ID]*inflight{}, stream: st, workers: newWorkers()}
	defer h.workers.stop()
	// The read loop is the connection's; the stream hands it each message
	// already decoded (stream.deliver).
	st.dispatch = func(req *jsonrpc2.Request) { h.Handle(ctx, nil, req) }
	conn := jsonrpc2.NewConn(ctx, st, h, jsonrpc2.SetLogger(discardLogger{}))
	grace := opt.ShutdownGrace
	if grace <= 0 {
		grace = 500 * time.Millisecond
	}
	done := make(chan struct{})
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-done:
			return true
		case <-t.C:
			return false
		}
	}
	select {
	case <-conn.DisconnectNotify():
		// Every request read so far has been dispatched (the connection
		// handles messages in its read loop). Finish them, bounded by the
		// grace; the start-up bootstrap is no request and stops now.
		log.Debug("mcp: input closed")
		stopBoot()
		h.closeIntake()
		go func() { h.wg.Wait(); close(done) }()
		if !wait(grace) {
			log.Warn("mcp: in-flight calls did not finish within the shutdown grace; cancelling them", "grace", grace)
			cancel()
			h.cancelAll()
			if !wait(grace) {
				log.Warn("mcp: in-flight calls did not stop in time")
			}
		}
	case <-ctx.Done():
		log.Debug("mcp: stopping", "cause", context.Cause(ctx))
		h.closeIntake()
		cancel()
		h.cancelAll()
		go func() { h.wg.Wait(); close(done) }()
		if !wait(grace) {
			log.Warn("mcp: in-flight calls did not stop in time")
		}
	}
	_ = conn.Close()
	_ = st.shut()
	waitHolds(opt.Link, log)
	return nil
}

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}

type inflight struct {
	cancel    context.CancelFunc
	cancelled bool
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
	inflight    map[jsonrpc2.ID]*inflight
	wg          sync.WaitGroup
	shutdown    bool

	// contractSent: the Communication Contract went out with a result
	// (guarded by mu).
	contractSent bool
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
	for _, f := range h.inflight {
		f.cancel()
	}
}

// Handle runs in the connection's read loop, so protocol messages and
// activation are processed in arrival order; tool work runs in goroutines.
func (h *handler) Handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) {
	defer func() {
		if p := recover(); p != nil {
			h.log.Error("mcp: handler panic", "method", req.Method, "panic", p, "stack", string(debug.Stack()))
			if !req.Notif {
				h.respondError(req.ID, codeInternalError, "Internal error")
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
			h.respondError(req.ID, codeInvalidRequest, "Invalid Request: this session is already initialized; initialize is sent once")
			return
		}
		h.initialize(req)
	case "ping":
		h.respond(req.ID, struct{}{})
	case "tools/list", "tools/call":
		if !initialized {
			h.respondError(req.ID, codeInvalidRequest, "Invalid Request: "+req.Method+" before initialize; a session starts with initialize")
			return
		}
		if req.Method == "tools/call" {
			h.toolsCall(req)
			return
		}
		h.mu.Lock()
		active := h.active
		h.mu.Unlock()
		h.respond(req.ID, struct {
			Tools any `json:"tools"`
		}{toolList(h.opt.Link != nil, active, h.structured())})
	default:
		h.respondError(req.ID, codeMethodNotFound, "Method not found: "+req.Method)
	}
}

func (h *handler) notification(req *jsonrpc2.Request) {
	switch req.Method {
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		}
		if req.Params == nil || jsonx.Unmarshal(*req.Params, &p) != nil {
			return
		}
		// Ids in flight are unique (the stream refuses duplicates), so the
		// cancellation reaches exactly the live request with that id.
		id, ok := h.stream.lookup(p.RequestID)
		if !ok {
			return
		}
		h.mu.Lock()
		f, ok := h.inflight[id]
		if ok {
			f.cancelled = true
			f.cancel()
		}
		h.mu.Unlock()
		if ok {
			// The request is over for the client: its id is free at once.
			h.stream.forget(id)
		}
		h.log.Debug("mcp: cancelled", "id", string(p.RequestID), "reason", p.Reason)
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
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			// Bootstrap bounds itself with the Link's call deadline.
			name, err := h.opt.Link.Bootstrap(h.bootCtx)
			if err != nil {
				h.log.Info("start-up self bootstrap did not name this agent", "err", err)
				return
			}
			h.log.Info("start-up self bootstrap", "name", name)
		}()
	})
}

func (h *handler) initialize(req *jsonrpc2.Request) {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
		ClientInfo      struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"clientInfo"`
	}
	if params := h.params(req); params != nil {
		_ = jsonx.Unmarshal(params, &p)
	}
	rev := latestRevision
	for _, r := range revisions {
		if r == p.ProtocolVersion {
			rev = r
		}
	}
	h.mu.Lock()
	h.revision = rev
	h.initialized = true
	h.mu.Unlock()
	// Batches exist only in revision 2025-03-26.
	h.stream.batches.Store(rev == "2025-03-26")
	h.log.Info("mcp: initialize", "client", p.ClientInfo.Name, "client_version", p.ClientInfo.Version, "asked", p.ProtocolVersion, "revision", rev, "in_herdr", h.opt.Link != nil)
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
	h.respond(req.ID, res)
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

// callParams is tools/call's params.
type callParams struct {
	Name      string           `json:"name"`
	Arguments jsonx.RawMessage `json:"arguments"`
}

func (h *handler) toolsCall(req *jsonrpc2.Request) {
	var p callParams
	if params := h.params(req); params == nil || jsonx.Unmarshal(params, &p) != nil || p.Name == "" {
		h.respondError(req.ID, codeInvalidParams, "Invalid params: tools/call needs {\"name\": string, \"arguments\"?: object}")
		return
	}
	if !knownTool(p.Name) {
		h.respondError(req.ID, codeInvalidParams, "Unknown tool: "+p.Name)
		return
	}
	if h.opt.Link == nil {
		h.respond(req.ID, errorResult(link.ErrNotInHerdr.Code, h.outside()))
		return
	}
	call, perr := parseCall(p.Name, p.Arguments)
	// Any call of a herdr-link tool activates the connection, once.
	h.activate()
	if perr != nil {
		h.respond(req.ID, h.withContract(errorResult(link.InvalidArgument, perr.Error())))
		return
	}
	if call.action == "activate" {
		h.respond(req.ID, h.success(activationResult(h.claimContract())))
		return
	}
	tctx, cancel := context.WithCancel(h.ctx)
	f := &inflight{cancel: cancel}
	h.mu.Lock()
	if h.shutdown {
		h.mu.Unlock()
		cancel()
		h.stream.forget(req.ID)
		return
	}
	h.inflight[req.ID] = f
	h.wg.Add(1)
	h.mu.Unlock()
	h.workers.run(func() {
		defer h.wg.Done()
		defer cancel()
		res := h.run(tctx, call)
		h.mu.Lock()
		delete(h.inflight, req.ID)
		cancelled := f.cancelled
		h.mu.Unlock()
		if cancelled {
			h.stream.forget(req.ID)
			return // the client cancelled: no response
		}
		h.respond(req.ID, h.withContract(res))
	})
}

// activate switches the connection to the active surface and notifies the
// client, before the activating call's response.
func (h *handler) activate() {
	h.mu.Lock()
	was := h.active
	h.active = true
	h.mu.Unlock()
	if !was {
		h.log.Info("mcp: activated")
		h.stream.write(notificationLine("notifications/tools/list_changed"))
	}
}

// respond answers request id with result, encoded once, through the one
// wire encoder (wire.go). Writes share the stream's lock, so ordering
// (list_changed before the activating response) holds.
func (h *handler) respond(id jsonrpc2.ID, result any) {
	b, err := jsonx.Marshal(result)
	if err != nil {
		h.log.Error("mcp: cannot encode a result", "err", err)
		h.respondError(id, codeInternalError, "Internal error")
		return
	}
	h.stream.respond(id, func(raw json.RawMessage) []byte { return resultLine(raw, b) })
}

// respondError answers request id with a JSON-RPC error.
func (h *handler) respondError(id jsonrpc2.ID, code int, msg string) {
	h.stream.respond(id, func(raw json.RawMessage) []byte { return errorLine(raw, code, msg) })
}

// params returns a request's params as the client sent them (nil when
// absent): from the stream, which decoded the line; from the request
// itself when it did not come through the stream.
func (h *handler) params(req *jsonrpc2.Request) json.RawMessage {
	if p, ok := h.stream.params(req.ID); ok {
		return p
	}
	if req.Params == nil {
		return nil
	}
	return *req.Params
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
