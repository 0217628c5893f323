// Command herdr-sim is a faithful stand-in for Herdr's socket API and for
// the herdr CLI's agent and pane verbs, and runs herdr-link's demo on an
// embedded simulator (package cmd/herdr-sim/herdrsim).
//
//	herdr-sim serve [flags]   a simulated Herdr socket
//	herdr-sim demo            three agents over MCP on an embedded simulator
//	herdr-sim help            every verb
package main

import (
	"os"

	"github.com/herdr-link/herdr-link/cmd/herdr-sim/herdrsim"
)

func main() { os.Exit(herdrsim.Main()) }
