package link

import (
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/herdr-link/herdr-link/socket"
)

// Gate is the environment check: HERDR_ENV=1, a HERDR_PANE_ID, and a
// resolvable Herdr socket path. getenv is os.Getenv when nil.
type Gate struct {
	OK     bool
	PaneID string
	Socket socket.Resolution
	// Reason says which condition failed (operator text).
	Reason string
	// Failed names the failed condition for [Gate.Advice]: one of the
	// Failed* constants, "" when OK.
	Failed string
}

// CheckGate evaluates the environment gate.
func CheckGate(getenv func(string) string) Gate {
	if getenv == nil {
		getenv = os.Getenv
	}
	var g Gate
	g.PaneID = getenv(socket.EnvPaneID)
	res, err := socket.ResolvePath(getenv)
	g.Socket = res
	switch {
	case inHerdrCore(getenv):
		g.Reason, g.Failed = "a herdr-core terminal (HC_TERMINAL_ID is set, HERDR_ENV and HERDR_PANE_ID are not), whose socket this herdr-link does not speak", FailedHerdrCore
	case getenv(socket.EnvHerdr) == "":
		g.Reason, g.Failed = "HERDR_ENV is not set", FailedHerdrEnv
	case getenv(socket.EnvHerdr) != "1":
		g.Reason, g.Failed = "HERDR_ENV is not 1", FailedHerdrEnvValue
	case g.PaneID == "":
		g.Reason, g.Failed = "HERDR_PANE_ID is not set", FailedPaneID
	case err != nil:
		g.Reason, g.Failed = err.Error(), FailedSocketPath
	default:
		g.OK = true
	}
	return g
}

// The conditions of the environment gate, as [Gate.Failed] names them.
const (
	FailedHerdrEnv      = "HERDR_ENV"         // HERDR_ENV is not set
	FailedHerdrEnvValue = "HERDR_ENV_VALUE"   // HERDR_ENV is set, but not to 1
	FailedPaneID        = "HERDR_PANE_ID"     // HERDR_PANE_ID is not set
	FailedSocketPath    = "HERDR_SOCKET_PATH" // no socket path can be worked out
	FailedSocket        = "socket"            // nothing is listening at the resolved path
	FailedHerdrCore     = "HC_TERMINAL_ID"    // a herdr-core terminal, not a Herdr TUI pane
)

// The variables herdr-core (hc, the terminal runtime of Herdr's desktop
// app) sets in each of its terminals. herdr-core speaks its own socket
// protocol, not the Herdr TUI's that herdr-link dials.
const (
	EnvCoreTerminal = "HC_TERMINAL_ID"
	EnvCoreSession  = "HC_SESSION"
)

// inHerdrCore reports a herdr-core terminal: HC_TERMINAL_ID is set and
// neither of the Herdr TUI's pane variables is. Where both are set (a
// Herdr TUI run inside a herdr-core terminal) the TUI's pane wins.
func inHerdrCore(getenv func(string) string) bool {
	return getenv(EnvCoreTerminal) != "" && getenv(socket.EnvHerdr) == "" && getenv(socket.EnvPaneID) == ""
}

// HerdrCoreFix is the fix of a herdr-core terminal, as probe shows it.
const HerdrCoreFix = "herdr-core terminals are not supported yet: this herdr-link speaks the Herdr TUI's socket; start the agent in a pane of the Herdr TUI (herdr)"

// herdrCoreAdvice names herdr-core as what this process runs in and says
// it is not supported yet; nothing there is the host's fault, so it
// gives no host fix.
const herdrCoreAdvice = "this is a herdr-core terminal (HC_TERMINAL_ID is set; the Herdr desktop app runs its terminals on herdr-core). This herdr-link speaks the Herdr TUI's socket, and herdr-core terminals are not supported yet. To use it, start the agent in a pane of the Herdr TUI (herdr)."

