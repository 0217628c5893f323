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
//   - Translates request ids (idTable): the library's ID holds a string
//     or an unsigned integer below 2^63, JSON-RPC allows any number, and
//     a response must carry the id back byte for byte. The table also
//     refuses an id in use by a request in flight, resolves
//     notifications/cancelled, and holds the cancel of each running call.
//   - Splits batches (JSON arrays, revision 2025-03-26 only) into the
//     requests the connection handles one by one and joins their
//     responses into one array (the library has no batches).
//   - Writes every message in the house style of wire.go: the library
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

// WriteObject writes obj, a message the connection sends (a response or
// a notification), re-framed in the house style: a response goes out
// under the id the client sent.
func (s *stream) WriteObject(obj any) error {
	var b []byte
	var err error
	if m, ok := obj.(json.Marshaler); ok {
		b, err = m.MarshalJSON()
	} else {
		b, err = json.Marshal(obj)
	}
	if err != nil {
		return err
	}
	if id, result, ok := libraryResult(b); ok {
		return s.finish(id, reply{result: undoHTMLEscapes(result)})
	}
	m, ok := scanMembers(b)
	if !ok {
		return fmt.Errorf("mcpserver: the connection wrote %.40q, not an object", b)
	}
	switch {
	case m.method != nil && m.id == nil:
		method, ok := jsonString(m.method)
		if !ok {
			return errors.New("mcpserver: a notification without a method name")
		}
		return s.writeLine(notificationLine(method, undoHTMLEscapes(m.params)))
	case m.method != nil:
		return errors.New("mcpserver: the server sends no requests")
	}
	id, ok := connID(m.id)
	if !ok {
		return fmt.Errorf("mcpserver: a response with id %s", m.id)
	}
	switch {
	case m.error != nil:
		var e rpcError
		if err := jsonx.Unmarshal(m.error, &e); err != nil {
			return fmt.Errorf("mcpserver: a response with error %.40q: %w", m.error, err)
		}
		return s.finish(id, reply{code: e.Code, msg: e.Message})
	case m.result != nil:
		return s.finish(id, reply{result: undoHTMLEscapes(m.result)})
	}
	return errors.New("mcpserver: a response without result or error")
}

// libraryResult cuts a result response as jsonrpc2 v0.2.x encodes one
// (Response.MarshalJSON: {"id":ID,"result":R,"jsonrpc":"2.0"}; the server
// sets no Meta) into its id and result without scanning the result; ok is
// false for anything else, which WriteObject then reads member by member.
func libraryResult(b []byte) (id jsonrpc2.ID, result []byte, ok bool) {
	const prefix, member, suffix = `{"id":`, `,"result":`, `,"jsonrpc":"2.0"}`
	rest, ok := bytes.CutPrefix(b, []byte(prefix))
	if !ok || !bytes.HasSuffix(rest, []byte(suffix)) || len(rest) == 0 {
		return id, nil, false
	}
	n := 0
	if rest[0] == '"' {
		end, _ := skipString(rest, 0)
		if end < 0 {
			return id, nil, false
		}
		n = end
	} else {
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
	}
	if id, ok = connID(rest[:n]); !ok {
		return id, nil, false
	}
	rest, ok = bytes.CutPrefix(rest[n:], []byte(member))
	if !ok || len(rest) <= len(suffix) {
		return id, nil, false
	}
	return id, rest[:len(rest)-len(suffix)], true
}

// connID reads an id as the connection wrote it: a string or an
// unsigned integer.
func connID(raw []byte) (jsonrpc2.ID, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		s, ok := jsonString(raw)
		return jsonrpc2.ID{Str: s, IsString: true}, ok
	}
	n, err := strconv.ParseUint(string(raw), 10, 64)
	return jsonrpc2.ID{Num: n}, err == nil
}

// undoHTMLEscapes turns encoding/json's \u003c, \u003e and \u0026 back
// into "<", ">" and "&" (the same characters in JSON; the house encoder
// writes them plain), leaving every other escape as it is.
func undoHTMLEscapes(b []byte) []byte {
	i := bytes.Index(b, []byte(`\u00`))
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for j := 0; j < len(b); {
		c := b[j]
		if c != '\\' || j+1 >= len(b) {
			out = append(out, c)
			j++
			continue
		}
		if b[j+1] == 'u' && j+6 <= len(b) {
			switch string(b[j+2 : j+6]) {
			case "003c":
				out, j = append(out, '<'), j+6
				continue
			case "003e":
				out, j = append(out, '>'), j+6
				continue
			case "0026":
				out, j = append(out, '&'), j+6
				continue
			}
		}
		out, j = append(out, c, b[j+1]), j+2 // any other escape, whole
	}
	return out
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
	var idJSON []byte
	if !a.notif {
		s.idmu.Lock()
		cid, js, ok := s.ids.register(raw, b)
		if ok && b != nil {
			b.open++
		}
		s.idmu.Unlock()
		if !ok {
			return a, errorLine(raw, codeInvalidRequest, "Invalid Request: id "+string(raw)+" is already used by a request in flight"), false
		}
		a.id, idJSON = cid, js
	}
	a.line = requestLine(idJSON, method, bytes.TrimSpace(m.params))
	return a, nil, true
}

