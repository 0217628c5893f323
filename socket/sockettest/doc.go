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
// reports, [Server.UseProtocol] answers as the Herdr release of protocol
// 19–25 would, [Server.SetMissing] plays a Herdr without some methods.
// [Server.Requests] logs every request received.
//
// Params are checked as serde checks them (required fields at any depth,
// value types, integer ranges, enum values, union tags) with serde's
// wording; event lines have their keys sorted at every level, as Herdr
// writes them. [SpecFromSnapshot] mirrors a recorded session.snapshot.
//
// A world's agents run on its [Clock] ([NewWorldClock]; the real one by
// default, which testing/synctest fakes — use [World.Prompt] there, as
// sockets are not durably blocking — or a [FakeClock]). The simulator-only
// method [SimMethodTurns] serves the submissions to `herdr-sim turns`.
//
// state_change_seq moves only when an agent's underlying state changes;
// revision only on title or metadata changes (never, in the simulator);
// pane.read answers revision 0.
//
// A pane may run a real program instead of the modelled receiving end
// ([PaneSpec].Command, [Server.RunCommand]); [Server.Programs] starts it,
// in a pseudo-terminal with package ptypane (see [Program]).
//
// What it does not model: managed-launch deadlines and the 3 s settle
// (launch transitions follow [World.SetStatus]), events.wait and the other
// wait methods besides agent.wait and agent.prompt's wait, the raw pane id
// forms (p_<ws>_<raw>, p_<raw>; the <ws>:p<n> and <ws>-<n> forms and
// moved-pane aliases are modelled), confirmation_required (inject it with a
// Fault), and the output-matched and scroll subscriptions (accepted, never
// fired).
//
// The package imports neither testing nor a validator: in tests,
// socket/sockettest/simtest's New starts a server that is closed when the
// test ends and validates every line it writes against Herdr's committed
// JSON Schema ([Server.Check] takes any [Checker]).
package sockettest
