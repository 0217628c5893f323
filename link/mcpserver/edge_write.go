package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/herdr-link/herdr-link/internal/jsonx"
)

// The edge's write side (see [stream]): every message the connection
// sends is re-framed here in the house style, under the client's id.

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
