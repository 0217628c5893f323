package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
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

// stream is a jsonrpc2.ObjectStream for MCP's stdio transport: one JSON
// value per line. Unlike the library's plain stream it never gives up on
// bad input: it answers malformed lines itself (parse errors and invalid
// requests, with id null when no valid id can be read) and keeps reading.
// Only messages that are well-formed requests, notifications or responses
// reach the jsonrpc2 connection.
//
// Request ids. JSON-RPC allows any string or number as an id, and a
// response must carry it back exactly; jsonrpc2 only knows strings and
// unsigned 64-bit integers. So the stream hands the connection every
// request under a private string id ("#1", "#2", …) and puts the client's
// id back, byte for byte, into the response. The same table refuses a
// request whose id is already in use by a request in flight (-32600), and
// resolves notifications/cancelled to the live request.
//
// Batches (JSON arrays of messages) are accepted only when the session
// negotiated revision 2025-03-26, the one revision that has them: each
// element is handled like a line of its own, and the responses are written
// together as one array once every request of the batch is answered.
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
	// dispatch, when set, receives each admitted request and notification
	// straight from the read loop (see ReadObject).
	dispatch func(*jsonrpc2.Request)

	idmu sync.Mutex
	seq  uint64
	pend map[string]*pending // private id → request
	live map[string]string   // idKey of the client's id → private id

	wmu    sync.Mutex
	w      io.Writer
	closed bool
	// onBroken is called once when a write to the output fails: the
	// client is gone, so the session ends.
	onBroken   func(error)
	brokenOnce sync.Once
}

// pending is a request the connection has not answered yet.
type pending struct {
	raw    json.RawMessage // the client's id, as sent
	key    string          // idKey(raw)
	params json.RawMessage // the request's params as sent (nil: absent)
	batch  *batch
}

// batch collects the responses of one JSON-RPC batch.
type batch struct {
	open  int // requests not answered yet
	lines [][]byte
}

func newStream(in io.Reader, out io.Writer, max int, log *slog.Logger) *stream {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	s := &stream{r: ndjson.NewReader(in, max), max: max, w: out, log: log,
		pend: map[string]*pending{}, live: map[string]string{}}
	if c, ok := in.(io.Closer); ok {
		s.in = c
	}
	return s
}

// WriteObject is jsonrpc2's way to write, which the server does not use:
// every message is built by the one encoder of wire.go and written with
// [stream.respond] or [stream.write]. Should jsonrpc2 ever write by
// itself, its message is refused rather than put on the wire in a second
// style.
func (s *stream) WriteObject(obj any) error {
	s.log.Error("mcp: jsonrpc2 tried to write a message itself; dropped", "type", fmt.Sprintf("%T", obj))
	return errors.New("mcpserver: messages are written by the server's own encoder")
}

// respond writes the response to the request with private id id; build
// makes the line from the client's raw id.
func (s *stream) respond(id jsonrpc2.ID, build func(raw json.RawMessage) []byte) {
	s.finish(id.Str, build)
}

// forget drops a request that gets no response (a cancelled call).
func (s *stream) forget(id jsonrpc2.ID) { s.finish(id.Str, nil) }

// finish retires private id priv and writes its response (none when build
// is nil), alone or as part of its batch.
func (s *stream) finish(priv string, build func(raw json.RawMessage) []byte) {
	s.idmu.Lock()
	p := s.pend[priv]
	if p == nil {
		s.idmu.Unlock()
		s.log.Debug("mcp: response for an unknown request", "id", priv)
		return
	}
	delete(s.pend, priv)
	delete(s.live, p.key)
	var line []byte
	if build != nil {
		line = build(p.raw)
	}
	if p.batch == nil {
		s.idmu.Unlock()
		if line != nil {
			s.write(line)
		}
		return
	}
	b := p.batch
	if line != nil {
		b.lines = append(b.lines, line)
	}
	b.open--
	out := s.sealLocked(b)
	s.idmu.Unlock()
	if out != nil {
		s.write(out)
	}
}

// sealLocked returns the batch's array once no request of it is open (nil
// when it is still open or has nothing to say). s.idmu is held.
func (s *stream) sealLocked(b *batch) []byte {
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

// lookup returns the private id of the live request the client calls raw.
func (s *stream) lookup(raw json.RawMessage) (jsonrpc2.ID, bool) {
	k, ok := idKey(bytes.TrimSpace(raw))
	if !ok {
		return jsonrpc2.ID{}, false
	}
	s.idmu.Lock()
	defer s.idmu.Unlock()
	priv, ok := s.live[k]
	return jsonrpc2.ID{Str: priv, IsString: true}, ok
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
		s.brokenOnce.Do(func() { go s.onBroken(err) })
	}
	return err
}

// Close closes the input when it can be closed. The connection calls it
// when the input ends; writing goes on, so requests already read are still
// answered, until [stream.shut].
func (s *stream) Close() error {
	if s.in != nil {
		return s.in.Close()
	}
	return nil
}

// shut stops writing and closes the input.
func (s *stream) shut() error {
	s.wmu.Lock()
	s.closed = true
	s.wmu.Unlock()
	return s.Close()
}

// replyError writes a JSON-RPC error response.
func (s *stream) replyError(id json.RawMessage, code int, msg string) {
	s.write(errorLine(id, code, msg))
}

