package pi_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// The test binary doubles as a herdr-link that dies (PI_FAKE_HERDR_LINK):
// "start" exits at once, "call" answers the handshake and dies at the
// first tool call. Either way its last stderr line names a pane and a
// socket, as herdr-link's log does.
func TestMain(m *testing.M) {
	if mode := os.Getenv("PI_FAKE_HERDR_LINK"); mode != "" {
		fakeHerdrLink(mode)
		return
	}
	os.Exit(m.Run())
}

const secretLog = "time=2026-12-01T10:00:00Z level=INFO msg=herdr-link socket=/tmp/secret-dir/herdr.sock pane_id=w1:p7 terminal_id=term_9"

func fakeHerdrLink(mode string) {
	die := func() {
		fmt.Fprintln(os.Stderr, secretLog)
		os.Exit(1)
	}
	if mode == "start" {
		die()
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(in.Bytes(), &req)
		var result string
		switch req.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"herdr-link","version":"0"},"instructions":"Herdr Link connects you with the other AI agents of this Herdr workspace."}`
		case "tools/list":
			result = `{"tools":[{"name":"herdr_link","description":"gateway","inputSchema":{"type":"object"}}]}`
		case "tools/call":
			die()
		default:
			continue
		}
		fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", req.ID, result)
	}
}

// What the model sees of a herdr-link that died carries no pane id,
// terminal id or socket path; the user's notice may.
func TestAdapterChildDiesPrivately(t *testing.T) {
	nodeBin := node(t)
	for _, mode := range []string{"start", "call"} {
		t.Run(mode, func(t *testing.T) {
			r := drive(t, nodeBin, os.Args[0], []string{"PI_FAKE_HERDR_LINK=" + mode, "HERDR_ENV=1", "HERDR_PANE_ID=w1:p7"})
			modelFacing := []string{r.SystemPrompt, r.Activate.Text, r.Activate.Error}
			for _, s := range modelFacing {
				for _, secret := range []string{"w1:p7", "term_9", "secret-dir", "herdr.sock", os.Args[0]} {
					if strings.Contains(s, secret) {
						t.Errorf("model-facing text %q contains %q", s, secret)
					}
				}
			}
			switch mode {
			case "start":
				if len(r.AtLoad) != 0 || !strings.Contains(r.SystemPrompt, "herdr-link is not running") {
					t.Errorf("tools %v, system prompt %q", r.AtLoad, r.SystemPrompt)
				}
				if len(r.Notices) != 1 || !strings.Contains(r.Notices[0], "pane_id=w1:p7") {
					t.Errorf("the user's notice should carry the log: %v", r.Notices)
				}
			case "call":
				if !strings.Contains(r.Activate.Error, "herdr-link is not running") {
					t.Errorf("activation after the child died: %v, want an error that herdr-link is not running", r.Activate)
				}
			}
		})
	}
}
