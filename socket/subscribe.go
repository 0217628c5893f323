package socket

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/ndjson"
	"github.com/herdr-link/herdr-link/schema"
)

// ErrEventsLost matches the error a subscription ends with when Herdr
// (0.9.2 and later) dropped events it had not yet written to it: the
// reader fell too far behind. Resubscribe, then read the state afresh.
var ErrEventsLost = &Error{Code: "events_lost"}

// Event is one line of an events.subscribe stream.
type Event struct {
	// Event is the event name: a snake_case kind for plain lifecycle events
	// ("pane_closed"), a dotted name for the special subscriptions
	// ("pane.agent_status_changed").
	Event string `json:"event"`
	// Data is the event's payload, undecoded.
	Data jsonx.RawMessage `json:"data"`
	// Received is when the client read the line.
	Received time.Time `json:"-"`
}

// Plain decodes a plain lifecycle event's data.
func (e Event) Plain() (schema.EventData, error) {
	var d schema.EventData
	err := jsonx.Unmarshal(e.Data, &d)
	return d, err
}

// AgentStatusChanged decodes a pane.agent_status_changed event's data; ok
// is false for any other event.
func (e Event) AgentStatusChanged() (ev schema.PaneAgentStatusChangedEvent, ok bool, err error) {
	if e.Event != string(schema.SubscriptionEventKindPaneAgentStatusChanged) {
		return ev, false, nil
	}
	err = jsonx.Unmarshal(e.Data, &ev)
	return ev, err == nil, err
}

// Subscription is an open events.subscribe stream. Next reads events;
// Close ends the stream. The client never writes to the connection after
// the request and never half-closes it: Herdr treats any byte or EOF from
// the client as "gone" and stops the stream.
type Subscription struct {
	conn   net.Conn
	r      *ndjson.Reader
	max    int
	closed sync.Once
}

// Subscribe sends events.subscribe and waits, within ctx (or the client's
// Timeout), for the subscription_started acknowledgement. A subscription
// Herdr rejects returns its [*Error] (whose id may be "<id>:sub:<n>:probe").
// The returned stream outlives ctx; Close it when done.
func (c *Client) Subscribe(ctx context.Context, p schema.EventsSubscribeParams) (*Subscription, error) {
	const method = schema.MethodEventsSubscribe
	if err := c.ensureProtocol(ctx); err != nil {
		return nil, err
	}
	id := c.nextID()
	body, err := jsonx.Marshal(request{ID: id, Method: method, Params: p})
	if err != nil {
		return nil, fmt.Errorf("socket: %s: encode params: %w", method, err)
	}
	hctx, cancel := c.withDeadline(ctx)
	defer cancel()
	conn, err := c.dial(hctx)
	if err != nil {
		return nil, err
	}
	if dl, ok := hctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(hctx, func() { _ = conn.Close() })
	// A subscription keeps its connection and reads line after line: it
	// shares the request's write with every call, not the one-answer read.
	if err := c.write(hctx, conn, method, body); err != nil {
		stop()
		conn.Close()
		return nil, err
	}
	s := &Subscription{conn: conn, r: ndjson.NewReader(conn, c.maxResponse()), max: c.maxResponse()}
	line, err := s.r.ReadLine()
	if !stop() {
		conn.Close()
		return nil, c.readError(hctx, method, context.DeadlineExceeded)
	}
	if err != nil {
		conn.Close()
		return nil, c.readError(hctx, method, err)
	}
	var ack schema.ResultSubscriptionStarted
	if err := decodeResponse(method, id, line, true, &ack); err != nil {
		conn.Close()
		return nil, err
	}
	if err := checkType(method, ack.Type, schema.ResultTypeSubscriptionStarted); err != nil {
		conn.Close()
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	return s, nil
}

// Next waits for the next event. If ctx ends first, Next closes the
// subscription and returns ctx's error wrapped in [ErrTimeout] or as
// context.Canceled. A line that is not an event gives
// [ErrMalformedResponse] and the stream stays usable; the end of the stream
// gives [ErrClosed] (after Close) or [ErrEmptyResponse] (server side).
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	stop := context.AfterFunc(ctx, func() { s.Close() })
	line, err := s.r.ReadLine()
	interrupted := !stop()
	if err != nil {
		if interrupted {
			if ctx.Err() == context.Canceled {
				return Event{}, ctx.Err()
			}
			return Event{}, fmt.Errorf("socket: events: %w: %w", ErrTimeout, ctx.Err())
		}
		if isClosedErr(err) {
			return Event{}, ErrClosed
		}
		c := &Client{MaxResponseBytes: s.max}
		return Event{}, c.readError(context.Background(), "events", err)
	}
	ev := Event{Received: time.Now()}
	if err := jsonx.Unmarshal(line, &ev); err == nil && ev.Event == "" {
		// An error line ends the stream (0.9.2: events_lost).
		var er struct {
			Error *schema.ErrorBody `json:"error"`
		}
		if jsonx.Unmarshal(line, &er) == nil && er.Error != nil && er.Error.Code != "" {
			s.Close()
			return Event{}, &Error{Method: "events", Code: er.Error.Code, Message: er.Error.Message}
		}
	}
	if err := jsonx.Unmarshal(line, &ev); err != nil || ev.Event == "" {
		return Event{}, fmt.Errorf("socket: events: %w: %q", ErrMalformedResponse, truncate(line))
	}
	ev.Data = append(jsonx.RawMessage(nil), ev.Data...)
	return ev, nil
}

// Close ends the subscription by closing the connection. It is safe to
// call more than once and from another goroutine.
func (s *Subscription) Close() error {
	var err error
	s.closed.Do(func() { err = s.conn.Close() })
	return err
}

func isClosedErr(err error) bool {
	return err != nil && (errorsIsNetClosed(err))
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
