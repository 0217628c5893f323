package herdrlink

import (
	"context"
	"fmt"
	"io"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
)

// callOne implements --call METHOD [PARAMS_JSON].
func (p *prober) callOne(ctx context.Context, method string, rest []string, stdout, stderr io.Writer) int {
	if len(rest) > 1 {
		fmt.Fprintln(stderr, "herdr-link probe: --call takes METHOD and at most one PARAMS_JSON argument")
		return 2
	}
	params := []byte("{}")
	if len(rest) == 1 {
		params = []byte(rest[0])
	}
	if err := checkParams(method, params); err != nil {
		fmt.Fprintln(stderr, "herdr-link probe:", err)
		return 2
	}
	res, err := socket.ResolvePath(p.getenv)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-link probe:", err)
		return 1
	}
	p.client = p.newClient(res.Path, socket.ProtocolStrict)
	line, rtt, err := p.call(ctx, method, jsonx.RawMessage(params), nil)
	if line != nil && !p.raw {
		pretty, perr := jsonx.MarshalIndent(jsonx.RawMessage(line))
		if perr != nil {
			pretty = line
		}
		fmt.Fprintln(stdout, string(pretty))
	}
	fmt.Fprintf(stderr, "%s: %.2f ms round trip\n", method, float64(rtt.Microseconds())/1000)
	for _, c := range p.checks {
		fmt.Fprintf(stderr, "%s:\n%s\n", c.Name, c.Detail)
	}
	if err != nil || len(p.checks) > 0 {
		if err != nil && line == nil {
			fmt.Fprintln(stderr, "herdr-link probe:", err, "—", transportFix(err, res))
		}
		return 1
	}
	return 0
}

// checkParams validates PARAMS_JSON against the generated params type of
// method before anything is sent.
func checkParams(method string, params []byte) error {
	proto, ok := schema.NewParams(method)
	if !ok {
		return fmt.Errorf("unknown method %q (the schema has %d methods, e.g. agent.list, pane.get)", method, len(schema.Methods))
	}
	var present map[string]jsonx.RawMessage
	if err := jsonx.Unmarshal(params, &present); err != nil {
		return fmt.Errorf("params must be a JSON object: %v", err)
	}
	for _, f := range schema.RequiredParams(method) {
		if _, ok := present[f]; !ok {
			return fmt.Errorf("%s needs params field %q", method, f)
		}
	}
	if err := jsonx.UnmarshalStrict(params, proto); err != nil {
		return fmt.Errorf("params do not fit %s's params type: %v", method, err)
	}
	return nil
}
