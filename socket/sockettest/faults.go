package sockettest

import (
	"bytes"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest/reqcheck"
)

// Fault changes how the server answers a method; see [Server.SetFault].
// Several fields may be set; they apply in field order and the first that
// ends the exchange wins.
type Fault struct {
	// Latency delays the answer.
	Latency time.Duration
	// Hang never answers: the connection stays open until the client goes
	// away or the server closes.
	Hang bool
	// DropBeforeResponse closes the connection without a reply.
	DropBeforeResponse bool
	// DropMidResponse writes the first half of the reply, then closes.
	DropMidResponse bool
	// Garbage answers with a line that is not JSON.
	Garbage bool
	// WrongID answers with a different request id.
	WrongID bool
	// OversizeBytes, when positive, pads the reply line to this size.
	OversizeBytes int
	// Error answers with this Herdr error instead of running the method.
	Error *schema.ErrorBody
}

// String names the fault's parts ("latency 1s, hang"), for a test's
// failure message.
func (f Fault) String() string {
	var parts []string
	if f.Latency != 0 {
		parts = append(parts, "latency "+f.Latency.String())
	}
	for _, b := range []struct {
		on   bool
		name string
	}{{f.Hang, "hang"}, {f.DropBeforeResponse, "drop before response"}, {f.DropMidResponse, "drop mid-response"}, {f.Garbage, "garbage"}, {f.WrongID, "wrong id"}} {
		if b.on {
			parts = append(parts, b.name)
		}
	}
	if f.OversizeBytes != 0 {
		parts = append(parts, "oversize "+strconv.Itoa(f.OversizeBytes))
	}
	if f.Error != nil {
		parts = append(parts, "error "+f.Error.Code)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// SetMissing makes the server pretend not to have methods: their requests
// fail to parse (unknown variant), as in a Herdr that predates them.
func (s *Server) SetMissing(methods ...string) {
	m := map[string]bool{}
	for _, x := range methods {
		m[x] = true
	}
	s.mu.Lock()
	s.missingM = m
	s.mu.Unlock()
}

func (s *Server) missing() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.releaseMissing) == 0 {
		return s.missingM
	}
	m := map[string]bool{}
	for k, v := range s.missingM {
		m[k] = v
	}
	for _, x := range s.releaseMissing {
		m[x] = true
	}
	return m
}

// SetFault makes method misbehave; method "" applies to every method
// without a fault of its own (ping included). A zero Fault clears it.
func (s *Server) SetFault(method string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f == (Fault{}) {
		delete(s.faults, method)
		return
	}
	s.faults[method] = f
}

// ClearFaults removes every fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = map[string]Fault{}
}

// SetRefuse stops (true) or resumes (false) accepting connections. While
// refusing, the socket file stays, so clients get "connection refused",
// as with a crashed Herdr.
func (s *Server) SetRefuse(refuse bool) error {
	s.mu.Lock()
	ln := s.ln
	if refuse {
		s.ln = nil
	}
	s.mu.Unlock()
	if refuse {
		if ln != nil {
			return ln.Close()
		}
		return nil
	}
	if ln != nil {
		return nil
	}
	if !s.Memory {
		if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return s.listen()
}

// applyFault reports whether the fault ended the exchange.
func (s *Server) applyFault(c net.Conn, req reqcheck.Request, f Fault) bool {
	if f.Latency > 0 {
		select {
		case <-time.After(f.Latency):
		case <-s.done:
			return true
		}
	}
	if f.Hang {
		s.awaitGone(c)
		return true
	}
	if f.DropBeforeResponse {
		return true
	}
	if f.Garbage {
		_, _ = c.Write([]byte("this is not json at all\n"))
		return true
	}
	if f.Error != nil {
		s.reply(c, errorLine(req.ID, f.Error.Code, f.Error.Message))
		return true
	}
	if f.DropMidResponse || f.WrongID || f.OversizeBytes > 0 {
		resp := s.respond(c, req)
		if resp == nil {
			return true
		}
		switch {
		case f.DropMidResponse:
			_, _ = c.Write(resp[:len(resp)/2])
		case f.WrongID:
			var env map[string]jsonx.RawMessage
			_ = jsonx.Unmarshal(resp, &env)
			env["id"], _ = jsonx.Marshal(req.ID + "-not-yours")
			out, _ := jsonx.Marshal(env)
			_, _ = c.Write(append(out, '\n'))
		default:
			pad := f.OversizeBytes - len(resp)
			if pad < 0 {
				pad = 0
			}
			out := append([]byte(`{"id":"`+req.ID+`","result":{"type":"pong","version":"0.8.2","protocol":20,"capabilities":null,"padding":"`), bytes.Repeat([]byte("x"), pad)...)
			out = append(out, "\"}}\n"...)
			_, _ = c.Write(out)
		}
		return true
	}
	return false
}
