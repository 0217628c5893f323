package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/mcpclient"
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

// probeMCP implements --mcp [COMMAND…].
//
// Long: the handshake is a fixed sequence of requests, each printed as it
// happens; splitting it would only pass the transcript around.
func probeMCP(ctx context.Context, command []string, raw bool, stdout, stderr io.Writer) int {
	if len(command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintln(stderr, "herdr-link probe:", err)
			return 1
		}
		command = []string{exe, "serve"}
	}
	c, err := mcpclient.Start(command[0], command[1:], os.Environ())
	if err != nil {
		fmt.Fprintln(stderr, "herdr-link probe:", err)
		return 1
	}
	defer c.Close()
	last := time.Now()
	c.Trace = func(dir string, line []byte) {
		now := time.Now()
		shown := string(line)
		if !raw && len(shown) > 200 {
			shown = shown[:200] + fmt.Sprintf("… (%d bytes; --raw shows all)", len(line))
		}
		fmt.Fprintf(stdout, "  %+8.2f ms %s %s\n", float64(now.Sub(last).Microseconds())/1000, dir, shown)
		last = now
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	step := func(name string, f func() error) bool {
		fmt.Fprintf(stdout, "%s\n", name)
		last = time.Now()
		start := time.Now()
		if err := f(); err != nil {
			fmt.Fprintf(stdout, "  FAIL %s: %v\n", name, err)
			return false
		}
		fmt.Fprintf(stdout, "  ok   %.2f ms\n", float64(time.Since(start).Microseconds())/1000)
		return true
	}
	var tools []string
	list := func() error {
		raw, err := c.Call(ctx, "tools/list", map[string]any{})
		if err != nil {
			return err
		}
		var r struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		tools = nil
		if err := jsonx.Unmarshal(raw, &r); err != nil {
			return err
		}
		for _, t := range r.Tools {
			tools = append(tools, t.Name)
		}
		return nil
	}
	ok := step("initialize", func() error { _, err := c.Initialize(ctx, "2025-06-18"); return err }) &&
		step("tools/list", list)
	if ok && len(tools) == 0 {
		fmt.Fprintln(stdout, "the server lists no tools: it is not in a Herdr pane (see `herdr-link probe`)")
		return 1
	}
	ok = ok && step("tools/call herdr_link {}", func() error {
		r, err := c.CallTool(ctx, "herdr_link", nil)
		if err == nil && r.IsError {
			err = errors.New(r.Text())
		}
		return err
	}) && step("notifications/tools/list_changed", func() error {
		for _, n := range c.Notifications() {
			if n.Method == "notifications/tools/list_changed" {
				return nil
			}
		}
		return errors.New("not received")
	}) && step("tools/list (active)", func() error {
		if err := list(); err != nil {
			return err
		}
		if len(tools) != 4 {
			return fmt.Errorf("tools %v", tools)
		}
		return nil
	}) && step("ping", func() error { _, err := c.Call(ctx, "ping", nil); return err })
	if !ok {
		return 1
	}
	return 0
}
