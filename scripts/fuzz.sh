#!/usr/bin/env bash
# Runs every fuzz target of both modules (the root and e2e/) for N seconds
# each (default 20).
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-20}"
for mod in . e2e; do
  for pkg in $(cd "$mod" && go list ./...); do
    for target in $( (cd "$mod" && go test -list '^Fuzz' "$pkg") | grep '^Fuzz' || true); do
      echo "== $pkg $target"
      (cd "$mod" && go test -run '^$' -fuzz "^${target}\$" -fuzztime "${secs}s" "$pkg")
    done
  done
done
