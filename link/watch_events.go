package link

import (
	"context"
	"errors"
	"time"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
)

// StatusEvent is one agent status change of a watched pane, as Herdr's
// pane.agent_status_changed event carries it. It has no state_change_seq
// and no terminal id (0.8.2 and 0.9.x alike): it says that something
// changed, an agent.get says what.
type StatusEvent struct {
	// Status is Herdr's agent_status as sent; [State] normalises it.
	Status string
	// Kind is the pane's agent label ("" when none).
	Kind string
	// Received is when the client read the event.
	Received time.Time
}

// StatusWatch is an open stream of a pane's status changes
// ([Herdr.WatchStatus]). Next waits for the next change; it returns an
// error when ctx ends, the stream ends (Herdr stopped it: the pane
// closed, the server went away) or Close was called. Close may be called
// more than once and from another goroutine.
type StatusWatch interface {
	Next(ctx context.Context) (StatusEvent, error)
	Close() error
}

// WatchStatus implements Herdr: events.subscribe with one
// pane.agent_status_changed subscription, returned once Herdr has
// acknowledged it (subscription_started), so no change after the return
// is missed. Herdr writes a subscription's events on a 100 ms tick, one
// event per tick.
func (h SocketHerdr) WatchStatus(ctx context.Context, paneID string) (StatusWatch, error) {
	s, err := h.Client.Subscribe(ctx, schema.EventsSubscribeParams{Subscriptions: []schema.Subscription{
		{PaneAgentStatusChanged: &schema.SubscriptionPaneAgentStatusChanged{PaneID: paneID}},
	}})
	if err != nil {
		return nil, err
	}
	return socketWatch{s}, nil
}

type socketWatch struct{ s *socket.Subscription }

func (w socketWatch) Next(ctx context.Context) (StatusEvent, error) {
	for {
		e, err := w.s.Next(ctx)
		if errors.Is(err, socket.ErrMalformedResponse) {
			continue // the stream stays usable
		}
		if err != nil {
			return StatusEvent{}, err
		}
		ev, ok, err := e.AgentStatusChanged()
		if err != nil || !ok {
			continue
		}
		kind := ""
		if ev.Agent != nil {
			kind = *ev.Agent
		}
		return StatusEvent{Status: string(ev.AgentStatus), Kind: kind, Received: e.Received}, nil
	}
}

func (w socketWatch) Close() error { return w.s.Close() }

// watchSubscribeTimeout bounds the subscription a confirmed send opens
// before its prompt: a Herdr slower than that to acknowledge it gets the
// polling watch instead.
const watchSubscribeTimeout = time.Second

// eventWatch is the status stream of one confirmed send, opened before the
// prompt ([Link.openWatch]). A nil *eventWatch is a watch without events:
// the confirmation polls agent.get as it always did.
type eventWatch struct {
	w      StatusWatch
	opened time.Duration // what subscribing cost (logged)
}

// openWatch subscribes to the target's status changes before the prompt
// is typed, so that the confirmation watch wakes on the target's turn
// instead of waiting for its next probe. It returns nil (poll only) in
// fast mode, for a working target whose kind answers without a watch
// (queued, interrupting), and when Herdr refuses or does not acknowledge
// the subscription in time (an older Herdr, an error): never an error of
// the send.
func (l *Link) openWatch(hctx context.Context, target Agent) *eventWatch {
	if l.Delivery != DeliveryConfirm {
		return nil
	}
	if State(target.Status) == "working" && WorkingBehaviour(target.Kind) != "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(hctx, watchSubscribeTimeout)
	defer cancel()
	start := time.Now()
	w, err := l.Herdr.WatchStatus(ctx, target.PaneID)
	if err != nil {
		l.log().Debug("delivery watch without events", "pane_id", target.PaneID, "err", err)
		return nil
	}
	return &eventWatch{w: w, opened: time.Since(start)}
}

// close ends the stream; nil-safe.
func (e *eventWatch) close() {
	if e != nil {
		_ = e.w.Close()
	}
}

// wake returns a channel that receives a value (coalesced) on each status
// change of the stream, and is closed when the stream ends; nil (never
// ready) without a stream. The reader ends with ctx or the stream.
func (e *eventWatch) wake(ctx context.Context) <-chan struct{} {
	if e == nil {
		return nil
	}
	ch := make(chan struct{}, 1)
	go func() {
		defer close(ch)
		for {
			if _, err := e.w.Next(ctx); err != nil {
				return
			}
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	return ch
}
