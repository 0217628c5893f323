// Package herdrstate is the simulated Herdr's state and semantics: the
// [World] of workspaces, tabs, panes, terminals and agents, the world
// file that builds it ([WorldSpec]), Herdr's ids and names, the event hub,
// and the answer to every implemented method ([World.Handle],
// [World.Subscribe]).
//
// It sees requests only once they are checked (package reqcheck) and
// never a connection: the server (package sockettest) reads and writes
// the socket, and passes what a request needs of it in an [Env]. The
// program reading each agent pane's terminal is a receiver.Receiver: the
// modelled agent (receiver.Model) or a real program (package program).
// The world runs every request and every receiver timer under one lock,
// as Herdr's app loop does.
//
// A world's agents run on its [Clock] ([NewWorldClock]; the real one by
// default, which testing/synctest fakes, or a [FakeClock]).
//
// state_change_seq moves only when an agent's underlying state changes;
// revision only on title or metadata changes (never, in the simulator);
// pane.read answers revision 0.
//
// What it does not model: managed-launch deadlines and the 3 s settle
// (launch transitions follow [World.SetStatus]), events.wait and the other
// wait methods besides agent.wait and agent.prompt's wait, the raw pane id
// forms (p_<ws>_<raw>, p_<raw>; the <ws>:p<n> and <ws>-<n> forms and
// moved-pane aliases are modelled), confirmation_required (a server
// Fault injects it), and the output-matched and scroll subscriptions
// (accepted, never fired).
package herdrstate
