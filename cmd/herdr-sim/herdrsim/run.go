// Package herdrsim is the herdr-sim command: a faithful stand-in for Herdr 0.8.2's socket API
// (package socket/sockettest as a command), and a stand-in for the herdr
// CLI's agent and pane verbs, so tools that drive either can run without
// Herdr.
//
//	herdr-sim serve [--socket PATH] [--world FILE] [--poll-read] [--protocol N] [--fault METHOD:KIND[=ARG]]... [--command PANE=JSON-ARGV]...
//	herdr-sim agent list | get T | prompt T TEXT [--wait [--until S]... [--timeout MS]] | rename T NAME|--clear | send-keys T KEY...
//	herdr-sim pane list [--workspace W] | get ID | close ID | read ID [--lines N]
//	herdr-sim pane send-text ID TEXT... | send-keys ID KEY... | run ID COMMAND...
//	herdr-sim pane report-agent ID --source S --agent A --state idle|working|blocked|unknown [--message M] [--seq N]
//	herdr-sim workspace list | tab list [--workspace W] | api snapshot
//	herdr-sim world
//	herdr-sim turns [--socket PATH] PANE_ID
//	herdr-sim record [--events D] FILE | validate SCHEMA_FILE | verify FILE
//	herdr-sim demo [--world FILE] [-v] [--link PATH]
//
// The CLI verbs behave like herdr's: a ping to check the protocol, then the
// request, each on its own connection to HERDR_SOCKET_PATH (or the default
// socket); the response JSON on stdout and exit 0; a server error as JSON on
// stderr and exit 1; usage errors exit 2.
package herdrsim

import (
	"fmt"
	"io"
	"os"

	"github.com/herdr-link/herdr-link/cmd/herdr-sim/demo"
	"github.com/herdr-link/herdr-link/internal/buildinfo"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// Main is herdr-sim on the process's arguments; it returns the exit code.
func Main() int { return Run(os.Args[1:], os.Stdout, os.Stderr) }

const usage = `herdr-sim: a simulated Herdr 0.8.2 socket, and the herdr CLI's verbs against it.

usage:
  herdr-sim serve [flags]           serve a simulated Herdr socket until SIGINT/SIGTERM
  herdr-sim world                   print the built-in world file
  herdr-sim turns PANE_ID           print what the agent in a pane of a running serve received
  herdr-sim record FILE             record read-only calls against the live Herdr (ids and names replaced)
  herdr-sim validate SCHEMA_FILE    check the live Herdr's answers against a Herdr schema document
  herdr-sim verify FILE             replay a herdr-sim record recording; report structural differences
  herdr-sim demo [flags]            three agents' herdr-link MCP servers talking on an embedded simulator
  herdr-sim agent list|get|prompt|rename|send-keys ...   the herdr CLI's agent verbs
  herdr-sim pane list|get|close|read ...       the herdr CLI's pane verbs
  herdr-sim pane send-text|send-keys|run|report-agent ...   type, press keys, report an agent's state
  herdr-sim workspace list | tab list | api snapshot
  herdr-sim version                 print the version (also --version)
  herdr-sim help [serve|turns|demo] print this text, or a command's flags
`

// Run runs herdr-sim with args (without the program name) and returns the
// exit code.
func Run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], stdout, stderr)
	case "world":
		fmt.Fprintln(stdout, sockettest.DefaultWorldJSON)
		return 0
	case "turns":
		return turns(args[1:], stdout, stderr)
	case "record":
		return record(args[1:], stdout, stderr)
	case "validate":
		return validate(args[1:], stdout, stderr)
	case "verify":
		return verify(args[1:], stdout, stderr)
	case "demo":
		return demo.Run(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[1] == "serve" {
			return serve([]string{"-h"}, stdout, stderr)
		}
		if len(args) > 1 && args[1] == "demo" {
			return demo.Run([]string{"-h"}, stdout, stderr)
		}
		if len(args) > 1 && args[1] == "turns" {
			return turns([]string{"-h"}, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return 0
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, "herdr-sim", buildinfo.Version())
		return 0
	}
	return cli(args, stdout, stderr)
}
