package socket_test

import (
	"errors"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/socket"
)

// A server whose answer never ends (a lying Herdr writing zeros, or a
// JSON string that never closes) costs the client one bounded line: the
// call fails with ErrResponseTooLarge once past MaxResponseBytes, and no
// more than that and the socket buffers is read.
func TestEndlessAnswerBounded(t *testing.T) {
	const max, slack = 1 << 20, 1 << 20
	for _, tt := range []struct{ name, head string }{
		{"zeros", ""},
		{"an endless string", `{"id":"x","result":{"type":"agent_list","agents":[{"name":"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.sock")
			ln, err := net.Listen("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			var written atomic.Int64
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					go func() {
						defer c.Close()
						_ = c.SetDeadline(time.Now().Add(10 * time.Second))
						buf := make([]byte, 32<<10)
						_, _ = c.Read(buf) // the request
						n, _ := c.Write([]byte(tt.head))
						written.Add(int64(n))
						for i := range buf {
							buf[i] = 'a'
						}
						if tt.head == "" {
							clear(buf)
						}
						for written.Load() < 64*max {
							n, err := c.Write(buf)
							written.Add(int64(n))
							if err != nil {
								return
							}
						}
					}()
				}
			}()
			c := &socket.Client{Path: path, Timeout: 5 * time.Second, MaxResponseBytes: max}
			_, err = c.AgentList(t.Context())
			if !errors.Is(err, socket.ErrResponseTooLarge) {
				t.Errorf("AgentList: %v, want ErrResponseTooLarge", err)
			}
			if n := written.Load(); n > max+slack {
				t.Errorf("the client took %d bytes of an endless answer, want at most %d", n, max+slack)
			}
		})
	}
}
