//go:build unix

package realherdr

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/herdr-link/herdr-link/e2e/internal/tui"
	"github.com/herdr-link/herdr-link/link"
)

// callBound bounds one tool call: a confirmed send into a real TUI takes
// a second or two; only a hang reaches this.
const callBound = time.Minute

// linkFlags are herdr-link's settings in the lane: real Herdr's timings
// (its own 300 ms Enter) with the defaults, a short reply grace so that a
// request's notice comes within seconds of its recipient's turn.
var linkFlags = []string{"-no-bootstrap", "-reply-grace", "1s"}

// session is an activated herdr-link MCP server running as the agent in
// pane, as the agent's host would start it.
type session struct {
	*mcp.ClientSession
	name string
}

func (l *lane) connect(t *testing.T, pane, name string) session {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "realherdr-e2e", Version: "1"}, nil)
	cmd := exec.Command(binary, linkFlags...)
	cmd.Dir = l.work // the agent's project, as its host runs it (a start's pane opens there)
	cmd.Env = append(os.Environ(), "HERDR_LINK_LOG="+logLevel())
	cmd.Env = append(cmd.Env, l.h.Env(pane)...)
	// Its log (stderr) is kept and shown when the test fails.
	logf, err := os.CreateTemp(t.TempDir(), name+"-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logf
	t.Cleanup(func() {
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("%s's herdr-link log (last lines):\n%s", name, lastLines(string(b), 40))
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), callBound)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	s := session{cs, name}
	if text, isErr, _ := s.call(t, "herdr_link", nil); isErr {
		t.Fatalf("%s: activation: %s", name, text)
	}
	return s
}

// call runs one tool and returns its text, error flag and structured result.
func (s session) call(t *testing.T, name string, args map[string]any) (string, bool, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callBound)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %s: %v", s.name, name, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var sc map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &sc)
	}
	return text, res.IsError, sc
}

// send sends message to to and returns the result; a refusal fails t.
func (s session) send(t *testing.T, to, message string, extra ...any) map[string]any {
	t.Helper()
	args := map[string]any{"to": to, "message": message}
	for i := 0; i+1 < len(extra); i += 2 {
		args[extra[i].(string)] = extra[i+1]
	}
	text, isErr, sc := s.call(t, "herdr_link_send", args)
	if isErr || sc["id"] == nil {
		t.Fatalf("%s → %s: %s", s.name, to, text)
	}
	return sc
}

// turnWith waits until h's model got a turn whose new input holds the
// envelope id (the recipient's TUI submitted the delivery), and returns
// that turn's input.
func (l *lane) turnWith(t *testing.T, h tui.Host, id string, d time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	var got string
	err := l.taps[h].Wait(ctx, func(ts []tui.Turn) bool {
		for _, x := range ts {
			for _, u := range x.New {
				for _, e := range link.ExtractAll(u) {
					if e.ID == id {
						got = u
						return true
					}
				}
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("no %s turn with %s within %v: %v; turns:\n%s", h, id, d, err, turnsText(l.taps[h].Turns()))
	}
	return got
}

// turnStart is when h's model turn with the envelope id started.
func (l *lane) turnStart(h tui.Host, id string) time.Time {
	for _, x := range l.taps[h].Turns() {
		for _, u := range x.New {
			for _, e := range link.ExtractAll(u) {
				if e.ID == id {
					return x.Start
				}
			}
		}
	}
	return time.Time{}
}

// noticeTurn waits until h's model got a turn holding a notice about id.
func (l *lane) noticeTurn(t *testing.T, h tui.Host, id string, d time.Duration) link.Notice {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	var got link.Notice
	err := l.taps[h].Wait(ctx, func(ts []tui.Turn) bool {
		for _, x := range ts {
			for _, u := range x.New {
				if i := slices.IndexFunc(link.ExtractNotices(u), func(n link.Notice) bool { return n.About == id }); i >= 0 {
					got = link.ExtractNotices(u)[i]
					return true
				}
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("no notice about %s in a %s turn within %v: %v; turns:\n%s", id, h, d, err, turnsText(l.taps[h].Turns()))
	}
	return got
}

// logLevel is herdr-link's log level in the lane: $HERDR_LINK_LANE_LOG,
// else warn.
func logLevel() string {
	if v := os.Getenv("HERDR_LINK_LANE_LOG"); v != "" {
		return v
	}
	return "warn"
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func turnsText(ts []tui.Turn) string {
	var b strings.Builder
	for _, x := range ts {
		b.WriteString("  ")
		b.WriteString(strings.Join(x.New, " | "))
		b.WriteByte('\n')
	}
	return b.String()
}
