// Package socket is a client for Herdr's local JSON socket API.
//
// Herdr serves one request per connection: the client writes one JSON line,
// the server answers with one JSON line and closes. [Client] does exactly
// that for every call, with no pooling and no hidden state beyond a cached
// protocol check, so it is safe for concurrent use and its zero value works:
// it finds the socket the way the herdr CLI does ([ResolvePath]).
//
// # Calls
//
// Every call marshals its request before dialing, dials, writes the request
// line in one write (Herdr's server sleeps 100 ms when its first read finds
// nothing pending), reads exactly one response line with a bounded reader
// ([Client.MaxResponseBytes]; by default [DefaultMaxResponseBytes] for a
// single record and [DefaultMaxListBytes] for a list) and closes. A request
// line over Herdr's [MaxRequestBytes] is refused before dialing. An answer
// over 4 MiB is decoded as a stream, in one place for every result: its
// lists element by element, so a large agent.list never sits in memory
// whole. Every call has a deadline: the caller's context, or
// [Client.Timeout] when the context has none. Cancelling the context
// closes the connection at once. Every call, raw or typed, takes the same
// way through the client (dial, one write, the bounded read).
//
// [Call] sends any method of the schema and decodes its result into a
// type of the caller's (a schema result type, or a struct of the fields
// it reads), checking the result's "type" tag; the typed methods
// ([Client.AgentGet], [Client.AgentList], [Client.PaneClose], …) are
// calls of it. [Client.Call] is the untyped form, [Client.CallRaw] and
// [Client.RoundTrip] show the wire, and [Client.Subscribe] opens an
// events.subscribe stream.
//
// # Errors
//
// A refusal from Herdr is an [*Error] carrying Herdr's code and message;
// errors.Is matches it by code against the sentinels such as
// [ErrAgentNotFound]. Transport failures wrap one of [ErrUnavailable] (no
// server: the error carries the same hint the herdr CLI prints), [ErrTimeout],
// [ErrEmptyResponse], [ErrTruncatedResponse], [ErrResponseTooLarge],
// [ErrMalformedResponse], [ErrConnection] or [ErrProtocol]. A server older
// than protocol 19 ([MinProtocol]) gives [ErrProtocolMismatch], unless the
// client is lenient ([ProtocolLenient]); any newer protocol is accepted, and
// a method the server does not know gives a [*MethodUnsupportedError]
// ([ErrMethodUnsupported]) instead of an invalid_request. Unknown result
// fields, result type tags and ping capabilities never fail a call.
package socket
