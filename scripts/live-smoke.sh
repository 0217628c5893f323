#!/usr/bin/env bash
# Smoke test against the live Herdr of this pane (or HERDR_SOCKET_PATH):
# read-only socket calls, the probe, and the MCP handshake. Changes nothing
# in Herdr except, when this pane's agent is unnamed, nothing either: the
# MCP server is started with -no-bootstrap.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
go build -o bin/ ./cmd/herdr-link ./cmd/herdr-sim
HERDR_LINK_LIVE=1 go test -count=1 -run TestLiveHerdr -v ./socket/
bin/herdr-link probe
bin/herdr-link probe --mcp bin/herdr-link serve -no-bootstrap
