// Package sockettest is a faithful stand-in for Herdr 0.8.2's socket API,
// in the style of net/http/httptest.
//
// A [Server] serves a [World] of workspaces, tabs, panes and agents on a
// real Unix socket with Herdr's framing: one request per connection, a
// 1 MiB request cap and a 5 s first-read timeout (both closing without a
// reply), silent closes for blank lines, EOF before the newline and invalid
// UTF-8, invalid_request with id "" for requests serde would reject, one
// response line, then close. It implements ping, agent.get, agent.list,
// agent.prompt (with and without wait), agent.rename, agent.read,
// agent.wait, pane.get, pane.list, pane.close, pane.move, pane.read,
// workspace.list, tab.list, session.snapshot, events.subscribe and
// server.stop; every other method of the schema answers
// not_implemented_in_simulator.
//
//	w := sockettest.DefaultWorld()
//	srv := sockettest.NewServer(w)
//	defer srv.Close()
//	agents, err := srv.Client().AgentList(ctx)
//
// [Server.SetFault] injects latency, hangs, drops, garbage, wrong ids,
// oversized replies and Herdr errors per method; [Server.SetRefuse] makes
// the socket refuse connections; [Server.SetProtocol] changes what ping
// reports. [Server.Requests] logs every request received.
//
// What it does not model: managed-launch deadlines and the 3 s settle
// (launch transitions follow [World.SetStatus]), events.wait and the other
// wait methods besides agent.wait and agent.prompt's wait, the legacy pane
// id forms (p_<ws>_<raw>, <ws>-<n>; moved-pane aliases are modelled),
// confirmation_required (inject it with a Fault), and the output-matched
// and scroll subscriptions (accepted, never fired).
//
// The package imports neither testing nor a validator: in tests,
// socket/sockettest/simtest's New starts a server that is closed when the
// test ends and validates every line it writes against Herdr's committed
// JSON Schema ([Server.Check] takes any [Checker]).
package sockettest
