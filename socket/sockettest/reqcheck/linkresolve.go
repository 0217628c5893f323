package reqcheck

import (
	"encoding/json"
	"strings"

	"github.com/herdr-link/herdr-link/internal/jsonx"
)

// linkResolve is pane.link.resolve, a method of protocol 22 that the
// generated protocol-20 schema lacks.
const linkResolve = "pane.link.resolve"

// LinkResolve gives pane.link.resolve a second chance after [Parse]
// refused it (perr) as an unknown variant, for a server simulating a
// release that has it: the request with its params when they carry the
// required fields, else an invalid_request in serde's form; any other
// refusal stays as it was.
func LinkResolve(line []byte, req Request, perr error) (Request, error) {
	if !strings.Contains(perr.Error(), "unknown variant `"+linkResolve+"`") {
		return req, perr
	}
	var env struct {
		ID     *string          `json:"id"`
		Method string           `json:"method"`
		Params jsonx.RawMessage `json:"params"`
	}
	if json.Unmarshal(line, &env) != nil || env.ID == nil || env.Method != linkResolve {
		return req, perr
	}
	var p linkParams
	if len(env.Params) == 0 || json.Unmarshal(env.Params, &p) != nil || p.PaneID == nil || p.Row == nil || p.Col == nil {
		return req, &requestError{"invalid params for " + linkResolve + ": pane_id, viewport_row and col are required" + at(line, len(line))}
	}
	return Request{ID: *env.ID, Method: env.Method, Params: env.Params}, nil
}

// linkParams is PaneLinkActivateParams of the protocol-22 schema (shared
// by pane.link.resolve): the fields the check requires.
type linkParams struct {
	PaneID *string `json:"pane_id"`
	Row    *uint16 `json:"viewport_row"`
	Col    *uint16 `json:"col"`
}
