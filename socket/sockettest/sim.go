package sockettest

import (
	"bytes"
	"net"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
)

// SimMethodTurns is the simulator-only method that answers a pane's
// submissions, for `herdr-sim turns`:
//
//	→ {"id":"t","method":"sim.turns","params":{"pane_id":"w1:p2"}}
//	← {"id":"t","result":{"type":"sim_turns","turns":[{"at":"2026-12-01T09:00:00.1Z","text":"…"}]}}
//	← {"id":"t","error":{"code":"pane_not_found","message":"pane w1:p9 not found"}}
//
// Real Herdr has no such method and answers invalid_request ("unknown
// variant `sim.turns`"), which is also what the simulator answers when
// [Server.HerdrOnly] is set. Its requests are not logged in
// [Server.Requests] and its replies are not Herdr lines, so they are not
// checked against Herdr's schema; every Herdr method is untouched.
const SimMethodTurns = "sim.turns"

// SimTurnsResult is the result of [SimMethodTurns].
type SimTurnsResult struct {
	Type  string       `json:"type"` // "sim_turns"
	Turns []Submission `json:"turns"`
}

// simRequest is a request for a simulator-only method.
type simRequest struct {
	ID     string
	Method string
	PaneID string
}

var simMarker = []byte(`"sim.`)

// parseSimRequest recognizes a simulator-only request: a JSON object
// whose "method" is a string naming a sim.* method, with a string "id"
// and "params" holding a string "pane_id". Anything else (ok false) is
// left to Herdr's parser, which rejects sim.* names as unknown methods.
func parseSimRequest(line []byte) (simRequest, bool) {
	if !bytes.Contains(line, simMarker) {
		return simRequest{}, false
	}
	var req struct {
		ID     *string `json:"id"`
		Method *string `json:"method"`
		Params *struct {
			PaneID *string `json:"pane_id"`
		} `json:"params"`
	}
	if jsonx.Unmarshal(line, &req) != nil || req.Method == nil || *req.Method != SimMethodTurns ||
		req.ID == nil || req.Params == nil || req.Params.PaneID == nil {
		return simRequest{}, false
	}
	return simRequest{ID: *req.ID, Method: *req.Method, PaneID: *req.Params.PaneID}, true
}

// serveSim answers a simulator-only request.
func (s *Server) serveSim(c net.Conn, req simRequest) {
	turns, ok := s.World.Turns(req.PaneID)
	var line []byte
	if !ok {
		line = errorLine(req.ID, "pane_not_found", "pane "+req.PaneID+" not found")
	} else {
		line = resultLine(req.ID, SimTurnsResult{Type: "sim_turns", Turns: turns})
	}
	writeLine(c, line)
}

// Submissions is [World.Submissions] of the served world.
func (s *Server) Submissions(paneID string) []Submission { return s.World.Submissions(paneID) }

// writeLine writes line and "\n" without the schema check.
func writeLine(c net.Conn, line []byte) {
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	bufs := net.Buffers{line, newline}
	_, _ = bufs.WriteTo(c)
}
