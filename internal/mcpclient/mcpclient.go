// Package mcpclient is a small MCP client over a child process's stdio,
// for herdr-link's demo, probe and bench commands. It speaks
// newline-delimited JSON-RPC 2.0, matches responses to requests by id (so
// calls may run concurrently) and records notifications and, optionally,
// every line in both directions.
package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/ndjson"
)

// Message is one JSON-RPC message as read.
type Message struct {
	ID     jsonx.RawMessage `json:"id,omitempty"`
	Method string           `json:"method,omitempty"`
	Params jsonx.RawMessage `json:"params,omitempty"`
	Result jsonx.RawMessage `json:"result,omitempty"`
	Error  *RPCError        `json:"error,omitempty"`
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// Client talks to one MCP server.
type Client struct {
	// Trace, when set, sees every line: dir is "→" (sent) or "←" (read).
	Trace func(dir string, line []byte)

	cmd     *exec.Cmd
	w       io.WriteCloser
	wmu     sync.Mutex
	mu      sync.Mutex
	seq     int64
	pending map[string]chan Message
	notes   []Message
	noteCh  chan Message
	done    chan struct{}
	err     error
}

// Start runs name with args and env as an MCP server.
func Start(name string, args, env []string) (*Client, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	return StartCmd(cmd)
}

// StartCmd runs cmd (whose Stdin and Stdout must be unset) as an MCP
// server.
func StartCmd(cmd *exec.Cmd) (*Client, error) {
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := New(r, w)
	c.cmd = cmd
	return c, nil
}

// New speaks MCP over r and w (for in-process servers).
func New(r io.Reader, w io.WriteCloser) *Client {
	c := &Client{w: w, pending: map[string]chan Message{}, noteCh: make(chan Message, 64), done: make(chan struct{})}
	go c.read(r)
	return c
}

func (c *Client) read(r io.Reader) {
	defer close(c.done)
	lr := ndjson.NewReader(r, 64<<20)
	for {
		line, err := lr.ReadLine()
		if err != nil && !(errors.Is(err, io.ErrUnexpectedEOF) && len(line) > 0) {
			c.mu.Lock()
			c.err = err
			c.mu.Unlock()
			return
		}
		if c.Trace != nil {
			c.Trace("←", line)
		}
		var m Message
		if jsonx.Unmarshal(line, &m) != nil {
			continue
		}
		if m.Method != "" && m.ID == nil {
			c.mu.Lock()
			c.notes = append(c.notes, m)
			c.mu.Unlock()
			select {
			case c.noteCh <- m:
			default:
			}
			continue
		}
		c.mu.Lock()
		ch := c.pending[string(m.ID)]
		delete(c.pending, string(m.ID))
		c.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

// Notifications returns the notifications received so far.
func (c *Client) Notifications() []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Message(nil), c.notes...)
}

// WaitNotification waits for the next notification.
func (c *Client) WaitNotification(ctx context.Context) (Message, error) {
	select {
	case m := <-c.noteCh:
		return m, nil
	case <-ctx.Done():
		return Message{}, ctx.Err()
	case <-c.done:
		return Message{}, io.EOF
	}
}

func (c *Client) send(v any) error {
	b, err := jsonx.Marshal(v)
	if err != nil {
		return err
	}
	if c.Trace != nil {
		c.Trace("→", b)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.w.Write(append(b, '\n'))
	return err
}

// Call sends a request and waits for its response.
func (c *Client) Call(ctx context.Context, method string, params any) (jsonx.RawMessage, error) {
	c.mu.Lock()
	c.seq++
	seq := c.seq
	id := strconv.FormatInt(seq, 10)
	ch := make(chan Message, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	req := map[string]any{"jsonrpc": "2.0", "id": seq, "method": method}
	if params != nil {
		req["params"] = params
	}
	if err := c.send(req); err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, m.Error
		}
		return m.Result, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, ctx.Err()
	case <-c.done:
		return nil, fmt.Errorf("mcpclient: server closed its output: %v", c.err)
	}
}

// Notify sends a notification.
func (c *Client) Notify(method string, params any) error {
	req := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		req["params"] = params
	}
	return c.send(req)
}

// Initialize runs the handshake: initialize, then notifications/initialized.
func (c *Client) Initialize(ctx context.Context, revision string) (jsonx.RawMessage, error) {
	res, err := c.Call(ctx, "initialize", map[string]any{
		"protocolVersion": revision,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "herdr-link-client", "version": "1"},
	})
	if err != nil {
		return nil, err
	}
	return res, c.Notify("notifications/initialized", nil)
}

// ToolResult is a tools/call result.
type ToolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent jsonx.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool             `json:"isError,omitempty"`
}

// Text is the first text content.
func (r ToolResult) Text() string {
	for _, c := range r.Content {
		if c.Type == "text" {
			return c.Text
		}
	}
	return ""
}

// CallTool calls a tool.
func (c *Client) CallTool(ctx context.Context, name string, args any) (ToolResult, error) {
	if args == nil {
		args = map[string]any{}
	}
	raw, err := c.Call(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
	var r ToolResult
	if err != nil {
		return r, err
	}
	return r, jsonx.Unmarshal(raw, &r)
}

// Close closes the server's input and waits for it to exit (up to 2 s,
// then it is killed).
func (c *Client) Close() error {
	c.w.Close()
	if c.cmd == nil {
		<-c.done
		return nil
	}
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	select {
	case err := <-exited:
		return err
	case <-time.After(2 * time.Second):
		_ = c.cmd.Process.Kill()
		return fmt.Errorf("mcpclient: server did not exit within 2s of EOF; killed: %v", <-exited)
	}
}
