package mcpserver

import (
	"strings"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link"
)

// Tool names.
const (
	ToolGateway = "herdr_link"
	ToolPeers   = "herdr_link_peers"
	ToolSend    = "herdr_link_send"
	ToolClose   = "herdr_link_close"
	ToolStart   = "herdr_link_start"
	ToolWait    = "herdr_link_wait"
)

// annotations are MCP tool annotations. Every hint is explicit: a host
// that auto-approves read-only tools must never see a tool that can send
// or close claim to be read-only (see effects_test.go).
type annotations struct {
	Title           string `json:"title"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	DestructiveHint bool   `json:"destructiveHint"`
	IdempotentHint  bool   `json:"idempotentHint"`
	OpenWorldHint   bool   `json:"openWorldHint"`
}

type tool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title"`
	Description  string           `json:"description"`
	InputSchema  jsonx.RawMessage `json:"inputSchema"`
	OutputSchema jsonx.RawMessage `json:"outputSchema,omitempty"`
	Annotations  annotations      `json:"annotations"`
}

// Tool descriptions hold only what the model needs to pick and call that
// tool, with the one rule that applies to it. The Communication Contract
// is not repeated here: it comes once per connection, in the result of
// the call that activates Herdr Link (PROTOCOL.md §6).
const (
	dormantDescription = `Herdr Link: work with the other AI agents of this Herdr workspace: find, start, message, answer and close them. Call it with {} to activate when the user asks you to coordinate with agents in Herdr, or when text carries a JSON envelope with "protocol": "herdr-link/1" (a message from another agent).`

	// instructionsInHerdr is the initialize result's instructions in a
	// Herdr pane. Claude Code puts it in its system prompt and Codex makes
	// it the description of the server's namespace, so it stays short.
	instructionsInHerdr = `Herdr Link connects you with the other AI agents of this Herdr workspace; call the herdr_link tool with {} to start.`

	activeGatewayDescription = `Herdr Link is active. Until your host shows herdr_link_peers, _start, _send, _wait and _close (a step later, maybe under a prefix or namespace), call this with {"action":"peers"}, or "start", "send", "wait", "close" and that tool's fields.`

	peersDescription = `The other live, named agents of your Herdr workspace and their state.`

	sendDescription = `Message an agent of your Herdr workspace by name. To answer a herdr-link/1 message, send to its "from" with reply_to = its "id". A busy agent gets it once ready; "when":"now" interrupts.`

	startDescription = `Start agent "name" in your workspace: "kind" with "args" or a configured "agent"; opens beside you or "beside" a peer, waits until ready, sends "message".`

	waitDescription = `Wait for a request's outcome: replied (its reply is your next turn), handled, blocked, gone or expired; pending at timeout_s.`

	closeDescription = `Close a finished agent's pane. Send any last message first, close in a later step.`
)

// gatewayUsage explains the gateway's actions. It is part of the result
// that activates Herdr Link, once per connection, so hosts that list tools
// late, under a prefix or namespace, or never, still get all they need.
const gatewayUsage = `The herdr_link_peers, herdr_link_start, herdr_link_send, herdr_link_wait and herdr_link_close tools may appear only from your next step on, and your host may show them with a prefix or in a namespace (for example mcp__herdr_link__herdr_link_send or herdr_link_herdr_link_send). Until you see them, and whenever you prefer, call this herdr_link tool with an action; it does the same:
- {"action":"peers"}: the agents of your workspace, {"self":{"name","state"},"peers":[{"name","state"}]}, a peer with "held" (your messages waiting for it) and "awaiting_reply" (your requests it has not answered).
- {"action":"start","name":"<name>","kind":"<kind>"} (or "agent":"<a key of .agents/agent_config.json>"), optional "args":[…], "placement":"right"|"down"|"tab", "beside":"<peer>", "cwd", "message": starts a new agent of your workspace and waits until it is ready: {"status":"started","agent","state"}, with "id" and "delivery" when it sent "message".
- {"action":"send","to":"<name>","message":"<text>"}, with "reply_to":"<id>" when answering, "when":"now" to interrupt a busy agent (by default it waits until the agent is ready: "delivery":"held"), "expect_reply": true or false to say whether it is a request (by default: when it has no reply_to): {"status":"sent","id","to","delivery"}.
- {"action":"wait","id":"<id>"}, optional "timeout_s" (default 30, at most 50): waits until a message you sent without reply_to (a request) has its outcome: {"id","peer","state"}, state replied (its reply arrives as your next turn, not here), handled (its turn ended without a reply), blocked, gone, expired, not_submitted (it sits unsent in the agent's input box: tell your user), or pending at the timeout.
- {"action":"close","agent":"<name>"}: {"status":"closed","agent"}.
The fields may also be nested, as in {"action":"send","arguments":{"to":"<name>","message":"<text>"}}. Failures read "CODE: detail", CODE one of NOT_IN_HERDR, SELF_UNNAMED, PEER_NOT_FOUND, SEND_FAILED, CLOSE_FAILED, INVALID_ARGUMENT, and for start START_INPUT_INVALID, START_CONFIG_NOT_FOUND, START_CONFIG_INVALID, START_AGENT_NOT_FOUND, START_NAME_TAKEN, START_FAILED.`

