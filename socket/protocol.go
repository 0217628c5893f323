package socket

import (
	"context"
	"fmt"
	"reflect"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
)

// ensureProtocol pings once per Client, per its ProtocolPolicy.
func (c *Client) ensureProtocol(ctx context.Context) error {
	if c.Protocol == ProtocolOff {
		return nil
	}
	c.mu.Lock()
	done, perr := c.pong != nil, c.pongErr
	c.mu.Unlock()
	if done || perr != nil {
		return perr
	}
	_, err := c.ServerInfo(ctx)
	return err
}

// ServerInfo returns the server's pong, pinging at most once per Client
// (successful answers are cached), and applies the protocol policy.
func (c *Client) ServerInfo(ctx context.Context) (schema.ResultPong, error) {
	c.mu.Lock()
	if c.pong != nil || c.pongErr != nil {
		p, err := c.pong, c.pongErr
		c.mu.Unlock()
		if p == nil {
			return schema.ResultPong{}, err
		}
		return *p, err
	}
	c.mu.Unlock()
	pong, err := c.Ping(ctx)
	if err != nil {
		return pong, err
	}
	var perr error
	if pong.Protocol < MinProtocol {
		mm := &ProtocolMismatchError{Server: pong.Protocol, Version: pong.Version, Min: MinProtocol}
		if c.Protocol == ProtocolLenient {
			if c.Warn != nil {
				c.Warn(mm.Error() + "; proceeding (lenient)")
			}
		} else {
			perr = mm
		}
	}
	c.mu.Lock()
	c.pong, c.pongErr = &pong, perr
	c.mu.Unlock()
	return pong, perr
}

// Ping sends ping and returns the pong. It never uses the cache and checks
// no protocol number.
//
// Capabilities are decoded leniently: null, a missing field, fields this
// client does not know and fields of a shape it does not expect leave
// Capabilities nil or partly filled, never an error.
func (c *Client) Ping(ctx context.Context) (schema.ResultPong, error) {
	var raw struct {
		Type         string           `json:"type"`
		Version      string           `json:"version"`
		Protocol     uint32           `json:"protocol"`
		Capabilities jsonx.RawMessage `json:"capabilities"`
	}
	if _, err := c.call(ctx, schema.MethodPing, emptyParams, &raw); err != nil {
		return schema.ResultPong{}, err
	}
	p := schema.ResultPong{Type: raw.Type, Version: raw.Version, Protocol: raw.Protocol}
	if len(raw.Capabilities) > 0 && raw.Capabilities[0] == '{' {
		p.Capabilities = lenientCapabilities(raw.Capabilities)
	}
	return p, checkType(schema.MethodPing, p.Type, schema.ResultTypePong)
}

// lenientCapabilities reads the capability flags it knows, field by field.
func lenientCapabilities(b []byte) *schema.ServerCapabilities {
	var fields map[string]jsonx.RawMessage
	if jsonx.Unmarshal(b, &fields) != nil {
		return nil
	}
	var caps schema.ServerCapabilities
	_ = jsonx.Unmarshal(fields["live_handoff"], &caps.LiveHandoff)
	_ = jsonx.Unmarshal(fields["detached_server_daemon"], &caps.DetachedServerDaemon)
	return &caps
}

// checkType checks a result's type tag. A tag this client's schema does
// not define is accepted (a newer Herdr may rename or extend a result;
// the fields decoded are used as far as they go); a known tag other than
// the expected one is a protocol violation.
func checkType(method, got, want string) error {
	if got != want && knownResultTags[got] {
		return afterWrite(fmt.Errorf("socket: %s: %w: result type %q, want %q", method, ErrProtocol, got, want))
	}
	return nil
}

// knownResultTags are the result type tags of the generated schema.
var knownResultTags = func() map[string]bool {
	tags := map[string]bool{}
	t := reflect.TypeOf(schema.ResponseResult{})
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).Type.Kind() != reflect.Pointer {
			continue
		}
		var u schema.ResponseResult
		reflect.ValueOf(&u).Elem().Field(i).Set(reflect.New(t.Field(i).Type.Elem()))
		if tag := u.Tag(); tag != "" {
			tags[tag] = true
		}
	}
	return tags
}()
