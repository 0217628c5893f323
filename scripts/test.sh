#!/usr/bin/env bash
# The tests of both modules (the root and e2e/, the process and host tests),
# as the README runs them. Needs Go only; with a C compiler (cgo) they run
# under the race detector, as CI runs them. Prints each package's result,
# the output of any failed test, and every skipped test with its reason
# (a clone without ../shared beside it skips the checks that read Herdr's
# committed schema or run the real Herdr found there).
#
#   scripts/test.sh [go test flags…]      e.g. scripts/test.sh -run Peers -count 1
set -euo pipefail
cd "$(dirname "$0")/.."
race=-race
have_cc() { command -v "${CC:-gcc}" >/dev/null 2>&1 || command -v cc >/dev/null 2>&1; }
if [ "${CGO_ENABLED:-}" = 0 ] || ! have_cc; then
  race=""
  echo "no C compiler found: running without -race (the race detector needs cgo and gcc or clang)"
fi
timeout="${HERDR_LINK_TEST_TIMEOUT:-20m}"
bin="${HERDR_LINK_E2E_BIN:-}"
if [ -z "$bin" ]; then
  bin="$(mktemp -d)"
  trap 'rm -rf "$bin"' EXIT
fi
go build -o "$bin/" ./cmd/herdr-link ./cmd/herdr-sim ./cmd/herdr-bench ./cmd/herdr-board
go build -o "$bin/testreport" ./scripts/testreport
status=0
echo "== go test $race ./... (the root module)"
go test $race -timeout "$timeout" -json "$@" ./... | "$bin/testreport" || status=1
echo "== go test $race ./... (e2e/: process and host tests, against the binaries just built)"
HERDR_LINK_E2E_BIN="$bin" go -C e2e test $race -timeout "$timeout" -json "$@" ./... | "$bin/testreport" || status=1
exit $status