// CheckSocket completes a passed gate with a look at the resolved socket
// path: when no Unix socket exists there, the gate fails with
// [FailedSocket]. It does not connect (no Herdr I/O at start-up). stat is
// os.Stat when nil.
func (g *Gate) CheckSocket(stat func(string) (fs.FileInfo, error)) {
	if !g.OK {
		return
	}
	if stat == nil {
		stat = os.Stat
	}
	fi, err := stat(g.Socket.Path)
	switch {
	case err != nil:
		g.Reason = fmt.Sprintf("no Herdr socket at %s (chosen by %s): %v", g.Socket.Path, g.Socket.Rule, err)
	case fi.Mode()&fs.ModeSocket == 0:
		g.Reason = fmt.Sprintf("%s (chosen by %s) is not a socket", g.Socket.Path, g.Socket.Rule)
	default:
		return
	}
	g.OK, g.Failed = false, FailedSocket
}

// CodexEnvVars are the variables Codex must be told to pass through to
// herdr-link (its env_vars): Herdr's, those the default socket path is
// found with, and HC_TERMINAL_ID, so that a herdr-core terminal is named
// as such rather than as a host that passed nothing on. Codex passes only
// a whitelist of variables otherwise.
var CodexEnvVars = []string{"HERDR_ENV", "HERDR_PANE_ID", "HERDR_SOCKET_PATH", "HERDR_SESSION", "XDG_CONFIG_HOME", "HOME", EnvCoreTerminal}

// CodexEnvVarsLine is the env_vars line of Codex's configuration.
func CodexEnvVarsLine() string {
	q := make([]string, len(CodexEnvVars))
	for i, v := range CodexEnvVars {
		q[i] = `"` + v + `"`
	}
	return "env_vars = [" + strings.Join(q, ", ") + "]"
}

// Advice explains to a user why the gate failed and how to fix it: the
// initialize result's instructions and the NOT_IN_HERDR detail outside
// Herdr. It names conditions and variables, never ids or paths. It is ""
// when the gate passed.
func (g Gate) Advice() string {
	const head = "Herdr Link offers no tools here: "
	hostFix := " If this agent does run in a Herdr pane, its host did not pass Herdr's environment to this MCP server: in Codex add " +
		CodexEnvVarsLine() + " to [mcp_servers.herdr_link] (herdr-link config codex prints the whole entry); other hosts pass the environment on by default."
	const probe = " Run herdr-link probe in the agent's pane to check every step."
	switch g.Failed {
	case "":
		return ""
	case FailedHerdrCore:
		return head + herdrCoreAdvice
	case FailedHerdrEnv:
		return head + "HERDR_ENV is not set, so this is not a Herdr pane (Herdr sets HERDR_ENV=1 in each of its panes). Start the agent inside Herdr to use it." + hostFix + probe
	case FailedHerdrEnvValue:
		return head + "HERDR_ENV is set, but not to 1, so this is not treated as a Herdr pane. Start the agent in a Herdr pane, or unset the variable where it was overridden." + probe
	case FailedPaneID:
		return head + "HERDR_ENV=1 is set but HERDR_PANE_ID is not, so herdr-link cannot tell which pane it runs in." + hostFix + probe
	case FailedSocketPath:
		return head + "Herdr's socket cannot be located (neither HERDR_SOCKET_PATH nor HOME nor XDG_CONFIG_HOME is set)." + hostFix + probe
	case FailedSocket:
		if g.Socket.Rule == socket.RuleSocketPath {
			// The host did pass Herdr's environment on (the variable is
			// here): what is wrong is the path it holds.
			return head + "no Herdr socket exists at the path HERDR_SOCKET_PATH names, so Herdr is not reachable through it. Check that Herdr is running and that the variable holds its socket: a Herdr restarted since this agent started may listen elsewhere, and a value set by hand may be stale." + probe
		}
		return head + "no Herdr socket exists at " + socketWhere(g.Socket.Rule) + ", so Herdr is not reachable. Check that Herdr is running; if it runs a named session or a custom socket, pass HERDR_SOCKET_PATH and HERDR_SESSION to this server too." + hostFix + probe
	}
	return head + g.Reason
}

func socketWhere(rule string) string {
	switch rule {
	case socket.RuleSocketPath:
		return "the path HERDR_SOCKET_PATH names"
	case socket.RuleSession:
		return "the socket path of the session HERDR_SESSION names"
	}
	return "the default socket path (HERDR_SOCKET_PATH was not passed)"
}
