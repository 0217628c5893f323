package deliver

import (
	"context"
	"errors"
	"time"

	"github.com/herdr-link/herdr-link/socket"
)

// watchSubscribeTimeout bounds the subscription a confirmed send opens
// before its prompt: a Herdr slower than that to acknowledge it gets the
// polling watch instead.
const watchSubscribeTimeout = time.Second

// eventWatch is the status stream of one confirmed send, opened before the
// prompt ([Deliverer.openWatch]). A nil *eventWatch is a watch without events:
// the confirmation polls agent.get as it always did.
type eventWatch struct {
	w     PaneEvents
	d     *Deliverer
	pw    PaneWatcher
	panes []string
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
func (d *Deliverer) openWatch(hctx context.Context, target Agent, confirm bool) *eventWatch {
	if !confirm || State(target.Status) == "working" && WorkingBehaviour(target.Kind) != "" {
		return nil
	}
	pw, ok := d.cfg.Herdr.(PaneWatcher)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(hctx, watchSubscribeTimeout)
	defer cancel()
	w, err := pw.WatchPanes(ctx, []string{target.PaneID})
	if err != nil {
		d.log.Debug("delivery watch without events", "pane_id", target.PaneID, "err", err)
		return nil
	}
	return &eventWatch{w: w, d: d, pw: pw, panes: []string{target.PaneID}}
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
	poke := func(string) {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	go func() {
		defer close(ch)
		err := readPanes(ctx, e.w, poke)
		if errors.Is(err, socket.ErrEventsLost) {
			// Herdr dropped events it had not written: what they said is
			// read afresh (a probe now), and a new stream follows.
			poke("")
			e.d.FollowPanes(ctx, e.pw, e.panes, poke)
		}
	}()
	return ch
}

// readPanes calls wake with the pane of each event of ev until the
// stream ends, and returns why it ended.
func readPanes(ctx context.Context, ev PaneEvents, wake func(pane string)) error {
	for {
		pane, err := ev.Next(ctx)
		if err != nil {
			return err
		}
		wake(pane)
	}
}

// FollowPanes subscribes to the status changes of panes and calls wake
// with the pane of each, until ctx ends or the stream ends otherwise than
// by events_lost. A stream that lost events (Herdr 0.9.2 and later: the
// reader fell behind) is renewed at once, and every pane is woken: each
// is probed afresh, so a change whose event was lost is still seen. The
// events only wake; the probes decide, so nothing is lost or done twice.
func (d *Deliverer) FollowPanes(ctx context.Context, pw PaneWatcher, panes []string, wake func(pane string)) {
	for ctx.Err() == nil {
		hctx, cancel := d.bound(ctx)
		ev, err := pw.WatchPanes(hctx, panes)
		cancel()
		if err != nil {
			d.log.Debug("no event stream; probing only", "err", err)
			return
		}
		err = readPanes(ctx, ev, wake)
		_ = ev.Close()
		if !errors.Is(err, socket.ErrEventsLost) {
			return
		}
		d.log.Info("event stream lost events; renewed", "panes", len(panes))
		for _, p := range panes {
			wake(p)
		}
	}
}
