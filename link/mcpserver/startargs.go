package mcpserver

import (
	"bytes"
	"errors"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link"
)

// errStartArgs is the fixed text of a start call whose fields have the
// wrong types. Which of "kind" and "agent" is given, and the values, are
// checked by link.Start (START_INPUT_INVALID): the schema stays flat.
var errStartArgs = errors.New(`start needs {"name": string, "kind": string or "agent": string, "args"?: [string], "placement"?: "right"|"down"|"tab", "beside"?: string, "cwd"?: string, "message"?: string}`)

// startKeys are the fields a start takes; the gateway also carries its own
// "action" and "arguments".
var startKeys = map[string]bool{"name": true, "kind": true, "agent": true, "args": true, "placement": true, "beside": true, "cwd": true, "message": true}

func parseStart(a rawArgs, gateway bool) (link.StartRequest, error) {
	var r link.StartRequest
	for k := range a {
		if !startKeys[k] && !(gateway && (k == "action" || k == "arguments")) {
			return r, errStartArgs
		}
	}
	fields := []struct {
		key string
		dst *string
	}{{"name", &r.Name}, {"kind", &r.Kind}, {"agent", &r.Agent}, {"placement", &r.Placement}, {"beside", &r.Beside}, {"cwd", &r.Cwd}, {"message", &r.Message}}
	for _, f := range fields {
		v, _, err := a.str(f.key)
		if err != nil {
			return r, errStartArgs
		}
		*f.dst = v
	}
	if v, ok := a["args"]; ok && string(bytes.TrimSpace(v)) != "null" {
		r.Args = []string{}
		if err := jsonx.Unmarshal(v, &r.Args); err != nil {
			return r, errStartArgs
		}
	}
	if r.Name == "" {
		return r, errStartArgs
	}
	return r, nil
}
