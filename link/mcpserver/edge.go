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

// stream is the edge of the server: the jsonrpc2.ObjectStream of MCP's
// stdio transport (one JSON value per line), and the one place that does
// what sourcegraph/jsonrpc2 cannot. The connection is used through its
// public API only: ReadObject gives it each request as a JSON line it
// decodes itself, WriteObject encodes what it is given. Between the two,
// the edge:
//
//   - Bounds a line (MaxLineBytes) and answers an oversized one; the
//     library's streams read a value of any size.
//   - Answers malformed input itself (parse errors and invalid requests,
//     with id null when no valid id can be read) and reads on: the
//     library closes the connection on the first message it cannot
//     decode, and its Response has no null id.
//   - Refuses a key repeated in tools/call's params or arguments, as an
//     unknown key is refused: the library decodes params into a map, so
//     the last of a repeated key would win unseen.
//   - Translates request ids (idTable, edge_ids.go): the library's ID holds a string
//     or an unsigned integer below 2^63, JSON-RPC allows any number, and
//     a response must carry the id back byte for byte. The table also
//     refuses an id in use by a request in flight, resolves
//     notifications/cancelled, and holds the cancel of each running call.
//   - Splits batches (JSON arrays, revision 2025-03-26 only) into the
//     requests the connection handles one by one and joins their
//     responses into one array (the library has no batches).
//   - Holds each request's params for the handler (stream.params) and
//     gives the connection the request without them: the library decodes
//     params into a map and encodes them again, most of its decode of a
//     tools/call.
//   - Holds each result response's result, staged by the handler
//     (stream.stage), and writes it in place of the stand-in the
//     connection encoded: the library encodes a result twice.
//   - Writes every message in the house style of wire.go (edge_write.go): the library
//     encodes with encoding/json, which escapes "<", ">" and "&" and puts
//     "jsonrpc" last; the edge re-frames each message it is given.
//
// TestJSONRPC2AloneNeedsTheEdge shows the library on its own against each
// of these.
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

	// ended is closed when the input has ended; ReadObject then waits
	// for release before it tells the connection (see [stream.end]).
	ended, release   chan struct{}
	endOnce, relOnce sync.Once
	readDone         chan struct{} // ReadObject returned for the last time
	readOnce         sync.Once
	idmu             sync.Mutex
	ids              idTable
	wmu              sync.Mutex
	w                io.Writer
	closed           bool
	onBroken         func(error) // a write failed: the client is gone
	brokenOnce       sync.Once
}

// batch collects the responses of one JSON-RPC batch.
type batch struct {
	open  int // requests not answered yet
	lines [][]byte
}

