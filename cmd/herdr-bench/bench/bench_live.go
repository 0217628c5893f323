package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket"
)

// liveConsent guards a bench against a live Herdr: its sends type real
// prompts into the agent named bench-peer. It checks that such an agent is
// in this pane's workspace, says how many prompts it would get, and goes on
// only with --yes or a "yes" typed on a terminal. Peers-only runs and the
// simulator need nothing.
func liveConsent(c benchConfig, t *target, stdin io.Reader, stderr io.Writer) error {
	sends := 0
	for _, op := range c.ops {
		if op != opPeers {
			sends++
		}
	}
	if c.sim || sends == 0 {
		return nil
	}
	l, err := link.New(link.Config{Herdr: link.SocketHerdr{Client: &socket.Client{Path: t.path, Timeout: 10 * time.Second}}, PaneID: t.pane})
	if err != nil {
		return fmt.Errorf("live target: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := l.Peers(ctx)
	if err != nil {
		return fmt.Errorf("live target: %w", err)
	}
	var names []string
	for _, p := range res.Peers {
		names = append(names, p.Name)
	}
	if !slices.Contains(names, "bench-peer") {
		have := "no other named agent"
		if len(names) > 0 {
			have = "only " + strings.Join(names, ", ")
		}
		return fmt.Errorf("a live bench sends to an agent named bench-peer in this pane's workspace, and there is %s: name a scratch agent bench-peer, or run --op peers (sends nothing) or --sim", have)
	}
	prompts := sends * c.count * (c.warmup + c.n) * len(c.routes)
	what := fmt.Sprintf("this bench types about %d prompts into bench-peer (%s) through the live Herdr at %s", prompts, strings.Join(c.ops, ", "), t.path)
	if c.yes {
		return nil
	}
	if !isTerminalReader(stdin) {
		return fmt.Errorf("%s; pass --yes to allow it, --op peers to send nothing, or use --sim", what)
	}
	fmt.Fprintf(stderr, "%s.\nType yes to go on: ", what)
	answer, _ := bufio.NewReader(stdin).ReadString('\n')
	if strings.TrimSpace(answer) != "yes" {
		return errors.New("not confirmed; nothing was sent")
	}
	return nil
}

func isTerminalReader(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
