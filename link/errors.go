package link

import "github.com/herdr-link/herdr-link/link/proto"

// Code is a herdr-link error code ([proto.Code]).
type Code = proto.Code

// The error codes. All of them are local tool failures, never messages
// between agents.
const (
	// NotInHerdr: no usable Herdr from this process (environment gate,
	// transport failure, unreadable response).
	NotInHerdr = proto.NotInHerdr
	// SelfUnnamed: the caller has no Agent Name and none could be given.
	SelfUnnamed = proto.SelfUnnamed
	// PeerNotFound: the target is not a live named agent of the caller's
	// workspace (missing, invalid, elsewhere: indistinguishable).
	PeerNotFound = proto.PeerNotFound
	// SendFailed: self and target resolved, but Herdr refused the prompt,
	// or its answer was lost after the prompt was written (the message
	// may have been delivered; the detail says so).
	SendFailed = proto.SendFailed
	// CloseFailed: the target resolved to a pane, but Herdr did not close it.
	CloseFailed = proto.CloseFailed
	// InvalidArgument: an argument other than a name is malformed (blank or
	// oversized message, malformed reply_to). An extension of the reference.
	InvalidArgument = proto.InvalidArgument
)

// Error is a herdr-link failure ([proto.Error]). Its text, "CODE: detail",
// is safe to show a model: the detail is one of a fixed set of sentences
// and never holds a pane, tab, workspace or terminal id or Herdr's own
// text. The cause, for operators, is only reachable through Unwrap.
type Error = proto.Error

// Sentinels for errors.Is.
var (
	ErrNotInHerdr      = proto.ErrNotInHerdr
	ErrSelfUnnamed     = proto.ErrSelfUnnamed
	ErrPeerNotFound    = proto.ErrPeerNotFound
	ErrSendFailed      = proto.ErrSendFailed
	ErrCloseFailed     = proto.ErrCloseFailed
	ErrInvalidArgument = proto.ErrInvalidArgument
)

// The fixed details.
const (
	detailGate           = "this process is not running in a Herdr pane (HERDR_ENV=1 and HERDR_PANE_ID are required)"
	detailUnreachable    = "Herdr did not answer; is the Herdr server running?"
	detailBadReply       = "Herdr gave an answer herdr-link cannot read"
	detailRefusedCall    = "Herdr could not serve the request (is it shutting down?)"
	detailProtocol       = "this Herdr speaks a protocol herdr-link does not support"
	detailNoMethod       = "this Herdr version lacks a feature herdr-link needs; upgrade Herdr"
	detailNoPane         = "Herdr does not know this process's pane"
	detailUnnamed        = "this agent has no agent name, and Herdr Link could not give it one"
	detailBadName        = "this agent's name is not a valid agent name (a lowercase letter, then up to 31 lowercase letters, digits, '_' or '-'), and Herdr Link never renames a named agent; the user can give it a valid name in Herdr"
	detailUndetected     = "Herdr has not detected an agent in this pane yet, so it cannot be named"
	detailPeer           = "no live agent with that name in this workspace"
	detailSelf           = "that name is this agent's own: a message cannot be sent to oneself"
	detailBlocked        = "the target agent is waiting at an interactive prompt; nothing was delivered"
	detailNotReady       = "the target agent is not ready to receive messages; nothing was delivered"
	detailRefused        = "Herdr did not accept the message"
	detailChanged        = "the target's pane changed occupant during delivery: the message was typed into that pane, to the agent now in it; do not resend blindly"
	detailClose          = "Herdr did not close the agent's pane"
	detailMaybeSent      = "Herdr's answer was lost after the message was handed over: it may have been delivered; do not resend blindly"
	detailMaybeClosed    = "Herdr's answer was lost after the close was requested: the pane may have been closed; check herdr_link_peers before retrying"
	detailBusy           = "other deliveries to this agent took the time this call had; nothing was delivered: send it again without \"when\":\"now\" to have it wait its turn, or try again in a few seconds"
	detailLeaseLost      = "another delivery to this agent took its turn while this process was paused; nothing was delivered, send it again"
	detailNoLock         = "the delivery lock is unavailable: herdr-link found no directory private to this user (another user may have made the one it must use); nothing was delivered. The operator can see which directory failed which check with 'herdr-link outbox' and fix it (remove a directory another user made, or give this user a private /run/user directory or a home directory)"
	detailLockIO         = "the delivery lock is unavailable: herdr-link's state directory could not be used ('herdr-link outbox' shows why); nothing was delivered"
	detailNoSpace        = "the delivery lock is unavailable: the disk holding herdr-link's state directory is full (or over quota); nothing was delivered, the operator must free space"
	detailOutboxSpace    = "the target agent cannot take the message yet and it could not be held: the disk holding herdr-link's outbox is full (or over quota); nothing was delivered, the operator must free space"
	detailNoOutbox       = "the target agent cannot take the message yet and it could not be held (the operator log says why); nothing was delivered"
	detailFullTarget     = "too many messages are already waiting for the target agent; nothing was delivered, try again after it has read them"
	detailFull           = "the outbox of waiting messages is full; nothing was delivered, try again later"
	detailWaitID         = `"id" must be the id of a message you sent (hl_…)`
	detailNoRequest      = "no request of yours with that id is being tracked (it ended long ago, was never a request, or is unknown)"
	detailStarting       = "the target agent is still starting up and cannot take a message yet; nothing was delivered, try again in a few seconds"
	detailBlank          = "message must contain at least one non-whitespace character"
	detailTooBig         = "message is too large: at most 256 KiB, and its escaped form (control characters count up to 7 bytes each) must fit Herdr's 1 MiB request line"
	detailReplyTo        = "reply_to must be the id of a herdr-link/1 message (hl_<time>_<random>)"
	detailCancelled      = "the call was cancelled (by the client, or because herdr-link is shutting down) before Herdr answered; Herdr itself may be fine"
	detailCancelledSend  = "the call was cancelled (by the client, or because herdr-link is shutting down) before the message was handed to Herdr; nothing was delivered"
	detailCancelledClose = "the call was cancelled (by the client, or because herdr-link is shutting down) before the close was requested; the pane was not closed"
)

func newErr(code Code, detail string, cause error) *Error {
	return proto.NewError(code, detail, cause)
}
