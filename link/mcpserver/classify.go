package mcpserver

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/herdr-link/herdr-link/internal/jsonx"
)

// members are the members of a JSON-RPC message that the server reads:
// each the value of its last occurrence, as a decode into a map keeps it
// (nil when absent). They are parts of the line they were scanned from.
type members struct {
	jsonrpc, id, method, params, result, error []byte
}

// scanMembers reads the members of the JSON object line; ok is false when
// line is not an object.
func scanMembers(line []byte) (m members, ok bool) {
	ok = eachMember(line, func(k, v []byte) {
		switch string(k) {
		case "jsonrpc":
			m.jsonrpc = v
		case "id":
			m.id = v
		case "method":
			m.method = v
		case "params":
			m.params = v
		case "result":
			m.result = v
		case "error":
			m.error = v
		}
	})
	return m, ok
}

// classify checks one message against JSON-RPC 2.0 as MCP uses it. It
// returns code 0 and the message's members for a message to pass on;
// otherwise the error code, the id to answer with (nil: null) and the
// message. The members and the id are parts of line.
func classify(line []byte) (code int, id json.RawMessage, why string, m members) {
	if !jsonx.Valid(line) {
		return codeParseError, nil, "Parse error", m
	}
	switch line[0] {
	case '[':
		return codeInvalidRequest, nil, "Invalid Request: batches are not supported", m
	case '{':
	default:
		return codeInvalidRequest, nil, "Invalid Request: a message must be a JSON object", m
	}
	m, ok := scanMembers(line)
	if !ok {
		return codeParseError, nil, "Parse error", members{}
	}
	rawID, hasID := m.id, m.id != nil
	idOK := hasID && validID(rawID)
	answerID := json.RawMessage(nil)
	if idOK {
		answerID = bytes.TrimSpace(rawID)
	}
	hasMethod := m.method != nil
	if v := m.jsonrpc; v == nil || string(bytes.TrimSpace(v)) != `"2.0"` {
		if hasMethod && !hasID {
			return 1, nil, "notification without jsonrpc 2.0", members{} // notifications are never answered
		}
		return codeInvalidRequest, answerID, `Invalid Request: "jsonrpc" must be "2.0"`, members{}
	}
	if hasID && !idOK {
		return codeInvalidRequest, nil, "Invalid Request: id must be a string or a number", members{}
	}
	if hasMethod {
		if method, ok := jsonString(m.method); !ok || method == "" {
			if !hasID {
				return 1, nil, "notification without a method name", members{}
			}
			return codeInvalidRequest, answerID, "Invalid Request: method must be a non-empty string", members{}
		}
		if p := m.params; p != nil {
			t := bytes.TrimSpace(p)
			if len(t) == 0 || (t[0] != '{' && t[0] != '[' && string(t) != "null") {
				if !hasID {
					return 1, nil, "notification with bad params", members{}
				}
				return codeInvalidRequest, answerID, "Invalid Request: params must be an object or an array", members{}
			}
		}
		return 0, nil, "", m
	}
	if hasID && (m.result != nil || m.error != nil) {
		return 0, nil, "", m // a response; the connection ignores strays
	}
	return codeInvalidRequest, answerID, "Invalid Request: neither a request, a notification nor a response", members{}
}

// validID accepts any JSON string or number (JSON-RPC 2.0 ids; null is
// refused, as MCP requires).
func validID(raw json.RawMessage) bool {
	_, ok := idKey(bytes.TrimSpace(raw))
	return ok
}

// idKey returns a key under which two ids are equal exactly when they are
// the same JSON value: a string by its decoded text, a number by its value
// (1, 1.0 and 1e0 are one id; 2^64 and 2^64+1 are two). ok is false for
// anything that is not a string or a number.
func idKey(t []byte) (key string, ok bool) {
	if len(t) == 0 {
		return "", false
	}
	if t[0] == '"' {
		var s string
		if jsonx.Unmarshal(t, &s) != nil {
			return "", false
		}
		return "s" + s, true
	}
	n, ok := numberKey(t)
	if !ok {
		return "", false
	}
	return "n" + n, true
}

// numberKey normalises a JSON number to sign, significant digits and
// exponent: "-1.50e2" → "-15e1". A number whose exponent does not fit an
// int32 keeps its text as key (equal only to itself).
func numberKey(t []byte) (string, bool) {
	i := 0
	neg := false
	if i < len(t) && t[i] == '-' {
		neg = true
		i++
	}
	start := i
	var digits []byte
	exp := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		digits = append(digits, t[i])
		i++
	}
	if i == start || (len(digits) > 1 && digits[0] == '0') {
		return "", false // no integer part, or a leading zero
	}
	if i < len(t) && t[i] == '.' {
		i++
		fs := i
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			digits = append(digits, t[i])
			exp--
			i++
		}
		if i == fs {
			return "", false
		}
	}
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		i++
		es := i
		if i < len(t) && (t[i] == '+' || t[i] == '-') {
			i++
		}
		ds := i
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		if i == ds {
			return "", false
		}
		e, err := strconv.ParseInt(string(t[es:i]), 10, 32)
		if err != nil {
			if i != len(t) {
				return "", false
			}
			return "=" + string(t), true
		}
		exp += int(e)
	}
	if i != len(t) {
		return "", false
	}
	// Strip leading and trailing zeros of the significand.
	for len(digits) > 0 && digits[0] == '0' {
		digits = digits[1:]
	}
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	if len(digits) == 0 {
		return "0", true // 0, -0, 0.0, 0e5: one value
	}
	sign := ""
	if neg {
		sign = "-"
	}
	return sign + string(digits) + "e" + strconv.Itoa(exp), true
}
