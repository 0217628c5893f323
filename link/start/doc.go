// Package start starts a named agent in the caller's workspace: it checks
// the request (and a configured agent's .agents/agent_config.json),
// bounds how many starts a server makes, creates a pane, runs
// agent.start in it, waits until Herdr reports the agent ready, and hands
// a first message to the send. What it needs of the protocol above it
// (the caller's resolution, the send, the errors of Herdr calls) comes
// through [Ports]; package link implements them and re-exports the types.
package start
