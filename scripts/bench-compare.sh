#!/usr/bin/env bash
# Compares the Go benchmarks of two revisions with benchstat, side by side
# on this machine: scripts/bench-compare.sh [OLD_REV] [COUNT]
# (OLD_REV defaults to HEAD~1; the new side is the working tree).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
old="${1:-HEAD~1}"
count="${2:-10}"
tmp="$(mktemp -d)"
trap 'git -C "$root" worktree remove --force "$tmp/old" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git -C "$root" worktree add --detach "$tmp/old" "$old" >/dev/null
pkgs="./socket/ ./link/ ./link/mcpserver/"
# Interleave the two sides run by run, so machine noise hits both alike.
for i in $(seq "$count"); do
  (cd "$tmp/old" && go test -run '^$' -bench . -benchmem -count 1 $pkgs) >> "$tmp/old.txt"
  (cd "$root" && go test -run '^$' -bench . -benchmem -count 1 $pkgs) >> "$tmp/new.txt"
done
command -v benchstat >/dev/null || go install golang.org/x/perf/cmd/benchstat@latest
"$(go env GOPATH)/bin/benchstat" "$tmp/old.txt" "$tmp/new.txt"
