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
)

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

const dormantDescription = `Herdr Link lets you work with the other AI agents running in this Herdr workspace: find them, message them, answer their messages, close their panes. Call it with {} to activate when the user asks you to coordinate with other agents in Herdr, or when you receive text that carries a JSON envelope with "protocol": "herdr-link/1" (a message from another agent). Activation is cheap and does nothing else.`

// gatewayUsage explains the gateway's actions; it is part of the active
// description and of the activation result, so hosts that never refresh
// their tool list still get everything they need.
const gatewayUsage = `How to call Herdr Link through this one tool (the herdr_link_* tools do the same where your host shows them):
- {"action":"peers"} lists the agents of your workspace: {"self":{"name","state"},"peers":[{"name","state"}]}.
- {"action":"send","arguments":{"to":"<name>","message":"<text>"}} sends a message; add "reply_to":"<id>" to answer a message. Returns {"status":"sent","id","to","delivery"}.
- {"action":"close","arguments":{"agent":"<name>"}} closes that agent's pane. Returns {"status":"closed","agent"}.
Fields may also be given at the top level, e.g. {"action":"send","to":"reviewer","message":"hi"}.
Failures come back as "CODE: detail" with CODE one of NOT_IN_HERDR, SELF_UNNAMED, PEER_NOT_FOUND, SEND_FAILED, CLOSE_FAILED, INVALID_ARGUMENT.`

var activeGatewayDescription = "Herdr Link (active). " + gatewayUsage + "\n\n" + link.Contract

const (
	emptyInput   = `{"type":"object","properties":{},"additionalProperties":false}`
	gatewayInput = `{"type":"object","properties":{` +
		`"action":{"type":"string","enum":["activate","peers","send","close"],"description":"What to do; omit (or \"activate\") to activate."},` +
		`"arguments":{"type":"object","description":"The action's arguments: {} for peers; to, message, reply_to for send; agent for close."},` +
		`"to":{"type":"string"},"message":{"type":"string"},"reply_to":{"type":"string"},"agent":{"type":"string"}}}`
	sendInput = `{"type":"object","properties":{` +
		`"to":{"type":"string","description":"Agent name of the recipient (from herdr_link_peers, or the \"from\" of a message you answer)."},` +
		`"message":{"type":"string","description":"What to say. Free text; JSON or YAML is fine. At least one non-whitespace character, at most 256 KiB."},` +
		`"reply_to":{"type":"string","description":"When answering a message: its \"id\"."}},` +
		`"required":["to","message"],"additionalProperties":false}`
	closeInput = `{"type":"object","properties":{"agent":{"type":"string","description":"Agent name whose pane to close."}},"required":["agent"],"additionalProperties":false}`

	peerSchema  = `{"type":"object","properties":{"name":{"type":"string"},"state":{"type":"string","enum":["idle","working","blocked","done","unknown"]}},"required":["name","state"]}`
	peersOutput = `{"type":"object","properties":{"self":` + peerSchema + `,"peers":{"type":"array","items":` + peerSchema + `}},"required":["self","peers"]}`
	sendOutput  = `{"type":"object","properties":{"status":{"const":"sent","description":"Herdr accepted the message."},"id":{"type":"string"},"to":{"type":"string"},` +
		`"delivery":{"enum":["submitted","queued","interrupting","unconfirmed"],"description":"What followed: submitted = the agent started a turn with it; queued = the agent is busy and gets it when its turn ends; interrupting = the agent was working and the message interrupted its turn (Codex); unconfirmed = no sign within the wait, or not watched; the text is in its input, do not resend."}},` +
		`"required":["status","id","to","delivery"]}`
	closeOutput  = `{"type":"object","properties":{"status":{"const":"closed"},"agent":{"type":"string"}},"required":["status","agent"]}`
	gatewayOuput = `{"type":"object","properties":{"status":{"type":"string"},"capabilities":{"type":"array","items":{"type":"string"}},"contract":{"type":"string"},"usage":{"type":"string"},"self":{"type":"object"},"peers":{"type":"array"},"id":{"type":"string"},"to":{"type":"string"},"agent":{"type":"string"}}}`
)

func gatewayTool(active bool) tool {
	d := dormantDescription
	if active {
		d = activeGatewayDescription
	}
	return tool{Name: ToolGateway, Title: "Herdr Link", Description: d, InputSchema: jsonx.RawMessage(gatewayInput),
		OutputSchema: jsonx.RawMessage(gatewayOuput),
		Annotations:  annotations{Title: "Herdr Link", ReadOnlyHint: true, IdempotentHint: true}}
}

var tier1 = []tool{
	{Name: ToolPeers, Title: "Herdr Link: list peers",
		Description: "List the live, named agents of your own Herdr workspace (yourself excluded), each with an advisory state (idle, working, blocked, done, unknown). The state is not a precondition for sending or closing.\n\n" + link.Contract,
		InputSchema: jsonx.RawMessage(emptyInput), OutputSchema: jsonx.RawMessage(peersOutput),
		Annotations: annotations{Title: "Herdr Link: list peers", ReadOnlyHint: true, IdempotentHint: true}},
	{Name: ToolSend, Title: "Herdr Link: send a message",
		Description: `Send a herdr-link/1 message to another agent of your workspace, by agent name. To answer a message, send to its "from" with reply_to set to its "id". "sent" means Herdr accepted the delivery; "delivery" then says what followed: "submitted" (a turn started with it), "queued" (the agent is busy and reads it when its turn ends), "interrupting" (a working Codex agent is interrupted by a message: its current answer is dropped and it restarts with your message), "unconfirmed" (no sign yet; do not resend). Nothing waits for a reply. Agents outside your workspace are invisible: sending to them fails with PEER_NOT_FOUND.`,
		InputSchema: jsonx.RawMessage(sendInput), OutputSchema: jsonx.RawMessage(sendOutput),
		Annotations: annotations{Title: "Herdr Link: send a message"}},
	{Name: ToolClose, Title: "Herdr Link: close an agent's pane",
		Description: `Close the pane of the agent with this name in your workspace, ending that agent. Use it only once you have decided the agent is finished; if it needs a last message, send it first and call close in a later step, after send returned "sent". Takes agent names only, never pane ids.`,
		InputSchema: jsonx.RawMessage(closeInput), OutputSchema: jsonx.RawMessage(closeOutput),
		Annotations: annotations{Title: "Herdr Link: close an agent's pane", DestructiveHint: true, IdempotentHint: true}},
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
	return name == ToolGateway || name == ToolPeers || name == ToolSend || name == ToolClose
}

// activation is the gateway's answer to {} or {"action":"activate"}.
type activation struct {
	Status       string   `json:"status"`
	Capabilities []string `json:"capabilities"`
	Contract     string   `json:"contract"`
	Usage        string   `json:"usage"`
}

func activationResult() activation {
	return activation{Status: "active", Capabilities: []string{"peers", "send", "close"}, Contract: link.Contract, Usage: gatewayUsage}
}

// activationText is the text content of the activation result.
func activationText() string {
	var b strings.Builder
	b.WriteString(`{"status":"active","capabilities":["peers","send","close"]}`)
	b.WriteString("\n\nHerdr Link is active for this session.\n\n")
	b.WriteString(link.Contract)
	b.WriteString("\n\n")
	b.WriteString(gatewayUsage)
	return b.String()
}
