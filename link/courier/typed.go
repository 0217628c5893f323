package courier

import (
	"context"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link/deliver"
)

// TypeLocked is the send path's way into one delivery: it types under
// the lease and records, off the path, what the ledger must know.

// TypeLocked types text into target under lease (held, and begun): the
// prompt, the occupant check, the confirmation watch in confirm mode,
// and the release of the lock once Herdr's Enter is past. hctx bounds the
// prompt; the watch runs on ctx with its own budget.
func (c *Courier) TypeLocked(ctx, hctx context.Context, target deliver.Agent, env Sent, text string, lease deliver.Lease, rec *outbox.Request) (string, error) {
	typed := func(at time.Time, seq uint64) {
		if rec != nil {
			// Recorded off the send's path: the courier follows the
			// request from its record, and until this is written it sees
			// a request typed by a process that did not record it yet.
			e := rec.Entry()
			c.d.Background(func() {
				if err := c.cfg.Outbox.MarkTyped(e, at, seq); err != nil {
					c.log().Warn("request: typing not recorded", "id", e.ID, "err", err)
				}
			})
		}
		if env.ReplyTo != "" {
			c.markRepliedID(env.ReplyTo, env.From, env.To)
		}
	}
	return c.d.TypeWatched(ctx, hctx, target, text, lease, c.cfg.Confirm, typed)
}
