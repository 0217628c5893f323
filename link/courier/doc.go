// Package courier serves the outbox on top of the delivery core
// (link/deliver): it holds the messages a target cannot take as a turn
// yet and types them once it can, oldest first per target, under the
// target's delivery lock and the outbox's claim; it keeps the ledger of
// requests (recorded, typed, answered, ended, the notice to their
// sender) and watches their recipients for the outcome; and it waits for
// a request's outcome. It sits beside link/start, below link, which
// keeps the protocol and the send's path: what the courier needs of that
// (errors, the composer read from the screen) comes through [Ports].
package courier
