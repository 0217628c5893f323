package link

import (
	"context"
	"errors"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
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

// WaitReply waits until the caller's request id has an outcome, or
// timeout passes (state pending), or ctx ends (its error). The reply
// itself is not part of the result: it arrives as the caller's next
// turn. progress, when set, is called every few seconds while waiting.
// An id that is not one of the caller's requests (unknown, ended long
// ago, or another agent's) is INVALID_ARGUMENT, all alike.
func (l *Link) WaitReply(ctx context.Context, id string, timeout time.Duration, progress func(waited time.Duration)) (WaitResult, error) {
	if !ValidMessageID(id) {
		return WaitResult{}, newErr(InvalidArgument, detailWaitID, nil)
	}
	if timeout <= 0 {
		timeout = DefaultWaitTimeout
	}
	timeout = min(timeout, MaxWaitTimeout)
	if l.cfg.Outbox == nil {
		return WaitResult{}, newErr(InvalidArgument, detailNoRequest, nil)
	}
	hctx, cancel := l.bound(ctx)
	s, _, err := l.named(hctx)
	cancel()
	if err != nil {
		return WaitResult{}, err
	}
	e, err := l.cfg.Outbox.FindRequest(id)
	if err != nil || e.Sender != l.cfg.Outbox.KeyHash(lockKey(*s.self)) {
		return WaitResult{}, newErr(InvalidArgument, detailNoRequest, err)
	}
	start := time.Now()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(waitPoll)
	defer tick.Stop()
	every := progressEvery
	if l.cfg.ProgressEvery > 0 {
		every = l.cfg.ProgressEvery
	}
	nextProgress := start.Add(every)
	peer := ""
	for {
		r, err := l.cfg.Outbox.Request(e)
		switch {
		case errors.Is(err, outbox.ErrNotFound):
			return WaitResult{}, newErr(InvalidArgument, detailNoRequest, err)
		case err == nil && r.State != outbox.StatePending:
			return WaitResult{ID: id, Peer: r.To, State: r.Outcome}, nil
		case err == nil:
			e, peer = r.Entry(), r.To
		}
		select {
		case <-ctx.Done():
			return WaitResult{}, ctxErr(ctx)
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
