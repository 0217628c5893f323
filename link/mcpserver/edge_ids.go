package mcpserver

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/sourcegraph/jsonrpc2"
)

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
	// result is the response's encoded result, staged by the handler
	// before the connection writes the response (see [stream.stage]).
	result []byte
	// params are the request's params as the client sent them (nil:
	// none), held for the handler (see [stream.params]).
	params json.RawMessage
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