const (
	emptyInput   = `{"type":"object","properties":{}}`
	gatewayInput = `{"type":"object","properties":{` +
		`"action":{"type":"string","enum":["activate","peers","start","send","wait","close"]},` +
		`"arguments":{"type":"object"},` +
		`"to":{"type":"string"},"message":{"type":"string"},"reply_to":{"type":"string"},"when":{"enum":["idle","now"]},"id":{"type":"string"},"agent":{"type":"string"}}}`
	sendInput = `{"type":"object","properties":{"to":{"type":"string"},"message":{"type":"string"},"reply_to":{"type":"string"},"when":{"enum":["idle","now"]}},` +
		`"required":["to","message"]}`
	startInput = `{"type":"object","properties":{"name":{"type":"string"},` +
		`"kind":{"type":"string"},"agent":{"type":"string"},"args":{"type":"array","items":{"type":"string"}},` +
		`"placement":{"enum":["right","down","tab"]},"beside":{"type":"string"},"cwd":{"type":"string"},"message":{"type":"string"}},` +
		`"required":["name"]}`
	closeInput = `{"type":"object","properties":{"agent":{"type":"string"}},"required":["agent"]}`
	waitInput  = `{"type":"object","properties":{"id":{"type":"string"},"timeout_s":{"type":"number"}},"required":["id"]}`

	peerSchema  = `{"type":"object","properties":{"name":{"type":"string"},"state":{"type":"string","enum":["idle","working","blocked","done","unknown"]},"held":{"type":"integer"}},"required":["name","state"]}`
	peersOutput = `{"type":"object","properties":{"self":` + peerSchema + `,"peers":{"type":"array","items":` + peerSchema + `}},"required":["self","peers"]}`
	sendOutput  = `{"type":"object","properties":{"status":{"const":"sent"},"id":{"type":"string"},"to":{"type":"string"},` +
		`"delivery":{"enum":["submitted","held","queued","interrupting","unconfirmed","not_submitted"],"description":"submitted: a turn started with it; held: typed when the agent is ready; queued: read when the busy agent's turn ends; interrupting: it interrupted the agent's turn; unconfirmed: no sign yet; not_submitted: it sits unsent in the agent's input box, tell your user. Never resend because of it."}},` +
		`"required":["status","id","to","delivery"]}`
	startOutput  = `{"type":"object","properties":{"status":{"const":"started"},"agent":{"type":"string"},"state":{"type":"string"},"id":{"type":"string"},"delivery":{"type":"string"}},"required":["status","agent","state"]}`
	waitOutput   = `{"type":"object","properties":{"id":{"type":"string"},"peer":{"type":"string"},"state":{"enum":["pending","replied","handled","blocked","gone","expired","cancelled","not_submitted"]}},"required":["id","peer","state"]}`
	closeOutput  = `{"type":"object","properties":{"status":{"const":"closed"},"agent":{"type":"string"}},"required":["status","agent"]}`
	gatewayOuput = `{"type":"object","properties":{"status":{"type":"string"},"capabilities":{"type":"array","items":{"type":"string"}},"contract":{"type":"string"},"usage":{"type":"string"},"self":{"type":"object"},"peers":{"type":"array"},"id":{"type":"string"},"to":{"type":"string"},"delivery":{"type":"string"},"agent":{"type":"string"},"peer":{"type":"string"},"state":{"type":"string"}}}`
)

