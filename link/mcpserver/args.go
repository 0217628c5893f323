package mcpserver

import (
	"bytes"
	"errors"
	"slices"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link"
)

// parsedCall is a tools/call reduced to one operation.
type parsedCall struct {
	tool   string
	action string // activate, peers, send, close
	send   link.SendRequest
	start  link.StartRequest
	agent  string
	wait   waitArgs
	// progress reports a wait's progress (nil: the client did not ask).
	progress func(time.Duration)
}

// waitArgs are the arguments of wait.
type waitArgs struct {
	id      string
	timeout time.Duration
}

// Argument errors. Their text is fixed: arguments are never echoed back.
var (
	errArgsObject = errors.New("arguments must be a JSON object")
	errSendArgs   = errors.New(`send needs {"to": string, "message": string, "reply_to"?: string, "when"?: "idle" | "now", "expect_reply"?: boolean}`)
	errCloseArgs  = errors.New(`close needs {"agent": string}`)
	errWaitArgs   = errors.New(`wait needs {"id": string, "timeout_s"?: number of seconds, at most 50}`)
	errAction     = errors.New(`action must be one of "activate", "peers", "start", "send", "wait", "close"`)

	// A key the tool does not take (keys match exactly: "To" is not "to").
	errPeersKeys   = errors.New(`peers takes no arguments (keys match exactly)`)
	errSendKeys    = errors.New(`send takes only "to", "message", "reply_to", "when" and "expect_reply" (keys match exactly)`)
	errCloseKeys   = errors.New(`close takes only "agent" (keys match exactly)`)
	errWaitKeys    = errors.New(`wait takes only "id" and "timeout_s" (keys match exactly)`)
	errGatewayKeys = errors.New(`herdr_link takes only "action", "arguments" and the fields of its actions (keys match exactly)`)
)

// actionKeys are the argument keys of each action.
var actionKeys = map[string][]string{
	"peers": nil,
	"send":  {"to", "message", "reply_to", "when", "expect_reply"},
	"close": {"agent"},
	"wait":  {"id", "timeout_s"},
}

var keysErr = map[string]error{"peers": errPeersKeys, "send": errSendKeys, "close": errCloseKeys, "wait": errWaitKeys}

var gatewayKeys = []string{"action", "arguments", "to", "message", "reply_to", "when", "expect_reply", "id", "timeout_s", "agent", "name", "kind", "args", "placement", "beside", "cwd"}

// only reports whether every key of a is one of keys.
func (a rawArgs) only(keys []string) bool {
	for k := range a {
		if !slices.Contains(keys, k) {
			return false
		}
	}
	return true
}

type rawArgs map[string]jsonx.RawMessage

func objectArgs(raw jsonx.RawMessage) (rawArgs, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return rawArgs{}, nil
	}
	if t[0] != '{' {
		return nil, errArgsObject
	}
	var m rawArgs
	if err := jsonx.Unmarshal(t, &m); err != nil {
		return nil, errArgsObject
	}
	return m, nil
}

// str reads an optional string field; null counts as absent.
func (a rawArgs) str(key string) (string, bool, error) {
	v, ok := a[key]
	if !ok || string(bytes.TrimSpace(v)) == "null" {
		return "", false, nil
	}
	var s string
	if err := jsonx.Unmarshal(v, &s); err != nil {
		return "", true, err
	}
	return s, true, nil
}

func parseSend(a rawArgs) (link.SendRequest, error) {
	to, okTo, err1 := a.str("to")
	msg, okMsg, err2 := a.str("message")
	rt, _, err3 := a.str("reply_to")
	when, okWhen, err4 := a.str("when")
	if !okTo || !okMsg || err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return link.SendRequest{}, errSendArgs
	}
	req := link.SendRequest{To: to, Message: msg, ReplyTo: rt}
	if v, ok := a["expect_reply"]; ok && string(bytes.TrimSpace(v)) != "null" {
		var b bool
		if jsonx.Unmarshal(v, &b) != nil {
			return link.SendRequest{}, errSendArgs
		}
		req.ExpectReply = &b
	}
	if okWhen {
		w, err := link.ParseWhen(when)
		if err != nil {
			return link.SendRequest{}, errSendArgs
		}
		req.When = w
	}
	return req, nil
}

func parseWait(a rawArgs) (waitArgs, error) {
	id, ok, err := a.str("id")
	if !ok || err != nil {
		return waitArgs{}, errWaitArgs
	}
	w := waitArgs{id: id}
	if v, ok := a["timeout_s"]; ok && string(bytes.TrimSpace(v)) != "null" {
		var secs float64
		if jsonx.Unmarshal(v, &secs) != nil || secs < 0 || secs > link.MaxWaitTimeout.Seconds() {
			return waitArgs{}, errWaitArgs
		}
		w.timeout = time.Duration(secs * float64(time.Second))
		if w.timeout == 0 {
			w.timeout = time.Millisecond // 0: look once
		}
	}
	return w, nil
}

func parseClose(a rawArgs) (string, error) {
	agent, ok, err := a.str("agent")
	if !ok || err != nil {
		return "", errCloseArgs
	}
	return agent, nil
}

func parseAction(c *parsedCall, action string, a rawArgs, checkKeys bool) error {
	c.action = action
	if keys, ok := actionKeys[action]; ok && checkKeys && !a.only(keys) {
		return keysErr[action]
	}
	switch action {
	case "peers":
		return nil
	case "send":
		var err error
		c.send, err = parseSend(a)
		return err
	case "close":
		var err error
		c.agent, err = parseClose(a)
		return err
	case "wait":
		var err error
		c.wait, err = parseWait(a)
		return err
	case "start":
		var err error
		c.start, err = parseStart(a, c.tool == ToolGateway)
		return err
	}
	return errAction
}

func parseCall(tool string, raw jsonx.RawMessage) (parsedCall, error) {
	c := parsedCall{tool: tool}
	a, err := objectArgs(raw)
	if err != nil {
		return c, err
	}
	switch tool {
	case ToolPeers:
		return c, parseAction(&c, "peers", a, true)
	case ToolSend:
		return c, parseAction(&c, "send", a, true)
	case ToolClose:
		return c, parseAction(&c, "close", a, true)
	case ToolStart:
		return c, parseAction(&c, "start", a, true)
	case ToolWait:
		return c, parseAction(&c, "wait", a, true)
	}
	// The gateway: its own keys at the top level, the action's keys when
	// nested under "arguments".
	if !a.only(gatewayKeys) {
		return c, errGatewayKeys
	}
	action, _, err := a.str("action")
	if err != nil {
		return c, errAction
	}
	if action == "" || action == "activate" {
		c.action = "activate"
		return c, nil
	}
	inner, nested := a, false
	if v, ok := a["arguments"]; ok && string(bytes.TrimSpace(v)) != "null" {
		if inner, err = objectArgs(v); err != nil {
			return c, err
		}
		nested = true
	}
	return c, parseAction(&c, action, inner, nested)
}
