#!/usr/bin/env bash
# Runs every fuzz target of the module for N seconds each (default 20).
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-20}"
for pkg in $(go list ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    echo "== $pkg $target"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "${secs}s" "$pkg"
  done
done
