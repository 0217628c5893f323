package link

import "github.com/herdr-link/herdr-link/link/proto"

// The codes of a failed start. Those of its input and configuration are
// raised before anything is created.
const (
	// StartInputInvalid: a start argument is malformed (name, kind or
	// agent, args, placement, cwd), or Herdr refused the kind or args.
	StartInputInvalid = proto.StartInputInvalid
	// StartConfigNotFound: no .agents/agent_config.json from the working
	// directory up.
	StartConfigNotFound = proto.StartConfigNotFound
	// StartConfigInvalid: the agent_config.json found cannot be used.
	StartConfigInvalid = proto.StartConfigInvalid
	// StartAgentNotFound: the configuration has no agent of that key.
	StartAgentNotFound = proto.StartAgentNotFound
	// StartNameTaken: an agent of that name already exists.
	StartNameTaken = proto.StartNameTaken
	// StartFailed: Herdr did not start the agent, or it did not become
	// ready, or its first message failed; what this start created was
	// closed again.
	StartFailed = proto.StartFailed
)

// Sentinels for errors.Is.
var (
	ErrStartInputInvalid   = proto.ErrStartInputInvalid
	ErrStartConfigNotFound = proto.ErrStartConfigNotFound
	ErrStartConfigInvalid  = proto.ErrStartConfigInvalid
	ErrStartAgentNotFound  = proto.ErrStartAgentNotFound
	ErrStartNameTaken      = proto.ErrStartNameTaken
	ErrStartFailed         = proto.ErrStartFailed
)

// The fixed details of a start.
const (
	detailStartName        = "name must be a lowercase letter, then up to 25 lowercase letters, digits, '-' or '_', without \"__\""
	detailStartWhat        = `give either "kind" (with optional "args") or "agent" (a configured agent), not both`
	detailStartKind        = "Herdr does not know that agent kind"
	detailStartArgs        = "args must be at most 32 strings without control characters, 4 KiB each and 16 KiB in all"
	detailStartPlacement   = `placement must be "right", "down" or "tab", and "beside" a peer's name (not with "tab")`
	detailStartCwd         = "cwd must be an existing directory inside your working directory or your home directory"
	detailConfigMissing    = "no .agents/agent_config.json in your working directory or above it"
	detailConfigUnreadable = "the .agents/agent_config.json found cannot be read"
	detailConfigInvalid    = "the .agents/agent_config.json found is not valid (see herdr-link's documentation for its format)"
	detailConfigAgent      = "the .agents/agent_config.json found has no agent of that name"
	detailNameTaken        = "an agent with that name already exists; choose another name"
	detailStartFailed      = "Herdr did not start the agent; nothing was left behind"
	detailStartNoPane      = "Herdr could not open a pane for the agent; nothing was created"
	detailStartMaybePane   = "Herdr's answer was lost while a pane was being opened: an empty pane may be left; check with the user before retrying"
	detailStartBlocked     = "the agent stopped at an interactive prompt while starting; its pane was closed"
	detailStartExited      = "the agent exited before it became ready; its pane was closed"
	detailStartLost        = "the agent's pane changed while it was starting; its pane was closed"
	detailStartTimeout     = "the agent did not become ready in time; its pane was closed"
	detailStartMessage     = "the agent started, but its first message could not be delivered, so its pane was closed; nothing was delivered"
)
