package socket

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
)

var resultKey = []byte(`"result"`)

// SharedStrings is implemented by result types with many strings (an
// agent.list answer has several per agent) that take them as parts of one
// copy of the answer line instead of one allocation each: the client
// copies the line once, for the call, and decodes it with
// [jsonx.UnmarshalShared]. The strings keep that copy alive, so a caller
// that keeps one of them long (beyond the snapshot it belongs to) should
// clone it.
type SharedStrings interface {
	SharesAnswer()
}

// decodeResponse checks one response line against the request id and
// decodes its result object into into (a pointer; a *jsonx.RawMessage
// keeps it raw) in the same pass. prefixOK accepts "<id>:…" ids (events
// probes). line may be reused after the call: a [SharedStrings] result is
// decoded from a copy of it.
func decodeResponse(method, id string, line []byte, prefixOK bool, into any) error {
	env := struct {
		ID     *string           `json:"id"`
		Result any               `json:"result"`
		Error  *schema.ErrorBody `json:"error"`
	}{Result: into}
	unmarshal := jsonx.Unmarshal
	if _, ok := into.(SharedStrings); ok {
		line, unmarshal = bytes.Clone(line), jsonx.UnmarshalShared
	}
	if err := unmarshal(line, &env); err != nil {
		return fmt.Errorf("socket: %s: %w: %v", method, ErrMalformedResponse, err)
	}
	return checkEnvelope(method, id, env.ID, env.Error, env.Result != nil && bytes.Contains(line, resultKey), prefixOK, into)
}

// checkEnvelope checks a decoded response against the request id.
func checkEnvelope(method, id string, gotID *string, ebody *schema.ErrorBody, hasResult, prefixOK bool, into any) error {
	if gotID == nil {
		return fmt.Errorf("socket: %s: %w: response has no id", method, ErrMalformedResponse)
	}
	if ebody != nil {
		// Herdr answers requests it could not parse with id "".
		if *gotID == id || *gotID == "" || (prefixOK && strings.HasPrefix(*gotID, id+":")) {
			return Refusal(method, ebody)
		}
		return fmt.Errorf("socket: %s: %w: error response for id %q, sent %q", method, ErrProtocol, *gotID, id)
	}
	if *gotID != id {
		return fmt.Errorf("socket: %s: %w: response id %q does not match request id %q", method, ErrProtocol, *gotID, id)
	}
	if !hasResult {
		return fmt.Errorf("socket: %s: %w: response has neither a result object nor an error", method, ErrMalformedResponse)
	}
	if raw, ok := into.(*jsonx.RawMessage); ok {
		if len(*raw) == 0 || (*raw)[0] != '{' {
			return fmt.Errorf("socket: %s: %w: result is not an object", method, ErrMalformedResponse)
		}
		*raw = append(jsonx.RawMessage(nil), *raw...)
	}
	return nil
}

// resultTag is the "type" tag of the result of the response line to the
// request id: read from the line's head when Herdr wrote it as it does
// ({"id":ID,"result":{"type":TAG,…), else decoded.
func resultTag(id string, line []byte) string {
	const idKey, resultType = `{"id":"`, `","result":{"type":"`
	if rest, ok := bytes.CutPrefix(line, []byte(idKey)); ok {
		if rest, ok := bytes.CutPrefix(rest, []byte(id)); ok {
			if rest, ok := bytes.CutPrefix(rest, []byte(resultType)); ok {
				if i := bytes.IndexByte(rest, '"'); i >= 0 && bytes.IndexByte(rest[:i], '\\') < 0 {
					return string(rest[:i])
				}
			}
		}
	}
	var env struct {
		Result struct {
			Type string `json:"type"`
		} `json:"result"`
	}
	_ = jsonx.Unmarshal(line, &env)
	return env.Result.Type
}

// rawTag is the "type" tag of a raw result object.
func rawTag(raw []byte) string {
	var r struct {
		Type string `json:"type"`
	}
	_ = jsonx.Unmarshal(raw, &r)
	return r.Type
}
