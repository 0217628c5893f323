package herdrlink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket"
)

// kindHosts maps the agent kinds Herdr detects to the hosts config knows.
var kindHosts = map[string]string{"claude": "claude", "codex": "codex", "opencode": "opencode", "pi": "pi", "crush": "crush"}

// detectHost asks Herdr which agent runs in this pane (HERDR_PANE_ID) and
// returns the config host for it.
func detectHost(getenv func(string) string) (string, error) {
	g := link.CheckGate(getenv)
	g.CheckSocket(nil)
	if !g.OK {
		return "", errors.New(g.Advice())
	}
	c := &socket.Client{Path: g.Socket.Path, Timeout: 5 * time.Second, Protocol: socket.ProtocolLenient}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a, err := c.AgentGet(ctx, g.PaneID)
	if err != nil {
		if errors.Is(err, socket.ErrAgentNotFound) {
			return "", errors.New("no agent detected by Herdr in this pane; start the agent first, or name a host")
		}
		return "", fmt.Errorf("asking Herdr for this pane's agent: %w", err)
	}
	kind := ""
	if a.Agent != nil {
		kind = *a.Agent
	}
	h, ok := kindHosts[kind]
	if !ok {
		return "", fmt.Errorf("the agent in this pane is %q, which config has no snippet for; try 'herdr-link config generic'", kind)
	}
	return h, nil
}

// detectArgs resolves config's host argument under --detect.
func detectArgs(args []string) ([]string, error) {
	if len(args) > 0 {
		return args, nil
	}
	h, err := detectHost(os.Getenv)
	if err != nil {
		return nil, err
	}
	return []string{h}, nil
}
