package herdrlink

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
)

// watchPlain are the pane lifecycle events --watch follows.
var watchPlain = []schema.Subscription{
	{PaneCreated: &schema.SubscriptionPaneCreated{}}, {PaneClosed: &schema.SubscriptionPaneClosed{}},
	{PaneUpdated: &schema.SubscriptionPaneUpdated{}}, {PaneMoved: &schema.SubscriptionPaneMoved{}},
	{PaneExited: &schema.SubscriptionPaneExited{}}, {PaneAgentDetected: &schema.SubscriptionPaneAgentDetected{}},
}

// watch implements --watch: pane events and the status of every agent.
// The per-agent subscriptions need the agent list first. A Herdr that
// replays history (0.8.2) gets one stream after the list; one that starts
// new subscriptions with live events (0.9 on) gets the lifecycle stream
// before the list, so a change between the two is never missed.
func (p *prober) watch(ctx context.Context, stdout, stderr io.Writer) int {
	res, err := socket.ResolvePath(p.getenv)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-link probe:", err)
		return 1
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "herdr-link probe:", err, "—", transportFix(err, res))
		return 1
	}
	c := &socket.Client{Path: res.Path, Timeout: p.timeout, Protocol: socket.ProtocolLenient, Warn: func(m string) { fmt.Fprintln(stderr, m) }}
	pong, err := c.ServerInfo(ctx)
	if err != nil {
		return fail(err)
	}
	live := link.CapabilitiesFor(pong.Version).LiveEvents
	var streams []*socket.Subscription
	defer func() {
		for _, s := range streams {
			s.Close()
		}
	}()
	if live {
		s, err := c.Subscribe(ctx, schema.EventsSubscribeParams{Subscriptions: watchPlain})
		if err != nil {
			return fail(err)
		}
		streams = append(streams, s)
	}
	agents, err := c.AgentList(ctx)
	if err != nil {
		return fail(err)
	}
	var subs []schema.Subscription
	if !live {
		subs = append(subs, watchPlain...)
	}
	for _, a := range agents {
		subs = append(subs, schema.Subscription{PaneAgentStatusChanged: &schema.SubscriptionPaneAgentStatusChanged{PaneID: a.PaneID}})
	}
	if len(subs) > 0 {
		s, err := c.Subscribe(ctx, schema.EventsSubscribeParams{Subscriptions: subs})
		if err != nil {
			return fail(err)
		}
		streams = append(streams, s)
	}
	history := "plain events replay Herdr's recent history first"
	if live {
		history = "live events only: Herdr " + pong.Version + " replays no history"
	}
	fmt.Fprintf(stderr, "watching %s: pane events and the status of %d agents (%s); Ctrl-C to stop\n", res.Path, len(agents), history)
	return printEvents(ctx, streams, stdout, stderr)
}

// printEvents prints the events of every stream as they come, until ctx
// ends (0) or a stream ends (1).
func printEvents(ctx context.Context, streams []*socket.Subscription, stdout, stderr io.Writer) int {
	type item struct {
		ev  socket.Event
		err error
	}
	ch := make(chan item)
	for _, s := range streams {
		go func() {
			for {
				ev, err := s.Next(ctx)
				select {
				case ch <- item{ev, err}:
				case <-ctx.Done():
					return
				}
				if err != nil && !errors.Is(err, socket.ErrMalformedResponse) {
					return
				}
			}
		}()
	}
	for {
		var it item
		select {
		case <-ctx.Done():
			return 0
		case it = <-ch:
		}
		switch {
		case it.err == nil:
			fmt.Fprintf(stdout, "%s  %-26s %s\n", it.ev.Received.Format("15:04:05.000"), it.ev.Event, it.ev.Data)
		case ctx.Err() != nil:
			return 0
		case errors.Is(it.err, socket.ErrMalformedResponse):
			fmt.Fprintln(stderr, it.err)
		default:
			fmt.Fprintln(stderr, "herdr-link probe: stream ended:", it.err)
			return 1
		}
	}
}
