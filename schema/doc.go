// Package schema holds Go types for Herdr's local socket API, generated from
// the JSON Schema document Herdr commits (docs/next/api/herdr-api.schema.json
// upstream, printed by `herdr api schema --json`).
//
// Every request's params type, every result variant of [ResponseResult]
// (tagged by "type"), [ErrorResponse], [AgentInfo], [PaneInfo], the event
// envelopes and the method-name constants come from the document; the
// mapping rules are in schema/internal/gen. [AgentStatus] decodes statuses it
// does not know as [AgentStatusUnknown].
//
// The files are generated from protocol 20 (Herdr 0.8.2). Everything
// herdr-link uses is identical under protocol 22 (Herdr 0.9.x); see
// [Compatible].
//
// To regenerate after changing the generator or the input:
//
//	go generate ./schema/...
package schema

//go:generate go run ./gen -in ../../shared/herdr-api/herdr-api.schema.protocol-20.json -out .

import "errors"

// MethodInfo names a wire method and its params type.
type MethodInfo struct {
	Name   string
	Params string
}

// Compatible lists the protocol numbers whose schema is identical to the
// generated one for every type herdr-link uses (agent.*, pane.close,
// pane.get, pane.list, ping, AgentInfo, PaneInfo, events, errors). A test
// checks the claim against the committed protocol 22 document.
var Compatible = []uint32{20, 22}

// IsCompatible reports whether protocol p is in [Compatible].
func IsCompatible(p uint32) bool {
	for _, c := range Compatible {
		if c == p {
			return true
		}
	}
	return false
}

type errEmptyUnion string

func (e errEmptyUnion) Error() string { return "schema: empty " + string(e) + ": no variant set" }

var _ = errors.New
