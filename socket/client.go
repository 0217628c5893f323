package socket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/ndjson"
	"github.com/herdr-link/herdr-link/schema"
)

// DefaultTimeout bounds a call whose context has no deadline.
const DefaultTimeout = 5 * time.Second

// ProtocolPolicy says what a Client does with the protocol number ping
// reports.
type ProtocolPolicy int

const (
	// ProtocolStrict (the zero value) pings once before the first call and
	// refuses servers older than [MinProtocol] with a
	// [*ProtocolMismatchError]; newer protocols are accepted.
	ProtocolStrict ProtocolPolicy = iota
	// ProtocolLenient pings once, reports a mismatch through Client.Warn
	// and proceeds.
	ProtocolLenient
	// ProtocolOff never pings on the caller's behalf.
	ProtocolOff
)

// Client talks to one Herdr server. Its zero value resolves the socket path
// from the environment on every call; set Path to pin one. A Client is safe
// for concurrent use; do not change its fields after first use.
type Client struct {
	// Path is the socket path. Empty: [ResolvePath] per call.
	Path string
	// Timeout bounds a call whose context has no deadline.
	// Zero means DefaultTimeout.
	Timeout time.Duration
	// MaxResponseBytes caps one response line. Zero means the method's
	// default: DefaultMaxListBytes for lists, DefaultMaxResponseBytes for
	// the rest.
	MaxResponseBytes int
	// Dial opens a connection; nil dials the Unix socket at path.
	Dial func(ctx context.Context, path string) (net.Conn, error)
	// Protocol selects the protocol check; see [ProtocolPolicy].
	Protocol ProtocolPolicy
	// Warn receives lenient-mode warnings; nil discards them.
	Warn func(msg string)
	// Trace, when set, sees every exchange: the request line and the
	// response line as read (nil when none came; only its first part when
	// an answer over 4 MiB is decoded as a stream). Diagnosis tools use it
	// to show and validate the wire; the slices are valid during the call.
	Trace func(request, response []byte)
	// Getenv replaces os.Getenv for path resolution (tests).
	Getenv func(string) string
	// AfterLargeAnswer, when set, is called after each call that decoded
	// an answer over 4 MiB as a stream, once the call is done with it. A
	// long-lived command can use it to return that memory to the system
	// sooner than the runtime's scavenger would (herdr-link calls
	// debug.FreeOSMemory a second after the last one); a library never
	// decides that for its process.
	AfterLargeAnswer func()

	seq atomic.Uint64
	// listHead is the length of the last list answer read whole: the next
	// one's buffer starts at that size.
	listHead atomic.Int64
	mu       sync.Mutex
	pong     *schema.ResultPong
	pongErr  error // a protocol mismatch is final for this client
}

func (c *Client) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

func (c *Client) maxResponse() int { return c.maxResponseFor("") }

// Resolve reports the socket path the client will dial and the rule that
// chose it.
func (c *Client) Resolve() (Resolution, error) {
	if c.Path != "" {
		return Resolution{Path: c.Path, Rule: RuleExplicit}, nil
	}
	return ResolvePath(c.Getenv)
}

type request struct {
	ID     string `json:"id"`
	Method string `json:"method"`
	Params any    `json:"params"`
}

var emptyParams = struct{}{}

func (c *Client) nextID() string {
	return "herdr-link:" + strconv.FormatUint(c.seq.Add(1), 10)
}

// Call sends method with params and decodes the response's result object
// (including its "type" tag) into result, which may be a *jsonx.RawMessage
// or nil. It works for any method of the schema. Nil params are sent as {}.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	if err := c.ensureProtocol(ctx); err != nil {
		return err
	}
	if result == nil {
		result = new(jsonx.RawMessage)
	}
	_, err := c.call(ctx, method, params, result)
	return err
}

