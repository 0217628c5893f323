// Package link implements the herdr-link/1 protocol: Agent Names and
// message ids, the envelope and its self-describing wrapper, the
// Communication Contract, and the three operations — [Link.Peers],
// [Link.Send] and [Link.Close] — with the self identity bootstrap.
//
// A [Link] is made by [New] from a [Config], which [Config.Validate]
// checks. One delivery to one target (the lock, the blocker checks, the
// lease, the prompt, the occupant checks, the confirmation watch, the
// release) is the delivery core's, package link/deliver, which a Link
// holds and which imports nothing of link. The courier on top of it
// ([Link.Deliver], [Link.DeliverOnce]: held messages, the request ledger
// and its watch, [Link.WaitReply]) is package link/courier's, and
// starting an agent ([Link.Start]) is package link/start's; a Link holds
// both. The error codes and the names they share are package
// link/proto's, which link re-exports.
//
// Operations drive Herdr through the [Herdr] interface ([SocketHerdr] over
// the socket client in production, the same type over socket/sockettest in
// tests). Failures are [*Error] values whose text, "CODE: detail", is safe to
// show a model: it never holds a pane, tab, workspace or terminal id.
// PROTOCOL.md at the repository root is the normative description.
package link
