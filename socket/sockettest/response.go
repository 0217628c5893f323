package sockettest

import (
	"fmt"
	"net"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
)

// The response: one line, checked (Server.Check), then "\n".

func errorLine(id, code, msg string) []byte {
	b, _ := jsonx.Marshal(schema.ErrorResponse{ID: id, Error: schema.ErrorBody{Code: code, Message: msg}})
	return b
}

type success struct {
	ID     string `json:"id"`
	Result any    `json:"result"`
}

func resultLine(id string, result any) []byte {
	if raw, ok := result.(jsonx.RawMessage); ok {
		idb, _ := jsonx.Marshal(id)
		b := lineBuffer(len(raw) + len(idb) + 20)
		b = append(append(append(b, `{"id":`...), idb...), `,"result":`...)
		return append(append(b, raw...), '}')
	}
	b, err := jsonx.Marshal(success{ID: id, Result: result})
	if err != nil {
		return errorLine(id, "internal_error", "failed to encode response")
	}
	return b
}

var newline = []byte{'\n'}

// reply writes one checked line and "\n" (one writev, no copy of line).
func (s *Server) reply(c net.Conn, line []byte) {
	s.check(line)
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	bufs := net.Buffers{line, newline}
	_, _ = bufs.WriteTo(c)
	releaseLine(line)
}

func (s *Server) check(line []byte) {
	if s.Check == nil {
		return
	}
	if err := s.Check(line); err != nil {
		s.mu.Lock()
		s.checkErr = append(s.checkErr, fmt.Errorf("%w: %s", err, truncate(line)))
		s.mu.Unlock()
		s.logf("sockettest: response fails the schema: %v", err)
	}
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
