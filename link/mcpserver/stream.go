package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/ndjson"
)

// JSON-RPC error codes.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternalError  = -32603
)

// DefaultMaxLineBytes bounds one incoming JSON-RPC line. A maximal send
// (256 KiB of message, escaped at worst six bytes per byte) fits.
const DefaultMaxLineBytes = 4 << 20

// stream is the jsonrpc2.ObjectStream of MCP's stdio transport: one JSON
// value per line, read and written with goccy/go-json. The jsonrpc2
// connection reads requests from it and writes responses to it; the
// stream does what the library cannot:
//
//   - Malformed input is answered here (parse errors and invalid
//     requests, with id null when no valid id can be read) and the stream
//     reads on. jsonrpc2 closes the connection on the first message it
//     cannot decode, and its Response has no null id.
//   - Request ids are translated (ids.go): jsonrpc2's ID holds a string or
//     an unsigned integer below 2^63, JSON-RPC allows any number, and a
//     response must carry the id back byte for byte.
//   - Batches (JSON arrays, revision 2025-03-26 only) are split here into
//     requests the connection handles one by one, and their responses are
//     joined here into one array (jsonrpc2 has no batches).
//   - Params reach the handler as sent, never through jsonrpc2's
//     reflective decode and re-encode.
//   - Responses are written by the one encoder of wire.go: jsonrpc2 would
//     encode them with encoding/json, which escapes "<" in results and
//     puts "jsonrpc" last. [stream.sending] sees each message the
//     connection writes; WriteObject writes it in the house style.
//
// TestJSONRPC2AloneNeedsTheEdge shows jsonrpc2 on its own against each of
// these.
//
// Messages reach the connection as *jsonrpc2.Request values, put in the
// library's message directly ([messageSlots]) from the one scan of the
// client's line (classify): jsonrpc2 would decode every line twice,
// reflectively (25 allocations for a tools/call, 8 µs for the smallest
// request line on the 2-vCPU machine, far more with params), and
// "jsonrpc" was checked here already. Only when its message type is not
// laid out as expected does the connection decode a line built for it,
// and the [stream.received] hook gives the request its params.
type stream struct {
	r   *ndjson.Reader
	max int
	in  io.Closer
	eof bool
	log *slog.Logger

	// batches enables JSON-RPC batches (revision 2025-03-26).
	batches atomic.Bool
	// queue holds messages of a batch not yet handed to the connection.
	queue []admitted
	// slots is where jsonrpc2's message takes a decoded request.
	slots messageSlots
	// params are the params of the request ReadObject returned last; the
	// connection's read loop passes them to [stream.received].
	params *json.RawMessage

	// ended is closed when the input has ended; ReadObject then waits
	// for release before it tells the connection (see [stream.end]).
	ended, release   chan struct{}
	endOnce, relOnce sync.Once
	readDone         chan struct{} // ReadObject returned for the last time
	readOnce         sync.Once
	idmu             sync.Mutex
	ids              idTable
	out              outgoing // guarded by the connection's send lock
	wmu              sync.Mutex
	w                io.Writer
	closed           bool
	onBroken         func(error) // a write failed: the client is gone
	brokenOnce       sync.Once
}

// outgoing is the message the connection is writing.
type outgoing struct {
	req  *jsonrpc2.Request
	resp *jsonrpc2.Response
}

// batch collects the responses of one JSON-RPC batch.
type batch struct {
	open  int // requests not answered yet
	lines [][]byte
}

// admitted is a message that passed admit: the request for the
// connection, with its params as sent, and the JSON of its connection id
// (for [admitted.line]).
type admitted struct {
	req    *jsonrpc2.Request
	idJSON []byte
}

// line is the message as the smallest line jsonrpc2 decodes into the
// same request: {"id":ID,"method":M}, or {"method":M} for a
// notification (params are given back by [stream.received]).
func (a admitted) line() []byte {
	method, _ := json.Marshal(a.req.Method)
	line := make([]byte, 0, 20+len(a.idJSON)+len(method))
	if !a.req.Notif {
		line = append(append(append(line, `{"id":`...), a.idJSON...), ',')
	} else {
		line = append(line, '{')
	}
	line = append(append(line, `"method":`...), method...)
	return append(line, '}')
}

func newStream(in io.Reader, out io.Writer, max int, log *slog.Logger) *stream {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	s := &stream{r: ndjson.NewReader(in, max), max: max, w: out, log: log, ids: newIDTable(),
		ended: make(chan struct{}), release: make(chan struct{}), readDone: make(chan struct{})}
	if c, ok := in.(io.Closer); ok {
		s.in = c
	}
	return s
}

