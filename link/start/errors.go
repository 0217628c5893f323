package start

import "github.com/herdr-link/herdr-link/link/proto"

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

func newErr(code proto.Code, detail string, cause error) *proto.Error {
	return proto.NewError(code, detail, cause)
}
