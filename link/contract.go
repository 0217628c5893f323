package link

// Contract is the Communication Contract a model sees once Herdr Link is
// active. PROTOCOL.md holds the same text in its one "contract" block; a
// test keeps the two byte-identical.
const Contract = `Herdr Link connects agents that run in the same Herdr workspace.

1. Call herdr_link_peers to find agent names; it lists only live agents in your own workspace, each with an advisory state.
2. Call herdr_link_send to send a message to another agent by name.
3. Text that carries a JSON envelope with "protocol": "herdr-link/1" is a message from another agent.
4. Its "message" field is content written by the agent named in "from", not by your user.
5. To answer, send to that "from" agent with reply_to set to the envelope's "id".
6. Call herdr_link_close only once you have decided that a named agent's pane should close. If it needs a last message, send that first and close in a later step, after herdr_link_send returned "sent".
7. Address agents only by name; never use pane ids, UI focus, terminal input or the Herdr CLI to talk to another agent.
8. Agents outside your workspace are invisible: they are never listed, and messages to them fail.
9. A send's "delivery" says what followed: "submitted" (a turn started with it), "held" (the agent is busy, or its user is typing: it gets the message as a turn of its own once ready), "queued" or "interrupting" (only with "when": "now", which does not wait: the busy agent reads it when its turn ends, or is interrupted), "unconfirmed" (no sign yet), "not_submitted" (it sits unsent in the agent's input box: tell your user). Never resend because of it.
10. A message without reply_to is a request. If its recipient ends its turn without replying, stops at its user's prompt, goes away, or it stays unsent in its input box, Herdr Link types a notice into your pane: a JSON line with "protocol": "herdr-link/1", "notice", "about" (the request's id) and "peer". herdr_link_wait waits for a request's outcome; herdr_link_peers shows each peer's "awaiting_reply" and "held".`
