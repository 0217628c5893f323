package courier

import (
	"context"
	"errors"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link/deliver"
)

// Bounds of WaitReply's timeout: the default and the most a call may
// ask for, under the tool-call limits of every tested host (Codex ends a
// tool call after 60 s by default).
const (
	DefaultWaitTimeout = 30 * time.Second
	MaxWaitTimeout     = 50 * time.Second
	// waitPoll is the spacing of WaitReply's looks at the request's
	// record: the outcome may come from another process.
	waitPoll = 20 * time.Millisecond
	// progressEvery is the spacing of WaitReply's progress reports.
	progressEvery = 5 * time.Second
)

// WaitResult is what WaitReply returns: the request, its recipient, and
// its state (pending, or its outcome).
type WaitResult struct {
	ID    string `json:"id"`
	Peer  string `json:"peer"`
	State string `json:"state"`
}

// WaitReply waits until request id of the sender self has an outcome,
// or timeout passes (state pending; DefaultWaitTimeout when not
// positive, at most MaxWaitTimeout), or ctx ends (its error). progress,
// when set, is called every few seconds while waiting. An id that is not
// one of self's requests (unknown, ended long ago, or another agent's)
// fails with [NoRequest], all alike.
func (c *Courier) WaitReply(ctx context.Context, self deliver.Agent, id string, timeout time.Duration, progress func(waited time.Duration)) (WaitResult, error) {
	if timeout <= 0 {
		timeout = DefaultWaitTimeout
	}
	timeout = min(timeout, MaxWaitTimeout)
	if c.cfg.Outbox == nil {
		return WaitResult{}, c.cfg.Ports.Fail(NoRequest, nil)
	}
	e, err := c.cfg.Outbox.FindRequest(id)
	if err != nil || e.Sender != c.cfg.Outbox.KeyHash(deliver.LockKey(self)) {
		return WaitResult{}, c.cfg.Ports.Fail(NoRequest, err)
	}
	start := time.Now()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(waitPoll)
	defer tick.Stop()
	every := progressEvery
	if c.cfg.ProgressEvery > 0 {
		every = c.cfg.ProgressEvery
	}
	nextProgress := start.Add(every)
	peer := ""
	for {
		r, err := c.cfg.Outbox.Request(e)
		switch {
		case errors.Is(err, outbox.ErrNotFound):
			return WaitResult{}, c.cfg.Ports.Fail(NoRequest, err)
		case err == nil && r.State != outbox.StatePending:
			return WaitResult{ID: id, Peer: r.To, State: r.Outcome}, nil
		case err == nil:
			e, peer = r.Entry(), r.To
		}
		select {
		case <-ctx.Done():
			return WaitResult{}, c.cfg.Ports.Ended(ctx)
		case <-deadline.C:
			return WaitResult{ID: id, Peer: peer, State: RequestPending}, nil
		case now := <-tick.C:
			if progress != nil && !now.Before(nextProgress) {
				progress(now.Sub(start))
				nextProgress = now.Add(every)
			}
		}
	}
}