// ReadObject returns the next request or notification, answering
// everything else on the way. The request is handed over decoded
// (inject.go); only when jsonrpc2's message type is not laid out as the
// stream expects does the connection decode it from a line.
func (s *stream) ReadObject(v any) error {
	for {
		a, err := s.next()
		if err != nil {
			s.end()
			s.readOnce.Do(func() { close(s.readDone) })
			return err
		}
		s.params = a.req.Params // [stream.received] gives them back
		if slot := s.slots.request(v); slot != nil {
			*slot = a.req
			return nil
		}
		u, ok := v.(json.Unmarshaler)
		if !ok {
			return fmt.Errorf("mcpserver: cannot read into %T", v)
		}
		if err := u.UnmarshalJSON(a.line()); err != nil {
			// Cannot happen: the line is built in jsonrpc2's shape.
			// Should it, the request is answered here.
			s.params = nil
			s.log.Error("mcp: jsonrpc2 refused a request line", "err", err)
			if !a.req.Notif {
				_ = s.finish(a.req.ID, reply{code: codeInternalError, msg: "Internal error"})
			}
			continue
		}
		return nil
	}
}

// received is the connection's OnRecv hook. It runs in the read loop
// right after ReadObject, before the handler, and gives the request its
// params as the client sent them (a request decoded by the connection
// from its line has none; a request handed over has them already).
func (s *stream) received(req *jsonrpc2.Request, _ *jsonrpc2.Response) {
	if req != nil {
		req.Params, s.params = s.params, nil
	}
}

// sending is the connection's OnSend hook. It runs under the connection's
// send lock right before WriteObject, with the message WriteObject is
// given (wrapped in a type of the library's own).
func (s *stream) sending(req *jsonrpc2.Request, resp *jsonrpc2.Response) {
	s.out = outgoing{req: req, resp: resp}
}

// WriteObject writes the message the connection is sending: a response,
// under the id the client sent, or a notification.
func (s *stream) WriteObject(any) error {
	o := s.out
	s.out = outgoing{}
	switch {
	case o.resp != nil:
		r := o.resp
		if r.Error != nil {
			return s.finish(r.ID, reply{code: int(r.Error.Code), msg: r.Error.Message})
		}
		if r.Result == nil {
			return errors.New("mcpserver: a response without result or error")
		}
		return s.finish(r.ID, reply{result: *r.Result})
	case o.req != nil && o.req.Notif:
		var params json.RawMessage
		if o.req.Params != nil {
			params = *o.req.Params
		}
		return s.writeLine(notificationLine(o.req.Method, params))
	}
	return errors.New("mcpserver: the server writes only responses and notifications")
}

// reply is a response to write: an encoded result, or an error (code
// not 0); the zero reply is none.
type reply struct {
	result []byte
	code   int
	msg    string
}

// line is the response to the request whose id is raw (nil: none).
func (r reply) line(raw json.RawMessage) []byte {
	switch {
	case r.code != 0:
		return errorLine(raw, r.code, r.msg)
	case r.result != nil:
		return resultLine(raw, r.result)
	}
	return nil
}

// finish retires the request the connection knows as id and writes its
// response (none for the zero reply, or when the client cancelled it),
// alone or as part of its batch.
func (s *stream) finish(id jsonrpc2.ID, r reply) error {
	s.idmu.Lock()
	p, ok := s.ids.retire(id)
	if !ok {
		s.idmu.Unlock()
		s.log.Debug("mcp: response for an unknown request", "id", id.String())
		return nil
	}
	if p.dropped {
		s.idmu.Unlock()
		return nil // cancelled: the client expects no response
	}
	line := r.line(p.raw)
	b := p.batch
	if b == nil {
		s.idmu.Unlock()
		if line == nil {
			return nil
		}
		return s.writeLine(line)
	}
	if line != nil {
		b.lines = append(b.lines, line)
	}
	b.open--
	out := sealLocked(b)
	s.idmu.Unlock()
	if out == nil {
		return nil
	}
	return s.writeLine(out)
}

// forget retires a request that gets no response (a cancelled call, or
// one refused at shutdown).
func (s *stream) forget(id jsonrpc2.ID) { _ = s.finish(id, reply{}) }

// cancel marks the live request the client calls raw as cancelled: it
// gets no response, and its id is free for the client at once. The
// connection's id stays reserved until the handler retires it, so a late
// answer of the cancelled call can never go out under a reused id.
func (s *stream) cancel(raw json.RawMessage) (jsonrpc2.ID, bool) {
	s.idmu.Lock()
	id, p, ok := s.ids.drop(bytes.TrimSpace(raw))
	var out []byte
	if ok && p.batch != nil {
		p.batch.open--
		out = sealLocked(p.batch)
	}
	s.idmu.Unlock()
	if out != nil {
		s.write(out)
	}
	return id, ok
}

// sealLocked returns the batch's array once no request of it is open (nil
// when it is still open or has nothing to say). s.idmu is held.
func sealLocked(b *batch) []byte {
	if b.open > 0 || len(b.lines) == 0 {
		return nil
	}
	out := []byte{'['}
	for i, l := range b.lines {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, l...)
	}
	b.lines = nil
	return append(out, ']')
}

func (s *stream) write(line []byte) {
	if err := s.writeLine(line); err != nil {
		s.log.Debug("mcp: cannot write", "err", err)
	}
}

func (s *stream) writeLine(b []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return io.ErrClosedPipe
	}
	_, err := s.w.Write(append(b, '\n'))
	if err != nil && s.onBroken != nil {
		s.brokenOnce.Do(func() { s.onBroken(err) })
	}
	return err
}

