package herdrbench

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// TestBenchLive: against a live Herdr (here the simulator's socket, without
// --sim) the bench names what it needs and types nothing into a pane
// without consent.
func TestBenchLive(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	withPeer, err := sockettest.GeneratedWorld(4, 1)
	if err != nil {
		t.Fatal(err)
	}
	noPeer, err := sockettest.ParseWorld([]byte(e2eWorld))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		world  *sockettest.World
		pane   string // the bench's own agent
		args   []string
		code   int
		stderr string
		typed  bool // agent.prompt reached the simulator
	}{
		{"no bench-peer", noPeer, "brain", []string{"--op", "send"}, 1, "agent named bench-peer in this pane's workspace, and there is only reviewer, stuck", false},
		{"no consent off a terminal", withPeer, "bench-self", []string{"--op", "peers,send"}, 1, "pass --yes to allow it", false},
		{"peers only", withPeer, "bench-self", []string{"--op", "peers"}, 0, "", false},
		{"consent", withPeer, "bench-self", []string{"--op", "send", "--yes"}, 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := simtest.New(t, tt.world)
			self, _ := tt.world.Agent(tt.pane)
			args := append([]string{"-n", "1", "--warmup", "0", "--spawns", "1", "--route", "socket"}, tt.args...)
			cmd := exec.Command(bench, args...)
			cmd.Env = append(os.Environ(), "HERDR_ENV=1", "HERDR_SOCKET_PATH="+srv.Path(), "HERDR_PANE_ID="+self.PaneID)
			cmd.Stdin = strings.NewReader("yes\n") // not a terminal: never read
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.code || !strings.Contains(stderr.String(), tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr.String(), tt.code, tt.stderr)
			}
			typed := false
			for _, r := range srv.Requests() {
				typed = typed || r.Method == "agent.prompt"
			}
			if typed != tt.typed {
				t.Errorf("agent.prompt sent: %v, want %v", typed, tt.typed)
			}
		})
	}
}
