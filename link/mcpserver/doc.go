// Package mcpserver is herdr-link's MCP server: a lazy tool surface over
// stdio, built on github.com/sourcegraph/jsonrpc2 with a line-based object
// stream of its own.
//
// Outside Herdr the tool list is empty. Inside, a connection starts dormant
// with the single gateway tool herdr_link; calling it (or any Tier-1 tool)
// activates herdr_link_peers, herdr_link_start, herdr_link_send and herdr_link_close and sends
// one notifications/tools/list_changed. The gateway can also run every
// operation itself, for hosts that never refresh their tool list.
//
// Protocol messages (initialize, tools/list, ping, activation) are handled
// in arrival order in the connection's read loop; tool executions run
// concurrently and can be cancelled with notifications/cancelled. Malformed
// input gets a JSON-RPC error and the server keeps serving.
package mcpserver