// admitted is a message that passed admit: the line the connection
// decodes, and the connection's id of a request.
type admitted struct {
	line  []byte
	id    jsonrpc2.ID
	notif bool
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

// ReadObject stores the next request or notification in v, answering
// everything else on the way.
func (s *stream) ReadObject(v any) error {
	for {
		a, err := s.next()
		if err != nil {
			s.end()
			s.readOnce.Do(func() { close(s.readDone) })
			return err
		}
		if err := decodeInto(a.line, v); err != nil {
			// Cannot happen: the line is built in the library's shape.
			// Should it, the request is answered here.
			s.log.Error("mcp: jsonrpc2 refused a request line", "err", err)
			if !a.notif {
				_ = s.finish(a.id, reply{code: codeInternalError, msg: "Internal error"})
			}
			continue
		}
		return nil
	}
}

// decodeInto decodes a JSON line into v, as json.Unmarshal does; the
// line is valid JSON already.
func decodeInto(line []byte, v any) error {
	if u, ok := v.(json.Unmarshaler); ok {
		return u.UnmarshalJSON(line)
	}
	return json.Unmarshal(line, v)
}

// forget retires a request that gets no response (a cancelled call, or
// one refused at shutdown).
func (s *stream) forget(id jsonrpc2.ID) { _ = s.finish(id, reply{}) }

// track records cancel as what stops the running call the connection
// knows as id. It reports false when the request is unknown.
func (s *stream) track(id jsonrpc2.ID, cancel func()) bool {
	s.idmu.Lock()
	defer s.idmu.Unlock()
	p, ok := s.ids.pend[id]
	if ok {
		p.cancel = cancel
	}
	return ok
}

// dropped reports whether the client cancelled the request the
// connection knows as id.
func (s *stream) dropped(id jsonrpc2.ID) bool {
	s.idmu.Lock()
	defer s.idmu.Unlock()
	p, ok := s.ids.pend[id]
	return ok && p.dropped
}

// cancel cancels the live request the client calls raw: its call is
// stopped, it gets no response, and its id is free for the client at
// once. The connection's id stays reserved until the handler retires it,
// so a late answer of the cancelled call can never go out under a reused
// id.
func (s *stream) cancel(raw json.RawMessage) bool {
	s.idmu.Lock()
	_, p, ok := s.ids.drop(bytes.TrimSpace(raw))
	var out []byte
	if ok {
		if p.cancel != nil {
			p.cancel()
		}
		if p.batch != nil {
			p.batch.open--
			out = sealLocked(p.batch)
		}
	}
	s.idmu.Unlock()
	if out != nil {
		s.write(out)
	}
	return ok
}

// cancelAll stops every running call (their responses still go out).
func (s *stream) cancelAll() {
	s.idmu.Lock()
	defer s.idmu.Unlock()
	for _, p := range s.ids.pend {
		if p.cancel != nil {
			p.cancel()
		}
	}
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
		a, reply, ok := s.admit(msg, nil)
		if reply != nil {
			s.write(reply)
		}
		if ok {
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
		a, reply, ok := s.admit(e, b)
		if reply != nil {
			s.addToBatch(b, reply)
		}
		if ok {
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
// connection (ok false: none) and an error response to send (nil: none).
// A request with an id is registered (in batch b when set).
func (s *stream) admit(msg []byte, b *batch) (a admitted, reply []byte, ok bool) {
	code, id, why, m := classify(msg)
	if code != 0 {
		s.log.Debug("mcp: rejected message", "code", code, "why", why)
		if code > 0 { // a notification-shaped problem: no reply
			return a, nil, false
		}
		return a, errorLine(id, code, why), false
	}
	raw := bytes.TrimSpace(m.id)
	if m.method == nil {
		// A response. The server sends no requests, so it answers none of
		// them: the connection would drop it as a stray.
		s.log.Debug("mcp: ignoring a response")
		return a, nil, false
	}
	method := bytes.TrimSpace(m.method)
	if m.params != nil && string(method) == `"tools/call"` {
		if why := repeatedCallKey(m.params); why != "" {
			if m.id == nil {
				return a, nil, false
			}
			return a, errorLine(raw, codeInvalidParams, why), false
		}
	}
	a.notif = m.id == nil
	params := bytes.TrimSpace(m.params)
	if a.notif {
		a.line = requestLine(nil, method, params)
		return a, nil, true
	}
	s.idmu.Lock()
	cid, js, ok := s.ids.register(raw, b)
	if ok {
		if b != nil {
			b.open++
		}
		if m.params != nil {
			s.ids.pend[cid].params = bytes.Clone(params) // params is part of the reader's line
		}
	}
	s.idmu.Unlock()
	if !ok {
		return a, errorLine(raw, codeInvalidRequest, "Invalid Request: id "+string(raw)+" is already used by a request in flight"), false
	}
	a.id = cid
	a.line = requestLine(js, method, nil)
	return a, nil, true
}

// params returns the params of the request the connection knows as id,
// as the client sent them: nil when it sent none, or when the request is
// not in flight.
func (s *stream) params(id jsonrpc2.ID) *json.RawMessage {
	s.idmu.Lock()
	defer s.idmu.Unlock()
	if p, ok := s.ids.pend[id]; ok && p.params != nil {
		return &p.params
	}
	return nil
}

// requestLine is the message as the line the connection decodes:
// {"id":ID,"method":M} for a request (the edge holds its params),
// {"method":M,"params":P} for a notification, without params when the
// client sent none. The parts are valid JSON (classify checked the
// client's line); the line is a copy.
func requestLine(id, method, params []byte) []byte {
	line := make([]byte, 0, 32+len(id)+len(method)+len(params))
	line = append(line, '{')
	if id != nil {
		line = append(append(append(line, `"id":`...), id...), ',')
	}
	line = append(append(line, `"method":`...), method...)
	if params != nil {
		line = append(append(line, `,"params":`...), params...)
	}
	return append(line, '}')
}

// repeatedCallKey returns the invalid-params error for a key repeated in
// an object of tools/call's params (the params, the arguments, a
// gateway's nested arguments, _meta), "" when every key of each is there
// once. Keys are matched exactly, so a repeated one is refused as an
// unknown one is, never resolved to the last.
func repeatedCallKey(params []byte) string {
	dup := repeatedKey(params, 0)
	if dup == "" {
		return ""
	}
	if len(dup) > 64 {
		dup = dup[:64] + "…"
	}
	q, _ := jsonx.Marshal(dup)
	return "Invalid params: tools/call repeats the key " + string(q) + " (keys match exactly, each once)"
}

// repeatedKey returns the first key repeated in the object v or in an
// object among its member values, searched to a depth of 8.
func repeatedKey(v []byte, depth int) string {
	if depth > 8 {
		return ""
	}
	var seen []string
	var dup string
	eachMember(v, func(k, val []byte) {
		if dup != "" {
			return
		}
		for _, s := range seen {
			if s == string(k) {
				dup = s
				return
			}
		}
		seen = append(seen, string(k))
		if t := bytes.TrimSpace(val); len(t) > 0 && t[0] == '{' {
			dup = repeatedKey(t, depth+1)
		}
	})
	return dup
}
