package mcpserver_test

import (
	"io"
	"testing"

	"github.com/herdr-link/herdr-link/internal/mcpclient"
	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/link/mcpserver"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// BenchmarkToolsCall is one tools/call through the MCP server, in process
// over pipes, against the simulator on a real socket.
func BenchmarkToolsCall(b *testing.B) {
	for _, tc := range []struct {
		name   string
		tool   string
		args   map[string]any
		outbox bool // as the binary runs: a store, and the courier serving it
	}{
		{"tool=peers", "herdr_link_peers", nil, false},
		{"tool=peers,outbox", "herdr_link_peers", nil, true},
		// "when": "now": typed at once, as every send was before messages could wait.
		{"tool=send", "herdr_link_send", map[string]any{"to": "reviewer", "message": "benchmark", "when": "now"}, false},
		{"tool=gateway-activate", "herdr_link", nil, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			srv := sockettest.NewServer(nil)
			defer srv.Close()
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			// As the binary runs it: NewSocketHerdr sizes each agent list from the last.
			l := mustLink(b, link.Config{Herdr: link.NewSocketHerdr(srv.Client()), PaneID: "w1:p1"})
			if tc.outbox {
				st, err := outbox.Open(b.TempDir(), "bench")
				if err != nil {
					b.Fatal(err)
				}
				l = relink(b, l, func(c *link.Config) { c.Outbox = st })
			}
			opt := mcpserver.Options{Link: l}
			go func() { _ = mcpserver.Serve(b.Context(), inR, outW, opt); outW.Close() }()
			cl := mcpclient.New(outR, inW)
			defer cl.Close()
			ctx := b.Context()
			if _, err := cl.Initialize(ctx, "2025-06-18"); err != nil {
				b.Fatal(err)
			}
			if _, err := cl.CallTool(ctx, tc.tool, tc.args); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				r, err := cl.CallTool(ctx, tc.tool, tc.args)
				if err != nil || r.IsError {
					b.Fatal(err, r.Text())
				}
			}
		})
	}
}
