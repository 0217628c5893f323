#!/usr/bin/env bash
# Smoke test against the live Herdr of this pane (or HERDR_SOCKET_PATH):
# read-only socket calls, the probe, and the MCP handshake. It changes
# nothing in Herdr: the MCP server runs with -no-bootstrap, so an unnamed
# agent stays unnamed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
go build -o bin/ ./cmd/herdr-link ./cmd/herdr-sim ./cmd/herdr-bench
HERDR_LINK_LIVE=1 go test -count=1 -run TestLiveHerdr -v ./socket/
bin/herdr-link probe
bin/herdr-bench mcp bin/herdr-link serve -no-bootstrap
