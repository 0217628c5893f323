// Command herdr-link is the herdr-link/1 MCP server for agents running in
// Herdr panes (package cmd/herdr-link/herdrlink).
//
//	herdr-link                 serve MCP on stdio (what an MCP host runs)
//	herdr-link probe           diagnose the Herdr socket of this pane
//	herdr-link config HOST     the snippet that registers herdr-link with a host
//	herdr-link version         print the version
//	herdr-link help [command]  usage, or one command's flags
package main

import (
	"os"

	"github.com/herdr-link/herdr-link/cmd/herdr-link/herdrlink"
)

func main() { os.Exit(herdrlink.Main()) }
