//go:build linux

package herdrbench

import (
	"bytes"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// relayMaxLine is the relay's line bound (relayMaxLine in
// cmd/herdr-bench/bench/relay_linux.go).
const relayMaxLine = 64 << 20

// The bench's relay bounds both of its readers: an endless stdin line and
// an endless socket answer each end it with an error once past
// relayMaxLine, with no more than that (and the kernel's buffers) read.
func TestBenchRelayBounded(t *testing.T) {
	const slack = 4 << 20 // pipe and socket buffers
	zeros := make([]byte, 64<<10)
	t.Run("endless stdin line", func(t *testing.T) {
		cmd := exec.Command(bench, "relay", "-socket", filepath.Join(t.TempDir(), "none.sock"))
		in, _ := cmd.StdinPipe()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var written int64
		for written < 2*relayMaxLine+slack {
			n, err := in.Write(zeros)
			written += int64(n)
			if err != nil {
				break
			}
		}
		in.Close()
		err := cmd.Wait()
		if err == nil || !strings.Contains(stderr.String(), "longer than") {
			t.Errorf("bench-relay: %v, stderr %q", err, stderr.String())
		}
		if written > relayMaxLine+slack {
			t.Errorf("bench-relay took %d bytes of one stdin line, want at most %d", written, relayMaxLine+slack)
		}
	})
	t.Run("endless answer", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "s.sock")
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		var written atomic.Int64
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(30 * time.Second))
			for written.Load() < 2*relayMaxLine+slack {
				n, err := c.Write(zeros)
				written.Add(int64(n))
				if err != nil {
					return
				}
			}
		}()
		cmd := exec.Command(bench, "relay", "-socket", path)
		cmd.Stdin = strings.NewReader(`{"id":"a","method":"ping","params":{}}` + "\n")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err = cmd.Run()
		if err == nil || !strings.Contains(stderr.String(), "longer than") {
			t.Errorf("bench-relay: %v, stderr %q", err, stderr.String())
		}
		if n := written.Load(); n > relayMaxLine+slack {
			t.Errorf("bench-relay took %d bytes of one answer, want at most %d", n, relayMaxLine+slack)
		}
	})
}
