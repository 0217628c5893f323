package socket_test

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
)

// TestLiveHerdr runs read-only calls against a real Herdr. It is skipped
// unless HERDR_LINK_LIVE=1 and HERDR_SOCKET_PATH (or the default socket)
// points at a running server: `HERDR_LINK_LIVE=1 go test -run Live ./socket/`.
func TestLiveHerdr(t *testing.T) {
	if os.Getenv("HERDR_LINK_LIVE") != "1" {
		t.Skip("set HERDR_LINK_LIVE=1 to test against a live Herdr")
	}
	c := &socket.Client{Timeout: 5 * time.Second, Protocol: socket.ProtocolLenient, Warn: func(m string) { t.Log(m) }}
	ctx := t.Context()
	pong, err := c.ServerInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Herdr %s, protocol %d (compatible: %v)", pong.Version, pong.Protocol, schema.IsCompatible(pong.Protocol))
	agents, err := c.AgentList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	panes, err := c.PaneList(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WorkspaceList(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SessionSnapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AgentGet(ctx, "no-such-agent-herdr-link-test"); !errors.Is(err, socket.ErrAgentNotFound) {
		t.Fatalf("agent.get of a missing name: %v", err)
	}
	t.Logf("%d agents, %d panes", len(agents), len(panes))
}
