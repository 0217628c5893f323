package herdrsim

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/herdr-link/herdr-link/schema"
)

// The herdr CLI's input verbs (upstream src/cli/pane.rs pane_send_text,
// pane_send_keys, pane_run, pane_report_agent; src/cli/agent.rs
// agent_send_keys). The pane verbs send id "cli:request" and print
// nothing on success; agent send-keys prints the response.

// usageError is a command-line error with herdr's own wording: exit 2, or
// exit 1 with "Error: " for a value herdr fails to parse.
type usageError struct {
	msg    string
	failed bool
}

func (e *usageError) Error() string { return e.msg }

func parseInputCLI(group, verb string, rest []string) (cliRequest, bool, error) {
	switch group + " " + verb {
	case "pane send-text", "pane run":
		if len(rest) < 2 {
			arg := "text"
			if verb == "run" {
				arg = "command"
			}
			return cliRequest{}, true, &usageError{msg: "usage: herdr pane " + verb + " <pane_id> <" + arg + ">"}
		}
		text := strings.Join(rest[1:], " ")
		if verb == "run" {
			return cliRequest{okRequestID, schema.MethodPaneSendInput, schema.PaneSendInputParams{PaneID: rest[0], Text: text, Keys: []string{"Enter"}}}, true, nil
		}
		return cliRequest{okRequestID, schema.MethodPaneSendText, schema.PaneSendTextParams{PaneID: rest[0], Text: text}}, true, nil
	case "pane send-keys":
		if len(rest) < 2 {
			return cliRequest{}, true, &usageError{msg: "usage: herdr pane send-keys <pane_id> <key> [key ...]"}
		}
		return cliRequest{okRequestID, schema.MethodPaneSendKeys, schema.PaneSendKeysParams{PaneID: rest[0], Keys: rest[1:]}}, true, nil
	case "agent send-keys":
		if len(rest) < 2 {
			return cliRequest{}, true, &usageError{msg: "usage: herdr agent send-keys <target> <key> [key ...]"}
		}
		return cliRequest{"cli:agent:send-keys", schema.MethodAgentSendKeys, schema.AgentSendKeysParams{Target: rest[0], Keys: rest[1:]}}, true, nil
	case "pane report-agent":
		r, err := parseReportAgent(rest)
		return r, true, err
	}
	return cliRequest{}, false, nil
}

const reportAgentUsage = "usage: herdr pane report-agent <pane_id> --source ID --agent LABEL --state idle|working|blocked|unknown [--message TEXT] [--seq N] [--agent-session-id ID] [--agent-session-path PATH]"

// Long: one flag loop with herdr's own message for each missing value.
func parseReportAgent(args []string) (cliRequest, error) {
	if len(args) == 0 {
		return cliRequest{}, &usageError{msg: reportAgentUsage}
	}
	p := schema.PaneReportAgentParams{PaneID: args[0]}
	args = splitFlagValues(args)
	var source, agent, state *string
	for i := 1; i < len(args); i += 2 {
		flag := args[i]
		switch flag {
		case "--source", "--agent", "--state", "--message", "--seq", "--agent-session-id", "--agent-session-path":
		default:
			return cliRequest{}, &usageError{msg: "unknown option: " + flag}
		}
		if i+1 >= len(args) {
			return cliRequest{}, &usageError{msg: "missing value for " + flag}
		}
		v := args[i+1]
		switch flag {
		case "--source":
			source = &v
		case "--agent":
			agent = &v
		case "--state":
			switch schema.PaneAgentState(v) {
			case schema.PaneAgentStateIdle, schema.PaneAgentStateWorking, schema.PaneAgentStateBlocked, schema.PaneAgentStateUnknown:
			default:
				return cliRequest{}, &usageError{msg: fmt.Sprintf("invalid pane agent state: %s (expected idle, working, blocked, or unknown)", v), failed: true}
			}
			state = &v
		case "--message":
			p.Message = &v
		case "--seq":
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return cliRequest{}, &usageError{msg: fmt.Sprintf("invalid value for --seq: %s", v), failed: true}
			}
			p.Seq = &n
		case "--agent-session-id":
			p.AgentSessionID = &v
		case "--agent-session-path":
			p.AgentSessionPath = &v
		}
	}
	switch {
	case source == nil || strings.TrimSpace(*source) == "":
		return cliRequest{}, &usageError{msg: "missing required --source"}
	case agent == nil:
		return cliRequest{}, &usageError{msg: "missing required --agent"}
	case state == nil:
		return cliRequest{}, &usageError{msg: "missing required --state"}
	}
	p.Source, p.Agent, p.State = strings.TrimSpace(*source), *agent, schema.PaneAgentState(*state)
	return cliRequest{okRequestID, schema.MethodPaneReportAgent, p}, nil
}

// splitFlagValues turns "--flag=value" into "--flag" "value", as herdr
// does for its value options.
func splitFlagValues(args []string) []string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if f, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(f, "--") {
			out = append(out, f, v)
			continue
		}
		out = append(out, a)
	}
	return out
}
