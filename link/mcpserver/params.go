package mcpserver

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/herdr-link/herdr-link/internal/jsonx"
)

// Params are read by exact key, as tool arguments are (args.go): goccy,
// like encoding/json, would match a struct field's key in any case, so
// {"NAME":…} would be taken for "name".

// paramMap decodes a params object into its members. Absent or null
// params are an empty map.
func paramMap(raw *json.RawMessage) (map[string]jsonx.RawMessage, error) {
	if raw == nil {
		return nil, nil
	}
	return rawMap(*raw)
}

func rawMap(raw jsonx.RawMessage) (map[string]jsonx.RawMessage, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	var m map[string]jsonx.RawMessage
	if err := jsonx.Unmarshal(t, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// toolCall is tools/call's params.
type toolCall struct {
	name      string
	arguments jsonx.RawMessage
}

const callUsage = "Invalid params: tools/call needs {\"name\": string, \"arguments\"?: object}"

// callParams reads tools/call's params; msg is the invalid-params error
// ("" when they are valid). The members are scanned, not decoded into a
// map: the same keys, exactly (a repeated key never gets here: the edge
// refuses it).
func callParams(raw *json.RawMessage) (p toolCall, msg string) {
	if raw == nil {
		return p, callUsage
	}
	var name []byte
	var unknown []string
	ok := eachMember(*raw, func(k, v []byte) {
		switch string(k) {
		case "name":
			name = v
		case "arguments":
			p.arguments = v
		case "_meta":
		default:
			unknown = append(unknown, string(k))
		}
	})
	if !ok {
		return toolCall{}, callUsage
	}
	if len(unknown) > 0 {
		k := slices.Min(unknown)
		if len(k) > 64 {
			k = k[:64] + "…"
		}
		q, _ := jsonx.Marshal(k)
		return toolCall{}, "Invalid params: tools/call takes no parameter " + string(q) + ` (keys match exactly: "name", "arguments", "_meta")`
	}
	if p.name, ok = jsonString(name); !ok || p.name == "" {
		return toolCall{}, callUsage
	}
	return p, ""
}
