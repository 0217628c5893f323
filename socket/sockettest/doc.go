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
// # The receiving end
//
// Behind each agent pane runs a model of the agent's input box (the
// program agent.prompt types into), built from how real Claude Code,
// Codex, OpenCode and Pi TUIs took typed text (hosts-and-delivery §2):
//
//   - Herdr's write: the text, as a bracketed paste (ESC[200~ … ESC[201~)
//     once the agent is ready (status not unknown; the world file's
//     bracketed_paste fixes it), raw before; then Enter ("\r")
//     [Server.SubmitDelay] (300 ms) later, after agent.prompt answered.
//   - The composer holds everything typed until an Enter: a user's draft
//     (world file draft), raw typing (newlines stay; a raw "\r" is Enter)
//     and pastes. At Enter it becomes one submission, merged per kind:
//     claude wraps each paste as <pasted_content id="N">…</pasted_content
//     id="N"> and puts a blank line before it; codex, pi and the plain
//     default glue pieces with no separator; opencode joins two pastes with
//     one space and adds one trailing space to what the model gets. An
//     Enter on an empty composer does nothing; a stuck composer (stuck)
//     never submits; Codex swallows an Enter while still reading raw
//     typing (0.83 ms a byte).
//   - The turn starts after the kind's submit latency (Claude 0.4 s + 5.7
//     µs/byte, Codex 0.1 s + 14.7 s × (size/256 KiB)², OpenCode 1.5 s, Pi
//     0.14 s + 37.5 µs/byte, others 0.1 s; submit_ms overrides): the
//     submission is recorded ([World.Submissions]) and the agent becomes
//     working, then idle (done outside the focused pane) after the turn
//     time (turn_ms, default 1 s; negative never ends). An agent the world
//     file starts working finishes that turn after turn_ends_ms (absent:
//     when [World.SetStatus] says so).
//   - While working, claude, opencode, pi and the default queue the
//     submission; everything queued during one turn becomes one turn,
//     sent shortly after the turn ends (0.2 s, 80 ms, 20 ms, 50 ms),
//     whoever ended it ([World.SetStatus] too). Codex submits at once
//     (10 ms), steering: the partial answer is discarded
//     ([World.Interrupts]) and the agent stays working.
//   - pane.read and agent.read show the turns and the composer with the
//     kind's screen signs ([World.Read]).
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
