package link

import (
	"context"
	"errors"
	"syscall"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/internal/panelock"
	"github.com/herdr-link/herdr-link/link/deliver"
)

// newDeliverer is the delivery core of l, made of l's Config: it types
// one delivery to one target, and what it needs of the protocol (errors,
// the outbox's count, the composer, the Herdr release) comes from l.
func newDeliverer(l *Link) *deliver.Deliverer {
	return deliver.New(deliver.Config{
		Herdr: l.cfg.Herdr, Ports: ports{l}, Logger: l.log(), Locker: l.cfg.Locker,
		Confirm: l.cfg.Delivery == DeliveryConfirm, LockWait: l.cfg.LockWait, SubmitHold: l.cfg.SubmitHold,
		SettleGap: l.cfg.SettleGap, CallTimeout: l.callTimeout(), Budget: l.budget,
	})
}

// ports is what link supplies to its delivery core.
type ports struct{ l *Link }

func (p ports) Fail(why deliver.Failure, cause error) error {
	switch why {
	case deliver.LeaseLost:
		return newErr(SendFailed, detailLeaseLost, cause)
	case deliver.PeerGone:
		return newErr(PeerNotFound, detailPeer, cause)
	case deliver.Changed:
		return newErr(SendFailed, detailChanged, cause)
	case deliver.LockBusy:
		return newErr(SendFailed, detailBusy, cause)
	case deliver.NotReady:
		return newErr(SendFailed, detailStarting, cause)
	}
	return lockError(cause)
}

func (p ports) HerdrFailed(c deliver.Call, err error) error {
	if c == deliver.CallPrompt {
		return p.l.herdrError(opSend, "agent.prompt", err)
	}
	return p.l.herdrError(opLookup, "agent.get", err)
}

func (p ports) OutboxFailed(err error) error { return p.l.outboxError(err) }

// Ended is the error of a delivery whose call ended while it waited for
// the target's lock or readiness, before anything was typed: cancelled,
// it says nothing was delivered (SEND_FAILED); out of time, it is the
// caller's deadline as elsewhere.
func (p ports) Ended(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return newErr(SendFailed, detailCancelledSend, ctx.Err())
	}
	return ctxErr(ctx)
}

func (p ports) Queued(key string) (int, bool, error) {
	if p.l.cfg.Outbox == nil {
		return 0, false, nil
	}
	n, err := p.l.queuedFor(key)
	return n, true, err
}

func (p ports) HoldsTyping(ctx context.Context, a Agent) (string, bool) {
	c, err := p.l.composer(ctx, a)
	if err != nil {
		return "", false
	}
	return holdsTyping(c)
}

func (p ports) Readable(kind string) bool { return ComposerKnown(kind) }

func (p ports) Draft(ctx context.Context, a Agent) bool {
	st, err := p.l.composer(ctx, a)
	return err == nil && st == ComposerDraft
}

func (p ports) PromptAfterEnter(ctx context.Context) bool {
	return p.l.capabilities(ctx).PromptAfterEnter
}

func (p ports) Typed(pane string, got Agent) { p.l.c.NoteTyped(pane, got) }

// lockError is the error of a delivery lock that cannot be had: what the
// operator must fix (a directory another user made, a full disk).
func lockError(err error) *Error {
	switch {
	case noSpace(err):
		return newErr(SendFailed, detailNoSpace, err)
	case errors.Is(err, panelock.ErrUnsafeDir):
		return newErr(SendFailed, detailNoLock, err)
	}
	return newErr(SendFailed, detailLockIO, err)
}

// noSpace reports a full disk or an exhausted quota.
func noSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// refusedBusy reports whether err is Herdr refusing a prompt, nothing
// typed, because the target is blocked. (Not ready is not waited for: an
// agent Herdr cannot prompt stays so.)
func refusedBusy(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Detail == detailBlocked
}

// queuedFor counts the messages held (or being typed) for the target of
// lock key key, by any sender.
func (l *Link) queuedFor(key string) (int, error) {
	ents, err := l.cfg.Outbox.ListForTarget(l.cfg.Outbox.KeyHash(key))
	return len(ents), err
}

func (l *Link) outboxError(err error) error {
	var full *outbox.FullError
	if errors.As(err, &full) {
		if full.Target {
			return newErr(SendFailed, detailFullTarget, err)
		}
		return newErr(SendFailed, detailFull, err)
	}
	l.log().Error("outbox unusable", "err", err)
	if noSpace(err) {
		return newErr(SendFailed, detailOutboxSpace, err)
	}
	return newErr(SendFailed, detailNoOutbox, err)
}

// holdsTyping reports whether the screen state c keeps a message from
// being typed, and why: a draft the message would merge with, or a
// picker, dialog or menu it would answer.
func holdsTyping(c ComposerState) (string, bool) {
	switch c {
	case ComposerDraft:
		return "draft", true
	case ComposerOverlay:
		return "picker open", true
	}
	return "", false
}

func (l *Link) submitHold() time.Duration { return l.d.SubmitHold() }

// Wait returns once every delivery lock still held in the background
// (until Herdr's Enter is past) has been released and every background
// write of a request's typing is done, or ctx ends (its error
// is returned). A process that ends sooner releases the lock early, and a
// delivery from another process can then merge into the same turn: a
// server calls Wait before it exits, bounded by [Link.LongestHold].
func (l *Link) Wait(ctx context.Context) error { return l.d.Wait(ctx) }

// LongestHold is the longest a background hold lasts after Herdr's answer.
func (l *Link) LongestHold() time.Duration { return l.submitHold() }

// budget is the confirmation budget of a text of n bytes.
func (l *Link) budget(n int) time.Duration {
	if l.cfg.ConfirmBudget != nil {
		return l.cfg.ConfirmBudget(n)
	}
	return ConfirmBudget(n)
}

// capabilities returns the Herdr behaviour to follow: l.cfg.Capabilities when
// set, else what the Herdr's version says, else 0.8.2's.
func (l *Link) capabilities(ctx context.Context) Capabilities {
	if l.cfg.Capabilities != nil {
		return *l.cfg.Capabilities
	}
	si, ok := l.cfg.Herdr.(ServerInfoer)
	if !ok {
		return herdr082
	}
	v, err := si.HerdrVersion(ctx)
	if err != nil {
		return herdr082
	}
	return CapabilitiesFor(v)
}
