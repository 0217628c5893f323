package sockettest

import (
	"fmt"
	"strconv"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/socket/sockettest/herdrstate"
)

// Pong is what ping reports for one protocol number.
type Pong struct {
	Version      string
	Capabilities jsonx.RawMessage // a JSON object, or null
}

// MinProtocol and MaxProtocol bound the protocols [PongFor] knows.
const (
	MinProtocol = 19
	MaxProtocol = 25
)

const (
	caps20 = herdrstate.Caps082
	caps22 = herdrstate.Caps09
)

// PongFor returns the ping answer of a Herdr speaking protocol p, for p in
// 19–25: 19 is Herdr 0.8.0, 20 is 0.8.2, 21 never shipped in a stable
// release (a preview), 22 is 0.9.x with its three added capabilities.
// 23–25 are hypothetical later releases that only add: a newer version
// string and capabilities of shapes herdr-link has never seen (a null, a
// number, an object), which clients must tolerate.
func PongFor(p uint32) (Pong, error) {
	switch {
	case p == 19:
		return Pong{"0.8.0", jsonx.RawMessage(caps20)}, nil
	case p == 20:
		return Pong{"0.8.2", jsonx.RawMessage(caps20)}, nil
	case p == 21:
		return Pong{"0.9.0-preview.3", jsonx.RawMessage(caps20)}, nil
	case p == 22:
		return Pong{"0.9.1", jsonx.RawMessage(caps22)}, nil
	case p > 22 && p <= MaxProtocol:
		minor := strconv.Itoa(int(p) - 13) // 23 → 0.10.0
		caps := `{"live_handoff":true,"detached_server_daemon":false,"endpoint_protocol_generation":null,"health_check":true,` +
			`"surface_interest":true,"render_budget_ms":16,"graphics":{"formats":["rgba","bgra"],"max_layers":` + strconv.Itoa(int(p)) + `}}`
		return Pong{"0." + minor + ".0", jsonx.RawMessage(caps)}, nil
	}
	return Pong{}, fmt.Errorf("sockettest: no pong known for protocol %d (known: %d–%d)", p, MinProtocol, MaxProtocol)
}

// UseProtocol makes the server report protocol p with its version and
// capabilities ([PongFor]). Call it before Start.
func (s *Server) UseProtocol(p uint32) error {
	pong, err := PongFor(p)
	if err != nil {
		return err
	}
	s.Protocol, s.Version, s.CapabilitiesJSON = p, pong.Version, pong.Capabilities
	s.protocol.Store(p)
	return nil
}

// pongLine is ping's answer in serde's field order.
func (s *Server) pongLine(id string) []byte {
	if s.CapabilitiesJSON == nil {
		return nil
	}
	v, _ := jsonx.Marshal(s.Version)
	raw := `{"type":"pong","version":` + string(v) + `,"protocol":` + strconv.FormatUint(uint64(s.protocol.Load()), 10) +
		`,"capabilities":` + string(s.CapabilitiesJSON) + `}`
	return resultLine(id, jsonx.RawMessage(raw))
}
