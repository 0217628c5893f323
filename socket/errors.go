package socket

import (
	"errors"
	"fmt"
	"strings"

	"github.com/herdr-link/herdr-link/schema"
)

// Transport and protocol failures. Each error a [Client] returns for a
// failed exchange wraps exactly one of these.
var (
	// ErrUnavailable: no server at the socket path (missing file or
	// connection refused). The error is an [*UnavailableError] with a hint.
	ErrUnavailable = errors.New("herdr server not running")
	// ErrTimeout: the call's deadline passed before the response arrived.
	ErrTimeout = errors.New("timed out waiting for herdr")
	// ErrEmptyResponse: the server closed the connection without a reply
	// (Herdr does that for requests it cannot read at all).
	ErrEmptyResponse = errors.New("empty api response")
	// ErrTruncatedResponse: the connection ended in the middle of the
	// response line.
	ErrTruncatedResponse = errors.New("truncated api response")
	// ErrResponseTooLarge: the response line exceeded MaxResponseBytes.
	ErrResponseTooLarge = errors.New("api response too large")
	// ErrMalformedResponse: the response line is not a JSON response object.
	ErrMalformedResponse = errors.New("malformed api response")
	// ErrConnection: the connection broke for another reason (reset,
	// permission denied, …).
	ErrConnection = errors.New("herdr connection failed")
	// ErrProtocol: a well-formed response that breaks the protocol (a
	// foreign id, an unexpected result type).
	ErrProtocol = errors.New("herdr protocol violation")
	// ErrProtocolMismatch: the server speaks a protocol this client does
	// not know to be compatible. See [ProtocolMismatchError].
	ErrProtocolMismatch = errors.New("herdr protocol mismatch")
	// ErrMethodUnsupported: the server does not know the method (it
	// predates it). See [MethodUnsupportedError].
	ErrMethodUnsupported = errors.New("herdr lacks the method")
	// ErrClosed: the subscription was closed.
	ErrClosed = errors.New("subscription closed")
	// ErrAfterWrite marks a failure (timeout, cancellation, broken
	// connection, missing or unreadable answer) that happened after the
	// request line was written in full, newline included: Herdr may have
	// received the request and acted on it. It is wrapped together with
	// one of the errors above; match it with errors.Is. A failure without
	// it happened before the line's final newline left this process, and
	// Herdr discards a request line that has no newline, so it did not act.
	// Refusals ([*Error]) are answers, not failures, and never carry it.
	ErrAfterWrite = errors.New("the request was written; herdr may have acted on it")
)

// ErrPlatform is returned on systems where herdr-link has no transport to
// Herdr yet.
var ErrPlatform = errors.New("socket: this platform's transport to Herdr is not supported yet (Herdr runs on Linux and macOS)")

// afterWrite marks err as having happened after the request was written.
func afterWrite(err error) error {
	if err == nil || errors.Is(err, ErrAfterWrite) {
		return err
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &afterWriteError{err}
}

type afterWriteError struct{ err error }

func (e *afterWriteError) Error() string   { return e.err.Error() + " (after the request was written)" }
func (e *afterWriteError) Unwrap() []error { return []error{e.err, ErrAfterWrite} }

// AfterWrite marks err, a failure to read or check the answer of a request
// that was written in full, with [ErrAfterWrite]. Callers that check
// results themselves (a result type they did not expect) use it so the
// mark is kept. Nil and refusals ([*Error]) are returned unchanged.
func AfterWrite(err error) error { return afterWrite(err) }

// Error is a refusal from Herdr: an error response with its code and
// message. errors.Is matches it against another *Error by Code (and by
// Method, when the target names one), so the sentinels below work:
//
//	if errors.Is(err, socket.ErrAgentNotFound) { … }
type Error struct {
	Method  string // the method called
	Code    string // Herdr's error code, e.g. "agent_not_found"
	Message string // Herdr's message, verbatim
}

func (e *Error) Error() string {
	if e.Method == "" {
		return "herdr: " + e.Code + ": " + e.Message
	}
	return "herdr " + e.Method + ": " + e.Code + ": " + e.Message
}

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	return t.Code == e.Code && (t.Method == "" || t.Method == e.Method)
}

