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
// workspace.list, tab.list, session.snapshot, events.subscribe,
// server.stop, the input methods a user and an agent integration call
// (pane.send_text, pane.send_keys, pane.send_input, agent.send_keys,
// pane.report_agent; [World.TypeDraft], [World.PressKeys] and
// [World.ReportAgent] in Go); every other method of the schema answers
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
// # Inside
//
// A request goes down one path, each stage in a file or a package of its
// own:
//
//   - the connection (conn.go): accept, one request per connection;
//   - framing (framing.go): the request line, Herdr's first read
//     ([Server.PollRead]), the silent closes;
//   - the request check (package reqcheck): serde's rules and wording;
//   - faults (faults.go), then dispatch (dispatch.go): ping and
//     server.stop are the server's own, events.subscribe is a loop
//     (subscribe.go), every other method goes to the world;
//   - the state (package herdrstate): Herdr's state and semantics, the
//     world file, ids, names, events, waits; it never sees a connection;
//   - the response (response.go): one checked line.
//
// Behind each agent pane's terminal is a receiver (package receiver): the
// modelled agent's input box, or a real program (package program, run in
// a PTY by package ptypane). [World], [WorldSpec], [Submission] and the
// other names of those packages are aliased here, so one import serves a
// test.
//
// # Time
//
// A world's agents run on its [Clock] ([NewWorldClock]; the real one by
// default, or a [FakeClock]). With [Server.Memory] (the [InMemory] option
// of simtest.New) a server listens in memory instead of on a socket file:
// every wait of an exchange is then on a channel or a timer, so a test can
// run server, client and world inside a testing/synctest bubble, whose
// fake clock jumps over turn times, polls, timeouts and deadlines.
//
// A pane may run a real program instead of the modelled receiving end
// ([PaneSpec].Command, [Server.RunCommand]); [Server.Programs] starts it,
// in a pseudo-terminal with package ptypane (see [Program]). The
// simulator-only method [SimMethodTurns] serves the submissions to
// `herdr-sim turns`.
//
// The package imports neither testing nor a validator: in tests,
// socket/sockettest/simtest's New starts a server that is closed when the
// test ends and validates every line it writes against Herdr's committed
// JSON Schema ([Server.Check] takes any [Checker]).
package sockettest
