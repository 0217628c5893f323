// Package jsonx is the one place herdr-link imports github.com/goccy/go-json.
//
// Everything on a hot path (socket requests and responses, MCP tool
// arguments and results, envelopes) goes through these functions, so the
// JSON library can be swapped or fuzzed against encoding/json in one place.
// HTML escaping is off: the output matches what Herdr's serde_json writes.
package jsonx

import (
	"bytes"

	json "github.com/goccy/go-json"
)

// RawMessage is a raw encoded JSON value. It is the same type as
// encoding/json.RawMessage, so values pass between both libraries freely.
type RawMessage = json.RawMessage

// Marshal returns the compact JSON encoding of v without HTML escaping.
func Marshal(v any) ([]byte, error) {
	return json.MarshalWithOption(v, json.DisableHTMLEscape())
}

// MarshalIndent is like Marshal but indents the output with two spaces.
func MarshalIndent(v any) ([]byte, error) {
	b, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Unmarshal parses JSON data into v. Unknown object keys are ignored.
func Unmarshal(data []byte, v any) error {
	return json.Unmarshal(data, v)
}

// UnmarshalShared is Unmarshal whose decoded strings refer to data
// instead of copies of their bytes (a string with an escape is still a
// copy): hundreds of strings cost no allocation, but data must not change
// while any of them is in use, and each keeps all of data alive.
func UnmarshalShared(data []byte, v any) error {
	return json.UnmarshalWithOption(data, v, json.DecodeNoCopyString())
}

// UnmarshalStrict parses JSON data into v and rejects object keys that v
// does not declare.
func UnmarshalStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	return nil
}

// Valid reports whether data is one valid JSON value.
func Valid(data []byte) bool {
	return json.Valid(data)
}