// Sentinels for the error codes herdr-link handles. Match with errors.Is.
var (
	ErrInvalidRequest       = &Error{Code: "invalid_request"}
	ErrAgentNotFound        = &Error{Code: "agent_not_found"}
	ErrAgentTargetAmbiguous = &Error{Code: "agent_target_ambiguous"}
	ErrAgentBlocked         = &Error{Code: "agent_blocked"}
	ErrAgentNotReady        = &Error{Code: "agent_not_ready"}
	ErrEmptyAgentPrompt     = &Error{Code: "empty_agent_prompt"}
	ErrAgentPromptFailed    = &Error{Code: "agent_prompt_failed"}
	ErrAgentNameTaken       = &Error{Code: "agent_name_taken"}
	ErrInvalidAgentName     = &Error{Code: "invalid_agent_name"}
	ErrAgentLaunchPending   = &Error{Code: "agent_launch_pending"}
	ErrPaneNotFound         = &Error{Code: "pane_not_found"}
	ErrWorkspaceNotFound    = &Error{Code: "workspace_not_found"}
	ErrServerUnavailable    = &Error{Code: "server_unavailable"}
)

// CodeOf returns Herdr's error code for err: the code of an [*Error],
// "server_not_running" for [ErrUnavailable], "protocol_mismatch" for
// [ErrProtocolMismatch], "method_unsupported" for [ErrMethodUnsupported],
// and "" otherwise.
func CodeOf(err error) string {
	var e *Error
	switch {
	case errors.Is(err, ErrMethodUnsupported):
		return "method_unsupported"
	case errors.As(err, &e):
		return e.Code
	case errors.Is(err, ErrUnavailable):
		return "server_not_running"
	case errors.Is(err, ErrProtocolMismatch):
		return "protocol_mismatch"
	}
	return ""
}

// UnavailableError reports that no Herdr server answers at Path.
type UnavailableError struct {
	Path string
	// Hint is the command that starts or attaches the server: "herdr", or
	// "herdr session attach <name>" for a named session.
	Hint string
	Err  error // the dial error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("no herdr server is running at %s; run `%s` to start or attach it", e.Path, e.Hint)
}

// Unwrap returns ErrUnavailable and the dial error.
func (e *UnavailableError) Unwrap() []error { return []error{ErrUnavailable, e.Err} }

// Code returns "server_not_running", the herdr CLI's code for this case.
func (e *UnavailableError) Code() string { return "server_not_running" }

// MinProtocol is the oldest Herdr protocol herdr-link talks to (Herdr
// 0.8.0). Newer numbers are accepted: Herdr bumps the number on additive
// releases, and herdr-link checks the methods it needs instead
// ([MethodUnsupportedError]).
const MinProtocol = 19

// ProtocolMismatchError reports a server protocol older than
// [MinProtocol].
type ProtocolMismatchError struct {
	Server  uint32 // what ping reported
	Version string // Herdr's version string
	Min     uint32 // the oldest protocol this client works with
}

func (e *ProtocolMismatchError) Error() string {
	return fmt.Sprintf("herdr %s speaks protocol %d; herdr-link needs protocol %d or newer (Herdr 0.8.0 or later): upgrade Herdr",
		e.Version, e.Server, e.Min)
}

// Unwrap returns ErrProtocolMismatch.
func (e *ProtocolMismatchError) Unwrap() error { return ErrProtocolMismatch }

// MethodUnsupportedError reports that Herdr rejected a request because it
// does not know its method: an invalid_request whose serde message says
// the method is an unknown variant. Nothing ran.
type MethodUnsupportedError struct {
	Method string
	Err    *Error // Herdr's invalid_request
}

func (e *MethodUnsupportedError) Error() string {
	return "herdr does not provide method " + e.Method + " (upgrade Herdr): " + e.Err.Message
}

// Unwrap returns ErrMethodUnsupported and Herdr's error.
func (e *MethodUnsupportedError) Unwrap() []error { return []error{ErrMethodUnsupported, e.Err} }

// Refusal turns an error response into an *Error, or a
// *MethodUnsupportedError when Herdr does not know method.
func Refusal(method string, body *schema.ErrorBody) error {
	e := &Error{Method: method, Code: body.Code, Message: body.Message}
	if body.Code == "invalid_request" && strings.Contains(body.Message, "unknown variant `"+method+"`") {
		return &MethodUnsupportedError{Method: method, Err: e}
	}
	return e
}
