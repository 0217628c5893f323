package link

import (
	"context"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
)

// typeLocked is the send path's way into one delivery: it types under
// the lease and records, off the path, what the ledger must know.

// typeLocked types text into target under lease (held, and begun): the
// prompt, the occupant check, the confirmation watch in confirm mode,
// and the release of the lock once Herdr's Enter is past. hctx bounds the
// prompt; the watch runs on ctx with its own budget.
func (l *Link) typeLocked(ctx, hctx context.Context, target Agent, env Envelope, text string, lease Lease, rec *outbox.Request) (string, error) {
	typed := func(at time.Time, seq uint64) {
		if rec != nil {
			// Recorded off the send's path: the courier follows the
			// request from its record, and until this is written it sees
			// a request typed by a process that did not record it yet.
			e := rec.Entry()
			l.background(func() {
				if err := l.cfg.Outbox.MarkTyped(e, at, seq); err != nil {
					l.log().Warn("request: typing not recorded", "id", e.ID, "err", err)
				}
			})
		}
		if env.ReplyTo != "" {
			l.markRepliedID(env.ReplyTo, env.From, env.To)
		}
	}
	return l.d.TypeWatched(ctx, hctx, target, text, lease, l.cfg.Delivery == DeliveryConfirm, typed)
}
