package proto

// Code is a herdr-link error code.
type Code string

// The error codes. All of them are local tool failures, never messages
// between agents.
const (
	// NotInHerdr: no usable Herdr from this process (environment gate,
	// transport failure, unreadable response).
	NotInHerdr Code = "NOT_IN_HERDR"
	// SelfUnnamed: the caller has no Agent Name and none could be given.
	SelfUnnamed Code = "SELF_UNNAMED"
	// PeerNotFound: the target is not a live named agent of the caller's
	// workspace (missing, invalid, elsewhere: indistinguishable).
	PeerNotFound Code = "PEER_NOT_FOUND"
	// SendFailed: self and target resolved, but Herdr refused the prompt,
	// or its answer was lost after the prompt was written (the message
	// may have been delivered; the detail says so).
	SendFailed Code = "SEND_FAILED"
	// CloseFailed: the target resolved to a pane, but Herdr did not close it.
	CloseFailed Code = "CLOSE_FAILED"
	// InvalidArgument: an argument other than a name is malformed (blank or
	// oversized message, malformed reply_to). An extension of the reference.
	InvalidArgument Code = "INVALID_ARGUMENT"
)

// The codes of a failed start. Those of its input and configuration are
// raised before anything is created.
const (
	// StartInputInvalid: a start argument is malformed (name, kind or
	// agent, args, placement, cwd), or Herdr refused the kind or args.
	StartInputInvalid Code = "START_INPUT_INVALID"
	// StartConfigNotFound: no .agents/agent_config.json from the working
	// directory up.
	StartConfigNotFound Code = "START_CONFIG_NOT_FOUND"
	// StartConfigInvalid: the agent_config.json found cannot be used.
	StartConfigInvalid Code = "START_CONFIG_INVALID"
	// StartAgentNotFound: the configuration has no agent of that key.
	StartAgentNotFound Code = "START_AGENT_NOT_FOUND"
	// StartNameTaken: an agent of that name already exists.
	StartNameTaken Code = "START_NAME_TAKEN"
	// StartFailed: Herdr did not start the agent, or it did not become
	// ready, or its first message failed; what this start created was
	// closed again.
	StartFailed Code = "START_FAILED"
)

// Error is a herdr-link failure. Its text, "CODE: detail", is safe to show
// a model: the detail is one of a fixed set of sentences and never holds a
// pane, tab, workspace or terminal id or Herdr's own text. The cause, for
// operators, is only reachable through Unwrap.
type Error struct {
	Code   Code
	Detail string
	cause  error
}

// NewError is the error of code with detail, for operators caused by
// cause (may be nil).
func NewError(code Code, detail string, cause error) *Error {
	return &Error{Code: code, Detail: detail, cause: cause}
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Detail }

// Unwrap returns the underlying cause (operator detail).
func (e *Error) Unwrap() error { return e.cause }

// Is matches another *Error by code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && t.Detail == ""
}

// Sentinels for errors.Is.
var (
	ErrNotInHerdr      = &Error{Code: NotInHerdr}
	ErrSelfUnnamed     = &Error{Code: SelfUnnamed}
	ErrPeerNotFound    = &Error{Code: PeerNotFound}
	ErrSendFailed      = &Error{Code: SendFailed}
	ErrCloseFailed     = &Error{Code: CloseFailed}
	ErrInvalidArgument = &Error{Code: InvalidArgument}

	ErrStartInputInvalid   = &Error{Code: StartInputInvalid}
	ErrStartConfigNotFound = &Error{Code: StartConfigNotFound}
	ErrStartConfigInvalid  = &Error{Code: StartConfigInvalid}
	ErrStartAgentNotFound  = &Error{Code: StartAgentNotFound}
	ErrStartNameTaken      = &Error{Code: StartNameTaken}
	ErrStartFailed         = &Error{Code: StartFailed}
)
