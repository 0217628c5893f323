package socket

import (
	"errors"
	"os"
	"path/filepath"
)

// Environment variables Herdr sets or reads.
const (
	EnvSocketPath = "HERDR_SOCKET_PATH"
	EnvSession    = "HERDR_SESSION"
	EnvPaneID     = "HERDR_PANE_ID"
	EnvHerdr      = "HERDR_ENV"
)

// How a socket path was chosen; see [ResolvePath].
const (
	RuleExplicit   = "explicit"          // Client.Path was set
	RuleSocketPath = "HERDR_SOCKET_PATH" // the variable, verbatim
	RuleSession    = "HERDR_SESSION"     // a named session's socket
	RuleDefault    = "default"           // the default session's socket
)

// Resolution is the outcome of [ResolvePath].
type Resolution struct {
	Path    string
	Rule    string
	Session string // the named session, for RuleSession
}

// ResolvePath finds Herdr's API socket the way the herdr CLI does
// (active_api_socket_path): HERDR_SOCKET_PATH verbatim; else the socket of
// the session HERDR_SESSION names (an invalid name is ignored, "default"
// means the default session); else the default session's socket
// <config>/herdr.sock, where <config> is $XDG_CONFIG_HOME/herdr, or
// $HOME/.config/herdr, or <tmp>/herdr. A named session's socket is
// <config>/sessions/<name>/herdr.sock. getenv is os.Getenv when nil.
func ResolvePath(getenv func(string) string) (Resolution, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if p := getenv(EnvSocketPath); p != "" {
		return Resolution{Path: p, Rule: RuleSocketPath}, nil
	}
	dir, err := configDir(getenv)
	if err != nil {
		return Resolution{}, err
	}
	if s := getenv(EnvSession); s != "" && s != "default" && ValidSessionName(s) {
		return Resolution{Path: filepath.Join(dir, "sessions", s, "herdr.sock"), Rule: RuleSession, Session: s}, nil
	}
	return Resolution{Path: filepath.Join(dir, "herdr.sock"), Rule: RuleDefault}, nil
}

func configDir(getenv func(string) string) (string, error) {
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "herdr"), nil
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "herdr"), nil
	}
	t := os.TempDir()
	if t == "" {
		return "", errors.New("socket: no XDG_CONFIG_HOME, HOME or temporary directory to find herdr.sock in")
	}
	return filepath.Join(t, "herdr"), nil
}

// ValidSessionName reports whether s is a session name Herdr accepts:
// 1–64 bytes of ASCII letters, digits, '.', '_' and '-', and not "." or "..".
func ValidSessionName(s string) bool {
	if len(s) == 0 || len(s) > 64 || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// ValidAgentName reports whether s is an agent name Herdr accepts:
// ^[a-z][a-z0-9_-]{0,31}$ (ASCII). Herdr checks it on agent.rename and
// agent.start; clients can check it first for early errors.
func ValidAgentName(s string) bool {
	if len(s) == 0 || len(s) > 32 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// StartHint is the command that starts or attaches the Herdr server this
// resolution names: "herdr", or "herdr session attach <name>" for a named
// session. Every "is Herdr running?" message uses it.
func (r Resolution) StartHint() string {
	if r.Rule == RuleSession && r.Session != "" {
		return "herdr session attach " + r.Session
	}
	return "herdr"
}
