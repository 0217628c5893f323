package socket

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"sync"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
)

// Response bounds. Herdr puts no limit on its answers, so the client
// bounds them by what Herdr can send for each method:
//
//   - A single record (ping, agent.get, pane.get, agent.prompt,
//     agent.rename, pane.close, events): one AgentInfo or PaneInfo is a few
//     KiB even with a PATH_MAX cwd and long titles; 1 MiB is ample.
//   - A list (agent.list, pane.list, tab.list, workspace.list,
//     session.snapshot, and raw round trips): one record per pane. Every
//     pane has a terminal, and Linux allows 4,096 pseudo-terminals by
//     default (kernel.pty.max); at up to 8 KiB a record that is 32 MiB.
const (
	DefaultMaxResponseBytes = 1 << 20
	DefaultMaxListBytes     = 32 << 20
)

// headBytes is the most of an answer read into one buffer. An answer that
// fits (nearly all) is decoded from it in one pass; a longer one is
// decoded as a stream, so a large agent.list never sits in memory whole.
// Buffers up to poolBytes are pooled; larger ones go back to the allocator
// after their call.
const (
	headBytes = 4 << 20
	poolBytes = 1 << 20
)

// listMethods answer with one record per pane.
var listMethods = map[string]bool{
	schema.MethodAgentList: true, schema.MethodPaneList: true, schema.MethodTabList: true,
	schema.MethodWorkspaceList: true, schema.MethodSessionSnapshot: true, "raw": true,
}

// maxResponseFor is the bound of method's answer: MaxResponseBytes when
// set, else the method's default.
func (c *Client) maxResponseFor(method string) int {
	if c.MaxResponseBytes > 0 {
		return c.MaxResponseBytes
	}
	if listMethods[method] {
		return DefaultMaxListBytes
	}
	return DefaultMaxResponseBytes
}

// bufPool holds head buffers of at most poolBytes, so the pool never keeps
// a large answer's memory alive.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// readHead reads the answer on conn into a pooled buffer. It returns the
// line when it ends within headBytes (and within max), or else a reader of
// the whole line (the head read so far, then the rest of conn), bounded by
// max. release returns the buffer to the pool; the line or the reader is
// valid until then.
func (c *Client) readHead(ctx context.Context, conn net.Conn, method string, max int) (line []byte, rest *lineReader, release func(), err error) {
	bp := bufPool.Get().(*[]byte)
	buf := (*bp)[:0]
	release = func() {
		if cap(buf) <= poolBytes {
			*bp = buf[:0]
			bufPool.Put(bp)
		}
	}
	limit := min(headBytes, max)
	for {
		if len(buf) == cap(buf) {
			if len(buf) >= limit {
				if max <= limit {
					release()
					return nil, nil, nil, fmt.Errorf("socket: %s: %w (limit %d bytes)", method, ErrResponseTooLarge, max)
				}
				return nil, &lineReader{r: io.MultiReader(bytes.NewReader(buf), conn), left: max}, release, nil
			}
			// A list that outgrows the buffer goes straight to the size of
			// the client's last list answer (a 10,000-agent list: one
			// allocation instead of seven doublings and their copies).
			size := 2 * cap(buf)
			if hint := int(c.listHead.Load()); listMethods[method] && hint > size {
				size = hint + hint/16
			}
			nb := make([]byte, len(buf), min(size, limit))
			copy(nb, buf)
			buf = nb
		}
		n, rerr := conn.Read(buf[len(buf):min(cap(buf), limit)])
		if i := bytes.IndexByte(buf[len(buf):len(buf)+n], '\n'); i >= 0 {
			buf = buf[:len(buf)+n]
			if listMethods[method] {
				c.listHead.Store(int64(len(buf)))
			}
			return buf[:len(buf)-n+i], nil, release, nil
		}
		buf = buf[:len(buf)+n]
		if rerr != nil {
			release()
			if errors.Is(rerr, io.EOF) && len(buf) > 0 {
				rerr = io.ErrUnexpectedEOF
			}
			return nil, nil, nil, c.readError(ctx, method, rerr)
		}
	}
}

// errLineTooLong is lineReader's error past its bound.
var errLineTooLong = errors.New("line too long")

// lineReader reads up to the first newline (then io.EOF), failing with
// errLineTooLong past left bytes and with io.ErrUnexpectedEOF when the
// input ends first.
type lineReader struct {
	r    io.Reader
	left int
	done bool
}