// end reports that the input has ended and waits until Serve lets the
// connection know. jsonrpc2 closes the connection, writes included, as
// soon as ReadObject returns an error, while the requests already read
// must still be answered: Serve releases the read loop once they are.
func (s *stream) end() {
	s.endOnce.Do(func() { close(s.ended) })
	<-s.release
}

// letEnd releases a read loop waiting in [stream.end].
func (s *stream) letEnd() { s.relOnce.Do(func() { close(s.release) }) }

// Close closes the input when it can be closed. The connection calls it
// when it closes.
func (s *stream) Close() error {
	if s.in != nil {
		return s.in.Close()
	}
	return nil
}

// shut stops writing.
func (s *stream) shut() {
	s.wmu.Lock()
	s.closed = true
	s.wmu.Unlock()
}

// next returns the next message for the connection, answering everything
// else on the way.
func (s *stream) next() (admitted, error) {
	for {
		if len(s.queue) > 0 {
			a := s.queue[0]
			s.queue = s.queue[1:]
			return a, nil
		}
		if s.eof {
			return admitted{}, io.EOF
		}
		line, err := s.r.ReadLine()
		switch {
		case errors.Is(err, ndjson.ErrLineTooLong):
			s.log.Warn("mcp: oversized line", "limit", s.max)
			s.write(errorLine(nil, codeInvalidRequest, fmt.Sprintf("Invalid Request: line longer than %d bytes", s.max)))
			if err := s.r.SkipLine(); err != nil {
				return admitted{}, io.EOF
			}
			continue
		case errors.Is(err, io.ErrUnexpectedEOF):
			s.eof = true // a last line without a newline is still processed
		case err != nil:
			return admitted{}, err
		}
		msg := bytes.TrimSpace(line)
		if len(msg) == 0 {
			continue
		}
		if msg[0] == '[' && s.batches.Load() && jsonx.Valid(msg) {
			s.splitBatch(msg)
			continue
		}
		a, reply := s.admit(msg, nil)
		if reply != nil {
			s.write(reply)
		}
		if a.req != nil {
			return a, nil
		}
	}
}

// splitBatch queues the messages of a batch and registers its requests.
func (s *stream) splitBatch(msg []byte) {
	var elems []json.RawMessage
	if err := jsonx.Unmarshal(msg, &elems); err != nil {
		s.write(errorLine(nil, codeParseError, "Parse error"))
		return
	}
	if len(elems) == 0 {
		s.write(errorLine(nil, codeInvalidRequest, "Invalid Request: empty batch"))
		return
	}
	b := &batch{open: 1} // held open until every element is queued
	for _, e := range elems {
		e = bytes.TrimSpace(e)
		if len(e) > 0 && e[0] == '[' {
			s.addToBatch(b, errorLine(nil, codeInvalidRequest, "Invalid Request: a batch element must be a JSON object"))
			continue
		}
		a, reply := s.admit(e, b)
		if reply != nil {
			s.addToBatch(b, reply)
		}
		if a.req != nil {
			s.queue = append(s.queue, a)
		}
	}
	s.idmu.Lock()
	b.open--
	out := sealLocked(b)
	s.idmu.Unlock()
	if out != nil {
		s.write(out)
	}
}

func (s *stream) addToBatch(b *batch, line []byte) {
	s.idmu.Lock()
	b.lines = append(b.lines, line)
	s.idmu.Unlock()
}

// admit checks one message. It returns the message to hand to the
// connection (line nil: none) and an error response to send (nil: none).
// A request with an id is registered (in batch b when set).
func (s *stream) admit(msg []byte, b *batch) (a admitted, reply []byte) {
	code, id, why, m := classify(msg)
	if code != 0 {
		s.log.Debug("mcp: rejected message", "code", code, "why", why)
		if code > 0 { // a notification-shaped problem: no reply
			return a, nil
		}
		return a, errorLine(id, code, why)
	}
	raw, isReq := m.id, m.id != nil
	if m.method == nil {
		// A response. The server sends no requests, so it answers none of
		// them: the connection would drop it as a stray.
		s.log.Debug("mcp: ignoring a response")
		return a, nil
	}
	name, ok := methodName(m.method)
	if !ok {
		// Cannot happen: classify decoded it.
		return a, nil
	}
	// The members are parts of msg, which the reader reuses: what the
	// request keeps is copied.
	req := &jsonrpc2.Request{Method: name, Notif: !isReq}
	if m.params != nil {
		params := json.RawMessage(bytes.Clone(m.params))
		req.Params = &params
	}
	a.req = req
	if !isReq {
		return a, nil
	}
	raw = bytes.TrimSpace(raw)
	s.idmu.Lock()
	cid, idJSON, ok := s.ids.register(raw, b)
	if ok && b != nil {
		b.open++
	}
	s.idmu.Unlock()
	if !ok {
		return admitted{}, errorLine(raw, codeInvalidRequest, "Invalid Request: id "+string(raw)+" is already used by a request in flight")
	}
	req.ID, a.idJSON = cid, idJSON
	return a, nil
}