// Call sends method with params and returns its result object decoded
// as Res: a schema result type, or a struct of the fields the caller
// reads. When tag is not "", the result's "type" must be tag (or a tag
// this schema does not know: a newer Herdr's). Large answers are
// streamed (see the package documentation). It works for any method.
func Call[Res any](ctx context.Context, c *Client, method, tag string, params any) (Res, error) {
	var r Res
	err := CallInto(ctx, c, method, tag, params, &r)
	return r, err
}

// CallInto is [Call] decoding into r, which may be prepared (a list's
// slice allocated for the length expected: the decoder fills it instead
// of growing it step by step).
func CallInto[Res any](ctx context.Context, c *Client, method, tag string, params any, r *Res) error {
	if err := c.ensureProtocol(ctx); err != nil {
		return err
	}
	got, err := c.call(ctx, method, params, r)
	if err != nil || tag == "" {
		return err
	}
	return checkType(method, got, tag)
}

// CallRaw is [Client.Call] for tools that show the wire (the probe, the
// simulator's CLI verbs): it sends method with params, returns the exact
// request and response lines, and classifies the answer as every call does
// — a Herdr refusal is a *[Error], a mismatched id or unreadable line is
// [ErrProtocol] or [ErrMalformedResponse] — decoding the result into
// result (which may be nil). id is the request's id; "" lets the client
// number it. It checks no protocol number. The response is read whole
// (within the method's size bound), never streamed.
func (c *Client) CallRaw(ctx context.Context, id, method string, params, result any) (request, response []byte, err error) {
	if params == nil {
		params = emptyParams
	}
	if id == "" {
		id = c.nextID()
	}
	request, err = jsonx.Marshal(struct {
		ID     string `json:"id"`
		Method string `json:"method"`
		Params any    `json:"params"`
	}{id, method, params})
	if err != nil {
		return nil, nil, fmt.Errorf("socket: %s: encode params: %w", method, err)
	}
	response, err = c.RoundTrip(ctx, request)
	if err != nil {
		return request, nil, err
	}
	if result == nil {
		result = new(jsonx.RawMessage)
	}
	return request, response, afterWrite(decodeResponse(method, id, response, false, result))
}

// RoundTrip sends one raw request line (without the newline) and returns
// the raw response line, for tools that show the wire. It applies the
// deadline and size rules of every call but checks nothing in the response.
func (c *Client) RoundTrip(ctx context.Context, line []byte) ([]byte, error) {
	const method = "raw"
	var out []byte
	err := c.exchange(ctx, method, line, func(head []byte, rest *lineReader) error {
		if rest == nil {
			out = bytes.Clone(head)
			return nil
		}
		b, err := io.ReadAll(rest)
		if err != nil {
			return c.streamError(ctx, method, err)
		}
		out = b
		return nil
	})
	return out, err
}

func (c *Client) withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	if _, ok := ctx.Deadline(); ok {
		// The caller's deadline bounds the call: no context of our own
		// (its allocations and cancel propagation were measurable on a
		// peers call).
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.timeout())
}

// call performs one exchange, decodes the result object into into and
// returns its "type" tag.
func (c *Client) call(ctx context.Context, method string, params, into any) (tag string, err error) {
	if params == nil {
		params = emptyParams
	}
	id := c.nextID()
	body, err := jsonx.Marshal(request{ID: id, Method: method, Params: params})
	if err != nil {
		return "", fmt.Errorf("socket: %s: encode params: %w", method, err)
	}
	err = c.exchange(ctx, method, body, func(line []byte, rest *lineReader) error {
		if rest != nil {
			tag, err = c.decodeStream(ctx, method, id, rest, into)
			return err
		}
		if err := decodeResponse(method, id, line, false, into); err != nil {
			return err
		}
		tag = resultTag(id, line)
		return nil
	})
	return tag, err
}

