package herdrlink

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
)

// startSim runs the herdr-sim binary built beside herdr-link as a server
// for world on a socket in a temporary directory, with extra serve flags,
// and returns the socket path. It is stopped when the test ends.
func startSim(t *testing.T, world string, flags ...string) string {
	t.Helper()
	dir := t.TempDir()
	wf := filepath.Join(dir, "world.json")
	if err := os.WriteFile(wf, []byte(world), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "herdr.sock")
	cmd := exec.Command(filepath.Join(filepath.Dir(binary), "herdr-sim"), append([]string{"serve", "--socket", sock, "--world", wf}, flags...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "HERDR_SOCKET_PATH=") {
				ready <- true
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("herdr-sim exited: %s", stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("herdr-sim did not start: %s", stderr.String())
	}
	return sock
}

// Herdr-link serves peers, send and close against Herdr
// protocols it was not generated from, older and newer, including pongs
// with capabilities it has never seen.
func TestServesEveryProtocol(t *testing.T) {
	for _, p := range []int{19, 21, 23, 25} {
		t.Run(fmt.Sprintf("protocol %d", p), func(t *testing.T) {
			sock := startSim(t, e2eWorld, "--protocol", fmt.Sprint(p))
			c := &socket.Client{Path: sock}
			if pong, err := c.ServerInfo(t.Context()); err != nil || pong.Protocol != uint32(p) {
				t.Fatalf("ping = protocol %d, %v; want %d", pong.Protocol, err, p)
			}
			brain := connect(t, nil, "", "HERDR_ENV=1", "HERDR_SOCKET_PATH="+sock, "HERDR_PANE_ID=w1:p1")
			if _, isErr, sc := call(t, brain, "herdr_link", map[string]any{}); isErr || sc["status"] != "active" {
				t.Fatalf("activation: %v", sc)
			}
			_, isErr, sc := call(t, brain, "herdr_link_peers", nil)
			if isErr || fmt.Sprint(sc["peers"]) != "[map[name:reviewer state:idle] map[name:stuck state:blocked]]" {
				t.Fatalf("peers: %v", sc)
			}
			_, isErr, sent := call(t, brain, "herdr_link_send", map[string]any{"to": "reviewer", "message": "protocol check"})
			if isErr || sent["status"] != "sent" {
				t.Fatalf("send: %v", sent)
			}
			read, err := c.PaneRead(t.Context(), schema.PaneReadParams{PaneID: "w1:p2", Source: schema.ReadSourceRecent})
			if err != nil || !strings.Contains(read.Text, "protocol check") {
				t.Fatalf("reviewer's pane: %q %v", read.Text, err)
			}
			if text, isErr, _ := call(t, brain, "herdr_link_close", map[string]any{"agent": "reviewer"}); isErr {
				t.Fatalf("close: %s", text)
			}
			_, isErr, sc = call(t, brain, "herdr_link_peers", nil)
			if isErr || fmt.Sprint(sc["peers"]) != "[map[name:stuck state:blocked]]" {
				t.Fatalf("peers after close: %v", sc)
			}
		})
	}
}