func (l *lineReader) Read(p []byte) (int, error) {
	if l.done {
		return 0, io.EOF
	}
	if len(p) > l.left+1 {
		p = p[:l.left+1] // room for the newline
	}
	n, err := l.r.Read(p)
	if i := bytes.IndexByte(p[:n], '\n'); i >= 0 {
		l.done = true
		return i, nil
	}
	l.left -= n
	if l.left < 0 {
		return 0, errLineTooLong
	}
	if errors.Is(err, io.EOF) {
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}

// streamError classifies a failure while an answer is read as a stream.
func (c *Client) streamError(ctx context.Context, method string, err error) error {
	switch {
	case errors.Is(err, errLineTooLong):
		return fmt.Errorf("socket: %s: %w (limit %d bytes)", method, ErrResponseTooLarge, c.maxResponseFor(method))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return c.readError(ctx, method, io.ErrUnexpectedEOF)
	case ctx.Err() != nil || isTimeout(err):
		return c.transportError(ctx, method, "read", err)
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return c.transportError(ctx, method, "read", err)
	}
	return fmt.Errorf("socket: %s: %w: %v", method, ErrMalformedResponse, err)
}

// decodeStream decodes a response read from r (see decodeResponse) and
// returns its result's "type" tag. The result is decoded by streamValue:
// a list's elements one at a time, so a large agent.list never sits in
// memory whole. It runs only for answers over 4 MiB, with encoding/json's
// tokenizer (goccy/go-json's streaming decoder can loop after an error,
// goccy/go-json#296).
func (c *Client) decodeStream(ctx context.Context, method, id string, r *lineReader, into any) (tag string, err error) {
	if c.AfterLargeAnswer != nil {
		defer c.AfterLargeAnswer()
	}
	fail := func(err error) (string, error) { return "", c.streamError(ctx, method, err) }
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return fail(err)
	}
	var gotID *string
	var ebody *schema.ErrorBody
	hasResult := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		key, _ := tok.(string)
		switch key {
		case "id":
			err = dec.Decode(&gotID)
		case "error":
			err = dec.Decode(&ebody)
		case "result":
			hasResult = true
			if _, raw := into.(*jsonx.RawMessage); raw {
				err = dec.Decode(into)
			} else {
				tag, err = streamValue(dec, reflect.ValueOf(into).Elem(), true)
			}
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return fail(err)
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return fail(err)
	}
	// The rest of the line must be blank, and within the bound.
	tail, err := io.ReadAll(io.MultiReader(dec.Buffered(), r))
	if err != nil {
		return fail(err)
	}
	if len(bytes.TrimSpace(tail)) > 0 {
		return "", fmt.Errorf("socket: %s: %w: data after the response object", method, ErrMalformedResponse)
	}
	if err := checkEnvelope(method, id, gotID, ebody, hasResult, false, into); err != nil {
		return "", err
	}
	if raw, ok := into.(*jsonx.RawMessage); ok {
		tag = rawTag(*raw)
	}
	return tag, nil
}

// streamValue decodes the next JSON value of dec into v. A struct is
// decoded member by member and a slice element by element (each element
// cut out by the tokenizer and decoded by goccy), recursively, so that no
// more than one element's text is held at a time; anything else is
// decoded whole. With top set, v is a result object and the value of its
// "type" member is returned.
func streamValue(dec *json.Decoder, v reflect.Value, top bool) (tag string, err error) {
	switch {
	case v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Struct:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return streamValue(dec, v.Elem(), top)
	case v.Kind() == reflect.Struct && !hasEmbedded(v.Type()):
		return streamStruct(dec, v, top)
	case v.Kind() == reflect.Slice:
		return "", streamSlice(dec, v)
	}
	return "", dec.Decode(v.Addr().Interface())
}

func streamStruct(dec *json.Decoder, v reflect.Value, top bool) (tag string, err error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	if tok == nil {
		return "", nil // null leaves the struct as it is, as a decode does
	}
	if tok != json.Delim('{') {
		return "", fmt.Errorf("want an object, got %v", tok)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", err
		}
		key, _ := tok.(string)
		f, ok := fieldByKey(v, key)
		switch {
		case top && key == "type":
			err = dec.Decode(&tag)
			if ok && f.Kind() == reflect.String {
				f.SetString(tag)
			}
		case ok:
			_, err = streamValue(dec, f, false)
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return "", err
		}
	}
	return tag, expectDelim(dec, '}')
}

func streamSlice(dec *json.Decoder, v reflect.Value) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		v.SetZero()
		return nil
	}
	if tok != json.Delim('[') {
		return fmt.Errorf("want an array, got %v", tok)
	}
	v.SetLen(0)
	var raw json.RawMessage
	for dec.More() {
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		e := reflect.New(v.Type().Elem())
		if err := jsonx.Unmarshal(raw, e.Interface()); err != nil {
			return err
		}
		v.Set(reflect.Append(v, e.Elem()))
	}
	return expectDelim(dec, ']')
}

// fieldByKey is the field of struct v that takes the member key: by its
// json tag, else its name, exactly first and then ignoring case, as a
// decode matches them.
func fieldByKey(v reflect.Value, key string) (reflect.Value, bool) {
	t := v.Type()
	fold := -1
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if name == key {
			return v.Field(i), true
		}
		if fold < 0 && strings.EqualFold(name, key) {
			fold = i
		}
	}
	if fold >= 0 {
		return v.Field(fold), true
	}
	return reflect.Value{}, false
}

func hasEmbedded(t reflect.Type) bool {
	for i := range t.NumField() {
		if t.Field(i).Anonymous {
			return true
		}
	}
	return false
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != d {
		return fmt.Errorf("want %v, got %v", d, tok)
	}
	return nil
}
