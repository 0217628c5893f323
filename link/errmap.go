package link

import (
	"context"
	"errors"
	"slices"

	"github.com/herdr-link/herdr-link/socket"
)

// operation is what a Herdr call was for: one socket error means a
// different thing to the model in a send, a close or a lookup.
type operation int

const (
	// opLookup: agent.list and the other reads of a resolution.
	opLookup operation = iota
	// opSelfPane: pane.get of the caller's own pane.
	opSelfPane
	// opName: the self bootstrap's agent.get and agent.rename.
	opName
	// opSend: agent.prompt.
	opSend
	// opClose: pane.close.
	opClose
)

// errorClass is how an error is logged.
type errorClass int

const (
	// classTransport: no usable answer; NOT_IN_HERDR whatever the op.
	classTransport errorClass = iota
	// classAfterWrite: the request was written and its answer lost; Herdr
	// may have acted.
	classAfterWrite
	// classRefusal: Herdr answered with an error (or herdr-link refused
	// the request before sending it).
	classRefusal
	// classLinkError: a refusal that carried a link error already; not
	// logged again.
	classLinkError
)

// errorRule turns a socket error matching kind (errors.Is) into a link
// error, in the operations listed (none: every operation), when the
// condition holds (nil: always).
type errorRule struct {
	kind   error
	ops    []operation
	class  errorClass
	code   Code
	detail string
	when   func(error) bool
}

// errRefused is the kind of every refusal: an answer from Herdr that is an
// error ([*socket.Error], matched by type), or socket.ErrRequestTooLarge
// (refused before sending: the operation's own failure, not Herdr's).
// Refusals map by operation (refusalTable).
var errRefused = errors.New("link: any refusal")

// errorTable is the one map from socket errors to link errors; the first
// matching row wins. An error no row matches (a non-socket failure) is
// NOT_IN_HERDR "Herdr did not answer". TestErrorTableCoversSocket checks
// that every error kind the socket package declares has a row.
var errorTable = []errorRule{
	// Written in full, then the answer was lost: the text may be in the
	// pane, or the pane closed. Never NOT_IN_HERDR, which invites a resend.
	{socket.ErrAfterWrite, []operation{opSend}, classAfterWrite, SendFailed, detailMaybeSent, nil},
	{socket.ErrAfterWrite, []operation{opClose}, classAfterWrite, CloseFailed, detailMaybeClosed, nil},

	// Transport and protocol failures: NOT_IN_HERDR in every operation.
	{socket.ErrMethodUnsupported, nil, classTransport, NotInHerdr, detailNoMethod, nil},
	{errRefused, nil, classRefusal, "", "", nil}, // refusals: the rows below
	// Cancelled before the request was written in full (the client
	// cancelled the call, or the server's input ended): nothing happened,
	// and Herdr is not to blame.
	{context.Canceled, []operation{opSend}, classTransport, SendFailed, detailCancelledSend, nil},
	{context.Canceled, []operation{opClose}, classTransport, CloseFailed, detailCancelledClose, nil},
	{context.Canceled, nil, classTransport, NotInHerdr, detailCancelled, nil},
	{socket.ErrProtocolMismatch, nil, classTransport, NotInHerdr, detailProtocol, nil},
	{socket.ErrMalformedResponse, nil, classTransport, NotInHerdr, detailBadReply, nil},
	{socket.ErrProtocol, nil, classTransport, NotInHerdr, detailBadReply, nil},
	{socket.ErrTruncatedResponse, nil, classTransport, NotInHerdr, detailBadReply, nil},
	{socket.ErrResponseTooLarge, nil, classTransport, NotInHerdr, detailBadReply, nil},
	{socket.ErrUnavailable, nil, classTransport, NotInHerdr, detailUnreachable, nil},
	{socket.ErrTimeout, nil, classTransport, NotInHerdr, detailUnreachable, nil},
	{socket.ErrEmptyResponse, nil, classTransport, NotInHerdr, detailUnreachable, nil},
	{socket.ErrConnection, nil, classTransport, NotInHerdr, detailUnreachable, nil},
	{socket.ErrClosed, nil, classTransport, NotInHerdr, detailUnreachable, nil},
	{socket.ErrPlatform, nil, classTransport, NotInHerdr, detailUnreachable, nil},
	{socket.ErrAfterWrite, nil, classTransport, NotInHerdr, detailUnreachable, nil},
}

