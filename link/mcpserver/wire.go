package mcpserver

import (
	"encoding/json"

	"github.com/herdr-link/herdr-link/internal/jsonx"
)

// The wire. Every JSON-RPC message the server writes is built by the
// functions of this file, with one encoder (jsonx: goccy/go-json, HTML
// escaping off, so "<name>" stays "<name>") and one key order: "jsonrpc"
// first, then "id", then "result" or "error" (responses) or "method" and
// "params" (notifications). The handler answers through the jsonrpc2
// connection (SendResponse, ReplyWithError, Notify); the stream turns the
// message the connection writes into one of these lines (edge.go).

var (
	linePrefix   = []byte(`{"jsonrpc":"2.0","id":`)
	resultMember = []byte(`,"result":`)
)

// resultLine frames an encoded result as the response to the request
// whose id is raw (the client's id, as sent).
func resultLine(raw json.RawMessage, result []byte) []byte {
	// +2: the closing brace and the newline the stream appends.
	line := make([]byte, 0, len(linePrefix)+len(raw)+len(resultMember)+len(result)+2)
	line = append(append(line, linePrefix...), raw...)
	line = append(append(line, resultMember...), result...)
	return append(line, '}')
}

// errorLine is a JSON-RPC error response. id is the raw JSON id, or nil
// for null.
func errorLine(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := jsonx.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: rpcError{code, msg}})
	return b
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// notificationLine is a notification without params.
func notificationLine(method string, params json.RawMessage) []byte {
	b, _ := jsonx.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params,omitempty"`
	}{"2.0", method, params})
	return b
}
