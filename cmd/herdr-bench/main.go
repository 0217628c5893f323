// Command herdr-bench measures herdr-link: peer resolution and tool calls
// by socket, by the herdr CLI and over MCP, against a relay floor
// (package cmd/herdr-bench/bench).
package main

import (
	"os"

	"github.com/herdr-link/herdr-link/cmd/herdr-bench/bench"
)

func main() { os.Exit(bench.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