// refusalTable maps Herdr's refusals by operation; the first matching row
// wins, and the last rows are each operation's fallback.
var refusalTable = []errorRule{
	// The target vanished or left the workspace after resolution.
	{socket.ErrAgentNotFound, []operation{opSend}, classRefusal, PeerNotFound, detailPeer, nil},
	{socket.ErrAgentBlocked, []operation{opSend}, classRefusal, SendFailed, detailBlocked, nil},
	{socket.ErrAgentNotReady, []operation{opSend}, classRefusal, SendFailed, detailNotReady, nil},
	// Herdr 0.9: the pane closed while the prompt was being submitted.
	{socket.ErrAgentPromptFailed, []operation{opSend}, classRefusal, SendFailed, detailClosedDuring, closedDuringSubmission},
	{socket.ErrPaneNotFound, []operation{opClose}, classRefusal, PeerNotFound, detailPeer, nil},
	{socket.ErrPaneNotFound, []operation{opSelfPane}, classRefusal, NotInHerdr, detailNoPane, nil},

	{errRefused, []operation{opSend}, classRefusal, SendFailed, detailRefused, nil},
	{errRefused, []operation{opClose}, classRefusal, CloseFailed, detailClose, nil},
	{errRefused, []operation{opName}, classRefusal, SelfUnnamed, detailUnnamed, nil},
	{errRefused, []operation{opLookup, opSelfPane}, classRefusal, NotInHerdr, detailRefusedCall, nil},
}

// classify maps err, from a Herdr call made for op, to a link error and
// the class it is logged as.
func classify(op operation, err error) (*Error, errorClass) {
	if err == nil {
		return nil, classRefusal
	}
	for _, r := range errorTable {
		if !r.matches(op, err) {
			continue
		}
		if r.kind == errRefused {
			return refusal(op, err)
		}
		return newErr(r.code, r.detail, err), r.class
	}
	return newErr(NotInHerdr, detailUnreachable, err), classTransport
}

// refusal maps a refusal by refusalTable. In a lookup or the bootstrap, a
// refusal that carries a link error already is that error.
func refusal(op operation, err error) (*Error, errorClass) {
	var le *Error
	if op != opSend && op != opClose && errors.As(err, &le) {
		return le, classLinkError
	}
	for _, r := range refusalTable {
		if r.matches(op, err) {
			return newErr(r.code, r.detail, err), classRefusal
		}
	}
	return newErr(NotInHerdr, detailRefusedCall, err), classRefusal // every op has a fallback row
}

func (r errorRule) matches(op operation, err error) bool {
	if len(r.ops) > 0 && !slices.Contains(r.ops, op) || r.when != nil && !r.when(err) {
		return false
	}
	if r.kind == errRefused {
		return isRefusal(err)
	}
	return errors.Is(err, r.kind)
}

// isRefusal reports whether err is Herdr's refusal or a request errRefused
// before sending.
func isRefusal(err error) bool {
	var se *socket.Error
	return errors.As(err, &se) || errors.Is(err, socket.ErrRequestTooLarge)
}

// herdrError is classify with the operator log: method is the Herdr
// method called, attrs more log attributes.
func (l *Link) herdrError(op operation, method string, err error, attrs ...any) *Error {
	e, class := classify(op, err)
	if e == nil {
		return nil
	}
	args := append([]any{"op", method, "err", err}, attrs...)
	switch {
	case class == classAfterWrite:
		l.log().Warn(method+" outcome unknown: the request was written, the answer lost", args...)
	case class == classTransport && errors.Is(err, socket.ErrMethodUnsupported):
		l.log().Warn("herdr lacks a method herdr-link needs (older Herdr?)", args...)
	case class == classTransport && errors.Is(err, context.Canceled):
		// The caller went away (a cancelled call, or the server shutting
		// down at the end of its input): Herdr is not to blame.
		l.log().Debug(method+" cancelled", args...)
	case class == classTransport:
		l.log().Warn("herdr unreachable", args...)
	case e.Detail == detailNoPane:
		l.log().Warn("herdr does not know the caller's pane", attrs...)
	case class == classRefusal:
		l.log().Warn("herdr refused the request", args...)
	}
	return e
}
