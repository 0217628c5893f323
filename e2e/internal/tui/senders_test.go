package tui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/mcpclient"
	"github.com/herdr-link/herdr-link/socket/sockettest"

	"github.com/herdr-link/herdr-link/e2e/internal/bins"
)

// debugEnv, when set, shows the senders' herdr-link logs (debug level)
// on the test's stderr.
const debugEnv = "HERDR_LINK_TUI_DEBUG"

var senderNames = []string{"brain", "helper"}

// reviewerPane is the target's pane in every scenario world.
const reviewerPane = "w1:p1"

var (
	linkOnce sync.Once
	linkBin  string
	linkErr  error
)

// herdrLink is the herdr-link binary the senders run: HERDR_LINK_BIN, or
// the one package bins builds once for the e2e packages.
func herdrLink(t *testing.T) string {
	t.Helper()
	linkOnce.Do(func() {
		if linkBin = os.Getenv("HERDR_LINK_BIN"); linkBin != "" {
			return
		}
		linkBin, linkErr = bins.Path("herdr-link")
	})
	if linkErr != nil {
		t.Fatal(linkErr)
	}
	return linkBin
}

// sender is one herdr-link MCP server, as an agent host in a sender pane
// runs it, activated.
func sender(t *testing.T, srv *sockettest.Server, name string) *mcpclient.Client {
	t.Helper()
	a, ok := srv.World.Agent(name)
	if !ok {
		t.Fatalf("no sender %s", name)
	}
	env := append(os.Environ(), srv.Env(a.PaneID)...)
	level := "error"
	if os.Getenv(debugEnv) != "" {
		level = "debug"
	}
	cmd := exec.Command(herdrLink(t), "serve", "-no-bootstrap", "-log-level", level)
	cmd.Env = env
	if os.Getenv(debugEnv) != "" {
		cmd.Stderr = os.Stderr
	}
	c, err := mcpclient.StartCmd(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, "2025-06-18"); err != nil {
		t.Fatal(err)
	}
	if res, err := c.CallTool(ctx, "herdr_link", map[string]any{}); err != nil || res.IsError {
		t.Fatalf("activate: %v %s", err, res.Text())
	}
	return c
}

// sent is one herdr_link_send and what came of it.
type sent struct {
	message string
	id      string
	// delivery is what herdr-link reported ("" when this herdr-link does
	// not report it).
	delivery string
	err      error
}

// send types message into the reviewer at once ("when": "now"): the
// scenarios measure what a TUI makes of text typed the way Herdr types it,
// whatever it is doing (a held message would wait for it).
func send(ctx context.Context, c *mcpclient.Client, message string) sent {
	res, err := c.CallTool(ctx, "herdr_link_send", map[string]any{"to": "reviewer", "message": message, "when": "now"})
	s := sent{message: message, err: err}
	if err == nil && res.IsError {
		s.err = fmt.Errorf("send failed: %s", res.Text())
	}
	var out struct {
		ID       string `json:"id"`
		Delivery string `json:"delivery"`
	}
	if err == nil {
		_ = json.Unmarshal(res.StructuredContent, &out)
	}
	s.id, s.delivery = out.ID, out.Delivery
	return s
}

// message is a scenario's i-th message of n bytes (at least a short line).
func message(sc Scenario, i int) string {
	m := fmt.Sprintf("Scenario %s, message %d: please review.", sc.Name, i)
	if sc.Size > len(m) {
		line := strings.Repeat("lorem ipsum dolor sit amet ", 3) + "\n"
		var b strings.Builder
		b.WriteString(m + "\n")
		for b.Len() < sc.Size {
			b.WriteString(line)
		}
		m = b.String()[:sc.Size]
	}
	return m
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

func slicesAny[T any](l []T, f func(T) bool) bool {
	for _, x := range l {
		if f(x) {
			return true
		}
	}
	return false
}

// pastes is the texts herdr-link typed into the pane (paste brackets
// removed, Enter left out).
func pastes(inputs []string) []string {
	var out []string
	for _, in := range inputs {
		if in == "\r" || in == "\x1b[13u" || in == "\x1b[I" {
			continue
		}
		in = strings.TrimPrefix(in, "\x1b[200~")
		in = strings.TrimSuffix(in, "\x1b[201~")
		out = append(out, in)
	}
	return out
}

func abbreviate(l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		if len(s) > 200 {
			s = s[:100] + fmt.Sprintf("…(%d bytes)…", len(s)) + s[len(s)-100:]
		}
		out[i] = s
	}
	return out
}

// sendAtOnce has each sender send its message of sc at the same moment
// (one goroutine each, released together) and returns what each got; a
// failed call fails the test.
func sendAtOnce(t *testing.T, ctx context.Context, senders []*mcpclient.Client, sc Scenario) []sent {
	t.Helper()
	results := make([]sent, len(senders))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, c := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i] = send(ctx, c, message(sc, i))
		}()
	}
	close(start)
	wg.Wait()
	for _, s := range results {
		if s.err != nil {
			t.Fatalf("%s: %v", sc.Name, s.err)
		}
	}
	return results
}
