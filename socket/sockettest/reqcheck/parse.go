package reqcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
)

// Request is a request line that passed Herdr's serde checks.
type Request struct {
	ID     string
	Method string
	Params jsonx.RawMessage
}

// requestError is an invalid_request; its message follows serde_json's
// wording ("missing field `params` at line 1 column 26").
type requestError struct{ msg string }

func (e *requestError) Error() string { return "invalid request: " + e.msg }

func at(line []byte, off int) string {
	if off < 0 || off > len(line) {
		off = len(line)
	}
	return fmt.Sprintf(" at line 1 column %d", off)
}

// wireMethods lists every method name the request parser accepts, for the
// "expected one of" message: the schema's, plus pane.graphics.stream,
// which Herdr accepts but hides from the schema.
func wireMethods() string {
	var b strings.Builder
	for i, m := range schema.Methods {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("`" + m.Name + "`")
	}
	b.WriteString(", `pane.graphics.stream`")
	return b.String()
}

var wireMethodList = wireMethods()

// MissingMethod is serde's error for method in a Herdr that lacks the
// methods in missing (line is the request line).
func MissingMethod(method string, missing map[string]bool, line []byte) error {
	var b strings.Builder
	for _, m := range schema.Methods {
		if missing[m.Name] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString("`" + m.Name + "`")
	}
	return &requestError{fmt.Sprintf("unknown variant `%s`, expected one of %s", method, b.String()) + at(line, len(line))}
}

func kindOf(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "null":
		return "null"
	case s == "true" || s == "false":
		return "boolean `" + s + "`"
	case strings.HasPrefix(s, "{"):
		return "map"
	case strings.HasPrefix(s, "["):
		return "sequence"
	case strings.HasPrefix(s, `"`):
		var str string
		_ = json.Unmarshal(raw, &str)
		return "string " + fmt.Sprintf("%q", str)
	case strings.ContainsAny(s, ".eE"):
		return "floating point `" + s + "`"
	}
	return "integer `" + s + "`"
}

// Parse applies Herdr's request rules to one trimmed line. Its error is
// the message of Herdr's invalid_request answer.
func Parse(line []byte) (Request, error) {
	if req, ok := fastParse(line); ok {
		return req, nil
	}
	return slowParse(line)
}

var (
	keyID     = []byte(`"id"`)
	keyMethod = []byte(`"method"`)
	keyParams = []byte(`"params"`)
)

// fastParse accepts the common, well-formed request quickly; anything it
// is not sure about goes to slowParse, which produces serde's exact errors.
func fastParse(line []byte) (Request, bool) {
	var req Request
	if bytes.Count(line, keyID) != 1 || bytes.Count(line, keyMethod) != 1 || bytes.Count(line, keyParams) != 1 {
		return req, false
	}
	var top map[string]jsonx.RawMessage
	if jsonx.Unmarshal(line, &top) != nil {
		return req, false
	}
	rawID, rawMethod, rawParams := top["id"], top["method"], top["params"]
	if len(rawID) == 0 || rawID[0] != '"' || len(rawMethod) == 0 || rawMethod[0] != '"' || len(rawParams) == 0 {
		return req, false
	}
	if jsonx.Unmarshal(rawID, &req.ID) != nil || jsonx.Unmarshal(rawMethod, &req.Method) != nil {
		return req, false
	}
	proto, known := schema.NewParams(req.Method)
	if !known || rawParams[0] != '{' {
		return req, false
	}
	if required := schema.RequiredParams(req.Method); len(required) > 0 {
		var present map[string]jsonx.RawMessage
		if jsonx.Unmarshal(rawParams, &present) != nil {
			return req, false
		}
		for _, f := range required {
			if v, ok := present[f]; !ok || string(v) == "null" {
				return req, false
			}
		}
	}
	if jsonx.Unmarshal(rawParams, proto) != nil || checkParams(req.Method, rawParams) != "" {
		return req, false
	}
	req.Params = rawParams
	return req, true
}

// slowParse walks the line token by token, as serde does, to report the
// first problem with serde's wording.
func slowParse(line []byte) (Request, error) {
	var req Request
	dec := json.NewDecoder(bytes.NewReader(line))
	tok, err := dec.Token()
	if err != nil {
		return req, syntaxError(line, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		raw := line
		return req, &requestError{"invalid type: " + kindOf(raw) + ", expected struct Request" + at(line, 1)}
	}
	fields := map[string]json.RawMessage{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return req, syntaxError(line, err)
		}
		key, _ := kt.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return req, syntaxError(line, err)
		}
		if _, dup := fields[key]; dup && (key == "id" || key == "method" || key == "params") {
			return req, &requestError{"duplicate field `" + key + "`" + at(line, int(dec.InputOffset()))}
		}
		fields[key] = raw
	}
	if _, err := dec.Token(); err != nil {
		return req, syntaxError(line, err)
	}
	end := int(dec.InputOffset())
	if _, err := dec.Token(); err != io.EOF {
		return req, &requestError{"trailing characters" + at(line, end+1)}
	}
	rawID, ok := fields["id"]
	if !ok {
		return req, &requestError{"missing field `id`" + at(line, end)}
	}
	if err := json.Unmarshal(rawID, &req.ID); err != nil {
		return req, &requestError{"invalid type: " + kindOf(rawID) + ", expected a string" + at(line, bytes.Index(line, rawID)+len(rawID))}
	}
	rawMethod, ok := fields["method"]
	if !ok {
		return req, &requestError{"missing field `method`" + at(line, end)}
	}
	if err := json.Unmarshal(rawMethod, &req.Method); err != nil {
		return req, &requestError{"invalid type: " + kindOf(rawMethod) + ", expected variant identifier" + at(line, end)}
	}
	if _, known := schema.NewParams(req.Method); !known && req.Method != "pane.graphics.stream" {
		return req, &requestError{fmt.Sprintf("unknown variant `%s`, expected one of %s", req.Method, wireMethodList) + at(line, end)}
	}
	rawParams, ok := fields["params"]
	if !ok {
		return req, &requestError{"missing field `params`" + at(line, end)}
	}
	req.Params = rawParams
	// Everything but the id went through serde's flatten buffer, so params
	// errors are reported where the reader stands: the end of the line.
	if msg := checkParams(req.Method, rawParams); msg != "" {
		return req, &requestError{msg + at(line, end)}
	}
	return req, nil
}

func syntaxError(line []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		msg := se.Error()
		switch {
		case strings.Contains(msg, "in literal"):
			msg = "expected ident"
		case strings.Contains(msg, "after object key:value pair"):
			msg = "expected `,` or `}`"
		case strings.Contains(msg, "after object key"):
			msg = "expected `:`"
		case strings.Contains(msg, "after array element"):
			msg = "expected `,` or `]`"
		case strings.Contains(msg, "beginning of object key string"):
			msg = "key must be a string"
		case strings.Contains(msg, "in string literal"):
			msg = "control character (\\u0000-\\u001F) found while parsing a string"
		case strings.Contains(msg, "in string escape code"):
			msg = "invalid escape"
		default:
			msg = "expected value"
		}
		return &requestError{msg + at(line, int(se.Offset))}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &requestError{"EOF while parsing a value" + at(line, len(line))}
	}
	return &requestError{err.Error() + at(line, len(line))}
}