// ReadObject returns the next well-formed message, answering everything
// else on the way.
func (s *stream) ReadObject(v any) error {
	for {
		if len(s.queue) > 0 {
			a := s.queue[0]
			s.queue = s.queue[1:]
			if s.deliver(a, v) {
				return nil
			}
			continue
		}
		if s.eof {
			return io.EOF
		}
		line, err := s.r.ReadLine()
		switch {
		case errors.Is(err, ndjson.ErrLineTooLong):
			s.log.Warn("mcp: oversized line", "limit", s.max)
			s.replyError(nil, codeInvalidRequest, fmt.Sprintf("Invalid Request: line longer than %d bytes", s.max))
			if err := s.r.SkipLine(); err != nil {
				return io.EOF
			}
			continue
		case errors.Is(err, io.ErrUnexpectedEOF):
			s.eof = true // a last line without a newline is still processed
		case err != nil:
			return err
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
		if a.pass == nil {
			continue
		}
		if s.deliver(a, v) {
			return nil
		}
	}
}

// deliver hands an admitted message on. With dispatch set, requests and
// notifications go to it from here, in the connection's read loop and in
// arrival order, as the connection itself would hand them to its handler
// — but built from the one decode of the line instead of jsonrpc2's two
// reflective ones (8 % of a peers call's CPU time); stray responses are
// dropped, as the connection drops them. Otherwise the message is decoded
// into v for the connection. It reports whether v was filled.
func (s *stream) deliver(a admitted, v any) bool {
	if s.dispatch != nil {
		if a.req != nil {
			s.dispatch(a.req)
		}
		return false
	}
	if err := decodeInto(a.pass, v); err != nil {
		s.replyError(nil, codeInvalidRequest, "Invalid Request: "+err.Error())
		return false
	}
	return true
}

// admitted is a message that passed admit: the line for the connection,
// and the request it is (nil for a response).
type admitted struct {
	pass []byte
	req  *jsonrpc2.Request
}

// decodeInto hands an admitted message to the connection's decoder.
// admit has already checked it is valid JSON, so encoding/json's own
// validation pass over it is skipped when v decodes itself (jsonrpc2's
// message type does).
func decodeInto(msg []byte, v any) error {
	if u, ok := v.(json.Unmarshaler); ok {
		return u.UnmarshalJSON(msg)
	}
	return json.Unmarshal(msg, v)
}

// splitBatch queues the messages of a batch and registers its requests.
func (s *stream) splitBatch(msg []byte) {
	var elems []json.RawMessage
	if err := jsonx.Unmarshal(msg, &elems); err != nil {
		s.replyError(nil, codeParseError, "Parse error")
		return
	}
	if len(elems) == 0 {
		s.replyError(nil, codeInvalidRequest, "Invalid Request: empty batch")
		return
	}
	b := &batch{}
	s.idmu.Lock()
	b.open++ // held until every element is queued
	s.idmu.Unlock()
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
		if a.pass != nil {
			s.queue = append(s.queue, a)
		}
	}
	s.idmu.Lock()
	b.open--
	out := s.sealLocked(b)
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
// connection (nil: none) and an error response to send (nil: none). A
// request with an id is registered under a private id (in batch b when
// set).
func (s *stream) admit(msg []byte, b *batch) (a admitted, reply []byte) {
	code, id, why, m := classify(msg)
	if code != 0 {
		s.log.Debug("mcp: rejected message", "code", code, "why", why)
		if code > 0 { // a notification-shaped problem: no reply
			return a, nil
		}
		return a, errorLine(id, code, why)
	}
	raw, isReq := m["id"]
	rawMethod, hasMethod := m["method"]
	if !hasMethod {
		return admitted{pass: msg}, nil // a response (ignored)
	}
	var method string
	_ = jsonx.Unmarshal(rawMethod, &method) // classify checked it
	if !isReq {
		req := &jsonrpc2.Request{Method: method, Notif: true}
		if params, ok := m["params"]; ok {
			p := append(json.RawMessage(nil), params...)
			req.Params = &p
		}
		return admitted{pass: msg, req: req}, nil
	}
	raw = bytes.TrimSpace(raw)
	key, _ := idKey(raw)
	s.idmu.Lock()
	if _, dup := s.live[key]; dup {
		s.idmu.Unlock()
		return a, errorLine(raw, codeInvalidRequest, "Invalid Request: id "+string(raw)+" is already used by a request in flight")
	}
	s.seq++
	priv := "#" + strconv.FormatUint(s.seq, 10)
	p := &pending{raw: append(json.RawMessage(nil), raw...), key: key, batch: b}
	if params, ok := m["params"]; ok {
		p.params = append(json.RawMessage(nil), params...)
	}
	s.pend[priv] = p
	s.live[key] = priv
	if b != nil {
		b.open++
	}
	s.idmu.Unlock()
	// The connection gets the request's method under its private id and
	// nothing else: the line was decoded once, here, and the handler
	// takes the params from the table ([stream.params]) instead of
	// jsonrpc2 decoding them into interfaces and encoding them again.
	out := make([]byte, 0, 48+len(priv)+len(m["method"]))
	out = append(out, `{"jsonrpc":"2.0","id":"`...)
	out = append(out, priv...)
	out = append(out, `","method":`...)
	out = append(out, m["method"]...)
	return admitted{pass: append(out, '}'), req: &jsonrpc2.Request{Method: method, ID: jsonrpc2.ID{Str: priv, IsString: true}}}, nil
}

// params returns the params of the live request with private id id, as
// sent (nil when absent), and whether the request is known.
func (s *stream) params(id jsonrpc2.ID) (json.RawMessage, bool) {
	s.idmu.Lock()
	defer s.idmu.Unlock()
	p, ok := s.pend[id.Str]
	if !ok {
		return nil, false
	}
	return p.params, true
}
