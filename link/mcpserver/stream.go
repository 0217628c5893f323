package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"

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
type stream struct {
	r      *ndjson.Reader
	max    int
	in     io.Closer
	eof    bool
	wmu    sync.Mutex
	w      io.Writer
	log    *slog.Logger
	closed bool
}

func newStream(in io.Reader, out io.Writer, max int, log *slog.Logger) *stream {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	s := &stream{r: ndjson.NewReader(in, max), max: max, w: out, log: log}
	if c, ok := in.(io.Closer); ok {
		s.in = c
	}
	return s
}

// WriteObject writes one message as a line. Writes are serialized.
func (s *stream) WriteObject(obj any) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return s.writeLine(b)
}

func (s *stream) writeLine(b []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return io.ErrClosedPipe
	}
	_, err := s.w.Write(append(b, '\n'))
	return err
}

// Close stops writing and closes the input when it can be closed.
func (s *stream) Close() error {
	s.wmu.Lock()
	s.closed = true
	s.wmu.Unlock()
	if s.in != nil {
		return s.in.Close()
	}
	return nil
}

// replyError writes a JSON-RPC error response. id is the raw JSON id, or
// nil for null.
func (s *stream) replyError(id json.RawMessage, code int, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := jsonx.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	if err := s.writeLine(b); err != nil {
		s.log.Debug("mcp: cannot write error reply", "err", err)
	}
}

// ReadObject returns the next well-formed message, answering everything
// else on the way.
func (s *stream) ReadObject(v any) error {
	for {
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
		if code, id, why := classify(msg); code != 0 {
			s.log.Debug("mcp: rejected line", "code", code, "why", why)
			if code > 0 { // a notification-shaped problem: no reply
				continue
			}
			s.replyError(id, code, why)
			continue
		}
		if err := json.Unmarshal(msg, v); err != nil {
			s.replyError(nil, codeInvalidRequest, "Invalid Request: "+err.Error())
			continue
		}
		return nil
	}
}

// classify checks one line against JSON-RPC 2.0 as MCP uses it. It returns
// code 0 for a message to pass on; otherwise the error code, the id to
// answer with (nil: null) and the message.
func classify(line []byte) (code int, id json.RawMessage, why string) {
	if !jsonx.Valid(line) {
		return codeParseError, nil, "Parse error"
	}
	switch line[0] {
	case '[':
		return codeInvalidRequest, nil, "Invalid Request: batches are not supported"
	case '{':
	default:
		return codeInvalidRequest, nil, "Invalid Request: a message must be a JSON object"
	}
	var m map[string]json.RawMessage
	if err := jsonx.Unmarshal(line, &m); err != nil {
		return codeParseError, nil, "Parse error"
	}
	rawID, hasID := m["id"]
	idOK := hasID && validID(rawID)
	answerID := json.RawMessage(nil)
	if idOK {
		answerID = rawID
	}
	_, hasMethod := m["method"]
	if v, ok := m["jsonrpc"]; !ok || string(bytes.TrimSpace(v)) != `"2.0"` {
		if hasMethod && !hasID {
			return 1, nil, "notification without jsonrpc 2.0" // notifications are never answered
		}
		return codeInvalidRequest, answerID, `Invalid Request: "jsonrpc" must be "2.0"`
	}
	if hasID && !idOK {
		return codeInvalidRequest, nil, "Invalid Request: id must be a string or a non-negative integer"
	}
	if rawMethod := m["method"]; hasMethod {
		var method string
		if err := jsonx.Unmarshal(rawMethod, &method); err != nil || method == "" {
			if !hasID {
				return 1, nil, "notification without a method name"
			}
			return codeInvalidRequest, answerID, "Invalid Request: method must be a non-empty string"
		}
		if p, ok := m["params"]; ok {
			t := bytes.TrimSpace(p)
			if len(t) == 0 || (t[0] != '{' && t[0] != '[' && string(t) != "null") {
				if !hasID {
					return 1, nil, "notification with bad params"
				}
				return codeInvalidRequest, answerID, "Invalid Request: params must be an object or an array"
			}
		}
		return 0, nil, ""
	}
	_, hasResult := m["result"]
	_, hasError := m["error"]
	if hasID && (hasResult || hasError) {
		return 0, nil, "" // a response; the connection ignores strays
	}
	return codeInvalidRequest, answerID, "Invalid Request: neither a request, a notification nor a response"
}

// validID accepts strings and non-negative integers that fit uint64.
func validID(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return false
	}
	if t[0] == '"' {
		var s string
		return jsonx.Unmarshal(t, &s) == nil
	}
	if bytes.ContainsAny(t, ".eE-+") {
		return false
	}
	n, err := strconv.ParseUint(string(t), 10, 64)
	return err == nil && n <= math.MaxUint64
}
