package mcpserver

import (
	"bytes"
	"encoding/json"
	"reflect"
	"unsafe"

	"github.com/sourcegraph/jsonrpc2"
)

// messageSlots finds, in the value jsonrpc2's read loop passes to
// ReadObject (its unexported anyMessage: as of v0.2.3 a request or a
// response, see [message]), the field that takes a request. The library fills it through json.Unmarshaler, decoding the
// line with encoding/json twice (into a probe struct, then into a map for
// Request.UnmarshalJSON); the stream has the request decoded already and
// puts it in the request field itself. It does so only when the type has
// exactly that layout (checked once per type, by reflection); otherwise
// the connection decodes a line built for it (admitted.line), as slowly
// as the library does. TestMessageSlots fails when a jsonrpc2 release
// changes the layout.
type messageSlots struct {
	// The type last checked and whether it has the layout of message.
	// Only the connection's read loop uses them.
	checked reflect.Type
	ok      bool
}

// request returns where the message v takes a request, or nil when v is
// not a message of that layout.
func (m *messageSlots) request(v any) **jsonrpc2.Request {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil
	}
	if t := rv.Type(); t != m.checked {
		m.checked, m.ok = t, hasMessageLayout(t.Elem())
	}
	if !m.ok {
		return nil
	}
	return &(*message)(rv.UnsafePointer()).request
}

// message is the layout of jsonrpc2's anyMessage.
type message struct {
	request  *jsonrpc2.Request
	response *jsonrpc2.Response
}

func hasMessageLayout(t reflect.Type) bool {
	if t.Kind() != reflect.Struct || t.PkgPath() != reflect.TypeFor[jsonrpc2.Request]().PkgPath() ||
		t.NumField() != 2 || t.Size() != unsafe.Sizeof(message{}) {
		return false
	}
	req, resp := t.Field(0), t.Field(1)
	return req.Name == "request" && req.Type == reflect.TypeFor[*jsonrpc2.Request]() && req.Offset == unsafe.Offsetof(message{}.request) &&
		resp.Name == "response" && resp.Type == reflect.TypeFor[*jsonrpc2.Response]() && resp.Offset == unsafe.Offsetof(message{}.response)
}

// methodName decodes a method member (a JSON string, checked by
// classify) as jsonrpc2 does: encoding/json, unless it is plain ASCII
// without escapes.
func methodName(raw []byte) (string, bool) {
	t := bytes.TrimSpace(raw)
	if len(t) < 2 || t[0] != '"' || t[len(t)-1] != '"' {
		return "", false
	}
	inner := t[1 : len(t)-1]
	plain := true
	for _, c := range inner {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			plain = false
			break
		}
	}
	if plain {
		return string(inner), true
	}
	var s string
	if json.Unmarshal(t, &s) != nil {
		return "", false
	}
	return s, true
}