// exchange is the one way a request goes through the client: it dials,
// writes the request line body, reads the answer's head (see readHead)
// and hands it to use, all within ctx (or the client's Timeout). Trace
// sees the exchange. Failures once the whole line (newline included) was
// written carry [ErrAfterWrite]; a failed write does not: a line without
// its newline never reaches Herdr's parser.
func (c *Client) exchange(ctx context.Context, method string, body []byte, use func(line []byte, rest *lineReader) error) error {
	if len(body) > MaxRequestBytes {
		return tooLarge(method, len(body))
	}
	ctx, cancel := c.withDeadline(ctx)
	defer cancel()
	conn, err := c.dialFor(ctx, true)
	if err != nil {
		return err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	if err := c.write(ctx, conn, method, body); err != nil {
		if c.Trace != nil {
			c.Trace(body, nil)
		}
		return err
	}
	// From here on Herdr may have the request.
	line, rest, release, err := c.readHead(ctx, conn, method, c.maxResponseFor(method))
	if c.Trace != nil {
		c.Trace(body, line)
	}
	if err != nil {
		return afterWrite(err)
	}
	defer release()
	return afterWrite(use(line, rest))
}

// write writes one request line (body and its newline) on conn.
func (c *Client) write(ctx context.Context, conn net.Conn, method string, body []byte) error {
	msg := make([]byte, 0, len(body)+1)
	msg = append(append(msg, body...), '\n')
	if n, err := conn.Write(msg); err != nil {
		if n == len(msg) {
			return afterWrite(c.transportError(ctx, method, "write", err))
		}
		return c.transportError(ctx, method, "write", err)
	}
	return nil
}

func (c *Client) dial(ctx context.Context) (net.Conn, error) { return c.dialFor(ctx, false) }

// dialFor dials Herdr: with the client's Dial when set, else, for a
// one-shot exchange, with dialExchange where the platform has one, else
// with net's dialer.
func (c *Client) dialFor(ctx context.Context, exchange bool) (net.Conn, error) {
	res, err := c.Resolve()
	if err != nil {
		return nil, fmt.Errorf("socket: %w: %v", ErrConnection, err)
	}
	if err := checkPath(res.Path); err != nil {
		return nil, err
	}
	dial := c.Dial
	if dial == nil && exchange {
		dial = dialExchange
	}
	if dial == nil {
		dial = dialUnix
	}
	conn, err := dial(ctx, res.Path)
	if err == nil {
		return conn, nil
	}
	if de := diagnoseDial(res.Path, err); de != nil {
		return nil, de
	}
	switch {
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, os.ErrNotExist):
		return nil, &UnavailableError{Path: res.Path, Hint: res.StartHint(), Err: err}
	case ctx.Err() != nil:
		return nil, fmt.Errorf("socket: dial %s: %w: %w", res.Path, ErrTimeout, ctx.Err())
	}
	return nil, fmt.Errorf("socket: dial %s: %w: %v", res.Path, ErrConnection, err)
}

func (c *Client) readError(ctx context.Context, method string, err error) error {
	switch {
	case errors.Is(err, ndjson.ErrLineTooLong):
		return fmt.Errorf("socket: %s: %w (limit %d bytes)", method, ErrResponseTooLarge, c.maxResponseFor(method))
	case ctx.Err() != nil || isTimeout(err):
		return c.transportError(ctx, method, "read", err)
	case errors.Is(err, io.EOF):
		return fmt.Errorf("socket: %s: %w: the server closed the connection without replying", method, ErrEmptyResponse)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("socket: %s: %w: the connection ended before the end of the line", method, ErrTruncatedResponse)
	}
	return c.transportError(ctx, method, "read", err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func (c *Client) transportError(ctx context.Context, method, op string, err error) error {
	if ctx.Err() != nil || isTimeout(err) {
		cause := ctx.Err()
		if cause == nil {
			cause = context.DeadlineExceeded
		}
		if errors.Is(cause, context.Canceled) {
			return fmt.Errorf("socket: %s: %s: %w", method, op, cause)
		}
		return fmt.Errorf("socket: %s: %s: %w: %w", method, op, ErrTimeout, cause)
	}
	return fmt.Errorf("socket: %s: %s: %w: %v", method, op, ErrConnection, err)
}

func errorsIsNetClosed(err error) bool { return errors.Is(err, net.ErrClosed) }