// requestLine is the request as the line the connection decodes:
// {"id":ID,"method":M,"params":P}, without id for a notification and
// without params when the client sent none. The parts are valid JSON
// (classify checked the client's line); the line is a copy.
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

// idTable translates request ids between the client and the jsonrpc2
// connection. A JSON-RPC id is any string or number, and a response must
// carry it back exactly as sent; jsonrpc2's ID holds a string or an
// unsigned integer, and its decoder takes integers only up to 2^63-1.
// So the connection knows a request by the client's own id when the
// library holds it as it came (a plain integer in [0, 2^63), a string of
// printable ASCII without escapes), and by a synthetic string id ("#1",
// "#2", …) otherwise: negative, fractional, exponent and larger numbers,
// strings with escapes or beyond ASCII. Responses go out under the raw id
// the client sent, whichever the connection used.
//
// The table is also the one record of the requests in flight: it refuses
// an id in use (JSON-RPC values: 1, 1.0 and 1e0 are one id), resolves
// notifications/cancelled to the live request and holds each running
// call's cancel. A cancelled request frees its client id at once but
// keeps its connection id reserved until the handler retires it, so that
// the connection ids of the requests the handler holds are unique: a late
// answer of a cancelled call is dropped, never sent under a reused id.
type idTable struct {
	seq  uint64
	pend map[jsonrpc2.ID]*pending // connection id → request
	live map[string]jsonrpc2.ID   // idKey of the client's id → connection id
}

// pending is a request that has not been answered yet.
type pending struct {
	raw     json.RawMessage // the client's id, as sent
	key     string          // idKey(raw)
	batch   *batch
	dropped bool   // cancelled: retired without a response
	cancel  func() // stops the running call (nil: none runs)
}

func newIDTable() idTable {
	return idTable{pend: map[jsonrpc2.ID]*pending{}, live: map[string]jsonrpc2.ID{}}
}

// register records a request whose id is raw (valid, see classify) and
// returns its connection id, with that id's JSON for the connection's
// line. ok is false when a request in flight already has the id.
func (t *idTable) register(raw []byte, b *batch) (id jsonrpc2.ID, idJSON []byte, ok bool) {
	key, _ := idKey(raw)
	if _, dup := t.live[key]; dup {
		return id, nil, false
	}
	raw = bytes.Clone(raw) // raw is part of the reader's line
	id, idJSON, native := nativeID(raw)
	if _, taken := t.pend[id]; taken || !native {
		for {
			t.seq++
			s := "#" + strconv.FormatUint(t.seq, 10)
			id = jsonrpc2.ID{Str: s, IsString: true}
			if _, taken := t.pend[id]; !taken {
				idJSON = []byte(`"` + s + `"`)
				break
			}
		}
	}
	t.pend[id] = &pending{raw: raw, key: key, batch: b}
	t.live[key] = id
	return id, idJSON, true
}

// retire removes the request the connection knows as id.
func (t *idTable) retire(id jsonrpc2.ID) (*pending, bool) {
	p, ok := t.pend[id]
	if !ok {
		return nil, false
	}
	delete(t.pend, id)
	if !p.dropped {
		delete(t.live, p.key)
	}
	return p, true
}

// drop marks the live request the client calls raw as cancelled and
// frees raw for the client. It returns the request's connection id.
func (t *idTable) drop(raw []byte) (jsonrpc2.ID, *pending, bool) {
	key, ok := idKey(raw)
	if !ok {
		return jsonrpc2.ID{}, nil, false
	}
	id, ok := t.live[key]
	if !ok {
		return jsonrpc2.ID{}, nil, false
	}
	p := t.pend[id]
	p.dropped = true
	delete(t.live, key)
	return id, p, true
}

// nativeID returns raw as jsonrpc2 holds it, and whether it holds it
// exactly as it came (then raw itself is the id's JSON).
func nativeID(raw []byte) (jsonrpc2.ID, []byte, bool) {
	if len(raw) >= 2 && raw[0] == '"' {
		inner := raw[1 : len(raw)-1]
		for _, c := range inner {
			if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
				return jsonrpc2.ID{}, nil, false
			}
		}
		return jsonrpc2.ID{Str: string(inner), IsString: true}, raw, true
	}
	if len(raw) == 0 || len(raw) > 19 || (raw[0] == '0' && len(raw) > 1) {
		return jsonrpc2.ID{}, nil, false
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return jsonrpc2.ID{}, nil, false
		}
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return jsonrpc2.ID{}, nil, false
	}
	return jsonrpc2.ID{Num: uint64(n)}, raw, true
}
