package link

import (
	"context"
	"time"
)

// watchSubscribeTimeout bounds the subscription a confirmed send opens
// before its prompt: a Herdr slower than that to acknowledge it gets the
// polling watch instead.
const watchSubscribeTimeout = time.Second

// eventWatch is the status stream of one confirmed send, opened before the
// prompt ([Link.openWatch]). A nil *eventWatch is a watch without events:
// the confirmation polls agent.get as it always did.
type eventWatch struct {
	w PaneEvents
}

// openWatch subscribes to the target's status changes (a [PaneWatcher]
// Herdr: events.subscribe, pane.agent_status_changed) before the prompt
// is typed, when the confirmation watch is to follow (confirm), so that
// the watch wakes on the target's turn instead of waiting for its next
// probe; the subscription is acknowledged (subscription_started) before
// the prompt, so no change of the turn is missed. It returns nil (poll
// only) without confirm, for a working target whose kind answers without
// a watch (queued, interrupting), for a Herdr that streams no events, and
// when Herdr refuses or does not acknowledge the subscription in time (an
// older Herdr, an error): never an error of the send.
func (l *Link) openWatch(hctx context.Context, target Agent, confirm bool) *eventWatch {
	if !confirm || State(target.Status) == "working" && WorkingBehaviour(target.Kind) != "" {
		return nil
	}
	pw, ok := l.Herdr.(PaneWatcher)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(hctx, watchSubscribeTimeout)
	defer cancel()
	w, err := pw.WatchPanes(ctx, []string{target.PaneID})
	if err != nil {
		l.log().Debug("delivery watch without events", "pane_id", target.PaneID, "err", err)
		return nil
	}
	return &eventWatch{w: w}
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
