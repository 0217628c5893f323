package mcpserver

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/sourcegraph/jsonrpc2"
)

// captureStream hands the message jsonrpc2 reads into to got, and ends.
type captureStream struct{ got chan any }

func (c captureStream) ReadObject(v any) error { c.got <- v; return io.EOF }
func (captureStream) WriteObject(any) error    { return errors.New("not written") }
func (captureStream) Close() error             { return nil }

// messageType is the type of the value jsonrpc2's read loop reads into.
func messageType(t *testing.T) reflect.Type {
	c := captureStream{got: make(chan any, 1)}
	conn := jsonrpc2.NewConn(context.Background(), c, jsonrpc2.HandlerWithError(func(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request) (any, error) {
		return nil, nil
	}), jsonrpc2.SetLogger(discardLogger{}))
	defer conn.Close()
	return reflect.TypeOf(<-c.got)
}

// The stream hands jsonrpc2 the decoded request only while the library's
// message has the layout it knows; a jsonrpc2 release that changes it
// fails here (and the stream falls back to lines, as slow as the library).
func TestMessageSlots(t *testing.T) {
	mt := messageType(t)
	if !hasMessageLayout(mt.Elem()) {
		t.Fatalf("jsonrpc2's message %v no longer has the layout of message", mt)
	}
	var m messageSlots
	if m.request(new(message)) != nil {
		t.Fatal("a type of this package was taken for jsonrpc2's message")
	}
	if m.request(nil) != nil || m.request(struct{}{}) != nil {
		t.Fatal("not a message, yet a slot")
	}
}

// The request handed over and the one the connection decodes from the
// fallback line are the same.
func TestHandedOverRequestIsTheDecodedOne(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","id":-1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a b","method":"m\u00e9thode","params":null}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`,
		`{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping","params":[]}`,
	}, "\n") + "\n"
	mt := messageType(t)
	read := func(fallback bool) []jsonrpc2.Request {
		var got []jsonrpc2.Request
		synctest.Test(t, func(t *testing.T) {
			s := newStream(strings.NewReader(in), io.Discard, 0, slog.New(slog.DiscardHandler))
			if fallback {
				s.slots = messageSlots{checked: mt, ok: false}
			}
			conn := jsonrpc2.NewConn(context.Background(), s, jsonrpc2.HandlerWithError(func(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
				got = append(got, *req)
				return nil, nil
			}), jsonrpc2.SetLogger(discardLogger{}), jsonrpc2.OnRecv(s.received))
			<-s.ended
			s.letEnd()
			<-conn.DisconnectNotify()
		})
		return got
	}
	fast, slow := read(false), read(true)
	if len(fast) != 5 {
		t.Fatalf("%d requests handed over, want 5", len(fast))
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("handed over %+v\ndecoded     %+v", fast, slow)
	}
}
