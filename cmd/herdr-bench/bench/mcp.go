package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/herdr-link/herdr-link/internal/cliflag"
	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/mcpclient"
	"github.com/herdr-link/herdr-link/internal/sibling"
)

// mcp is 'herdr-bench mcp': the MCP handshake against herdr-link (found
// as -link says) or against the COMMAND given, each line timed.
func mcp(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := cliflag.New("herdr-bench mcp [flags] [COMMAND ARGS...]", "Runs the MCP handshake (initialize, tools/list, herdr_link, list_changed, ping) against herdr-link serve, or against COMMAND, and prints every line with its timing. Run it in a Herdr pane, or with the HERDR_* lines of 'herdr-sim serve'.", stderr)
	linkBin := fs.String("link", "", "the herdr-link binary to run (default: herdr-link beside herdr-bench, then on PATH)")
	raw := fs.Bool("raw", false, "print whole lines (long ones are cut at 200 bytes)")
	if code, done := cliflag.Parse(fs, args, stdout); done {
		return code
	}
	command := fs.Args()
	if len(command) == 0 {
		exe, err := sibling.Find("herdr-link", "link", *linkBin)
		if err != nil {
			fmt.Fprintln(stderr, "herdr-bench mcp:", err)
			return 1
		}
		command = []string{exe, "serve"}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return handshake(ctx, command, *raw, stdout, stderr)
}

// handshake runs the MCP handshake against command, printing each line.
//
// Long: the handshake is a fixed sequence of requests, each printed as it
// happens; splitting it would only pass the transcript around.
func handshake(ctx context.Context, command []string, raw bool, stdout, stderr io.Writer) int {
	c, err := mcpclient.Start(command[0], command[1:], os.Environ())
	if err != nil {
		fmt.Fprintln(stderr, "herdr-bench mcp:", err)
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
		fmt.Fprintln(stdout, "the server lists no tools: it is not in a Herdr pane (see 'herdr-link probe')")
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
		if len(tools) != 6 {
			return fmt.Errorf("tools %v", tools)
		}
		return nil
	}) && step("ping", func() error { _, err := c.Call(ctx, "ping", nil); return err })
	if !ok {
		return 1
	}
	return 0
}
