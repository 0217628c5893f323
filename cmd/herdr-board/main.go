// Command herdr-board is a terminal view of the conversation of a Herdr
// workspace's agents: who is working, which messages wait for whom, the
// open requests, recent outcomes and notices. It is its own binary so
// that the MCP server (herdr-link) links no TUI library. See
// docs/board.md.
package main

import (
	"os"

	"github.com/herdr-link/herdr-link/cmd/herdr-board/board"
)

func main() {
	os.Exit(board.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}