// The annotations of each tool. The gateway can do everything the Tier-1
// tools do, so it carries the union of their effects: it writes (send),
// destroys (close) and is not idempotent (every send is a new message).
// close is not idempotent either: a name can pass to a new agent between
// two calls.
var (
	gatewayAnnotations = annotations{Title: "Herdr Link", DestructiveHint: true}
	peersAnnotations   = annotations{Title: "Herdr Link: list peers", ReadOnlyHint: true, IdempotentHint: true}
	sendAnnotations    = annotations{Title: "Herdr Link: send a message"}
	startAnnotations   = annotations{Title: "Herdr Link: start an agent"}
	waitAnnotations    = annotations{Title: "Herdr Link: wait for an outcome", ReadOnlyHint: true}
	closeAnnotations   = annotations{Title: "Herdr Link: close an agent's pane", DestructiveHint: true}
)

func gatewayTool(active bool) tool {
	d := dormantDescription
	if active {
		d = activeGatewayDescription
	}
	return tool{Name: ToolGateway, Title: "Herdr Link", Description: d, InputSchema: jsonx.RawMessage(gatewayInput),
		OutputSchema: jsonx.RawMessage(gatewayOuput), Annotations: gatewayAnnotations}
}

var tier1 = []tool{
	{Name: ToolPeers, Title: "Herdr Link: list peers", Description: peersDescription,
		InputSchema: jsonx.RawMessage(emptyInput), OutputSchema: jsonx.RawMessage(peersOutput), Annotations: peersAnnotations},
	{Name: ToolStart, Title: "Herdr Link: start an agent", Description: startDescription,
		InputSchema: jsonx.RawMessage(startInput), OutputSchema: jsonx.RawMessage(startOutput), Annotations: startAnnotations},
	{Name: ToolSend, Title: "Herdr Link: send a message", Description: sendDescription,
		InputSchema: jsonx.RawMessage(sendInput), OutputSchema: jsonx.RawMessage(sendOutput), Annotations: sendAnnotations},
	{Name: ToolWait, Title: "Herdr Link: wait for an outcome", Description: waitDescription,
		InputSchema: jsonx.RawMessage(waitInput), OutputSchema: jsonx.RawMessage(waitOutput), Annotations: waitAnnotations},
	{Name: ToolClose, Title: "Herdr Link: close an agent's pane", Description: closeDescription,
		InputSchema: jsonx.RawMessage(closeInput), OutputSchema: jsonx.RawMessage(closeOutput), Annotations: closeAnnotations},
}

// toolList returns the tools of a surface state. Output schemas are only
// part of revisions from 2025-06-18 on.
func toolList(gated, active, structured bool) []tool {
	var out []tool
	switch {
	case !gated:
		out = []tool{}
	case !active:
		out = []tool{gatewayTool(false)}
	default:
		out = append([]tool{gatewayTool(true)}, tier1...)
	}
	if !structured {
		for i := range out {
			out[i].OutputSchema = nil
		}
	}
	return out
}

func knownTool(name string) bool {
	return name == ToolGateway || name == ToolPeers || name == ToolStart || name == ToolSend || name == ToolWait || name == ToolClose
}

// activation is the gateway's answer to {} or {"action":"activate"}.
// Contract and Usage are set only in the result that activates the
// connection; later activations just confirm.
type activation struct {
	Status       string   `json:"status"`
	Capabilities []string `json:"capabilities"`
	Contract     string   `json:"contract,omitempty"`
	Usage        string   `json:"usage,omitempty"`
}

var capabilities = []string{"peers", "start", "send", "wait", "close"}

const activeHead = `{"status":"active","capabilities":["peers","start","send","wait","close"]}`

// activationResult is the result of an explicit activation; withContract
// is true for the first result of the connection.
func activationResult(withContract bool) (string, activation) {
	if !withContract {
		return activeHead + "\n\nHerdr Link is already active; its rules came with the first Herdr Link result of this session.",
			activation{Status: "active", Capabilities: capabilities}
	}
	return activeHead + "\n\n" + contractText(), activation{Status: "active", Capabilities: capabilities, Contract: link.Contract, Usage: gatewayUsage}
}

// contractText is what the first result of a connection adds for hosts
// that show text content: the contract and how to use the gateway.
func contractText() string {
	var b strings.Builder
	b.WriteString("Herdr Link is active for this session. Its rules, given once:\n\n")
	b.WriteString(link.Contract)
	b.WriteString("\n\n")
	b.WriteString(gatewayUsage)
	return b.String()
}
