#!/usr/bin/env bash
# Builds herdr-link and herdr-sim, installs the pinned TypeScript MCP SDK and
# runs the round trip of scripts/ts/conformance.mjs. Exits non-zero on any
# failed check.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/" "$root/cmd/herdr-link" "$root/cmd/herdr-sim"
cd "$root/scripts/ts"
npm ci --no-audit --no-fund --loglevel=error
node conformance.mjs "$bin/herdr-link" "$bin/herdr-sim"
