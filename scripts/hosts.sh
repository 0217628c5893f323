#!/usr/bin/env bash
# Real agent hosts end to end: installs the pinned host versions
# from npm into a cache folder (reused when present), builds herdr-link,
# herdr-sim and herdr-bench from the tree once (the e2e tests use them through
# HERDR_LINK_E2E_BIN), and runs e2e/internal/hosttest's TestHosts: for each
# host and mode, headless sessions against a scripted fake model and the
# Herdr simulator (activate, peers, send, the reviewer's reply, close).
# Prints the per-host table and writes it to $cache/last-run/report.md
# (report.json holds every model request the fakes saw).
#
#   scripts/hosts.sh                      every host and mode
#   scripts/hosts.sh claude/direct,codex  some (HOST or HOST/MODE, comma-separated); "tui" runs only
#                                         the interactive TUIs as receivers (also run with claude, codex,
#                                         gemini, qwen, copilot or grok)
#   scripts/hosts.sh --herdr-version 0.9.1 claude/direct
#                                         the same against a simulated Herdr 0.9.1 (sets HERDR_SIM_VERSION,
#                                         which herdr-sim serve and the in-process simulators follow)
#   scripts/hosts.sh --record             also copy the report to e2e/internal/hosttest/testdata/report.md
#                                         and rewrite the docs/hosts.md's host table from it (run every host)
#
# Environment: HERDR_LINK_HOST_CACHE (default ~/.cache/herdr-link-hosts).
# Needs Go, Node and npm (a registry that serves the pinned packages).
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
esac
record=0
if [ "${1:-}" = "--herdr-version" ]; then export HERDR_SIM_VERSION="$2"; shift 2; fi
if [ "${1:-}" = "--record" ]; then record=1; shift; fi
only="${1:-}"
cache="${HERDR_LINK_HOST_CACHE:-$HOME/.cache/herdr-link-hosts}"
mkdir -p "$cache/bin"
cache="$(cd "$cache" && pwd)"

command -v npm >/dev/null || { echo "hosts.sh: npm is needed to install the agent hosts (Node 20 or later)" >&2; exit 1; }
echo "== build herdr-link, herdr-sim and herdr-bench into $cache/bin"
go build -o "$cache/bin/" ./cmd/herdr-link ./cmd/herdr-sim ./cmd/herdr-bench ./cmd/herdr-board
export HERDR_LINK_E2E_BIN="$cache/bin"

echo "== hosts (installs go to $cache/<host>-<version>)"
set +e
HERDR_LINK_HOSTS="$cache" HERDR_LINK_BIN="$cache/bin/herdr-link" HERDR_LINK_HOSTS_ONLY="$only" \
  go -C e2e test -count=1 -timeout 25m -run '^TestHosts$' -v ./internal/hosttest/ 2>&1 | tee "$cache/last-test.log"
status=${PIPESTATUS[0]}
set -e

report="$cache/last-run/report.md"
if [ -f "$report" ]; then
  echo
  cat "$report"
  if [ "$record" = 1 ]; then
    cp "$report" e2e/internal/hosttest/testdata/report.md
    go -C e2e test -count=1 -run '^TestReadmeHostTable$' ./internal/hosttest/ -update-readme >/dev/null
    echo "recorded e2e/internal/hosttest/testdata/report.md and the docs/hosts.md's host table"
  fi
fi
# The interactive TUIs (Claude Code, Codex, Gemini CLI, Qwen Code,
# Copilot CLI, Grok CLI @vibe-kit/grok-cli 0.0.34, installed by the test
# from npm into the cache) as receivers, in
# simulator PTY panes (e2e/internal/tui): the delivery scenario table, the
# simulator's model checked against them, link.Composer's reading of
# the Claude Code and Codex composers, and the turn scenarios (a working
# Codex finishes before a held message, a Claude Code draft is sent before
# one, a Codex's unanswered request ends in a notice typed into the Claude
# Code that sent it). Runs with every host, or with
# "tui" among the hosts asked for.
case ",$only," in
  ,, | *,tui,* | *,claude,* | *,codex,* | *,gemini,* | *,qwen,* | *,copilot,* | *,grok,*)
    echo
    echo "== interactive TUIs as receivers (e2e/internal/tui)"
    set +e
    HERDR_LINK_HOSTS="$cache" HERDR_LINK_BIN="$cache/bin/herdr-link" \
      go -C e2e test -count=1 -timeout 30m -run '^(TestTUIRecipes|TestDeliveryIntoTUIs|TestComposerRealTUI|TestWorkingCodexFinishesFirst|TestClaudeDraftThenMessage|TestCodexHandledNoticeToClaude)$' -v ./internal/tui/ 2>&1 | tee "$cache/last-tui.log"
    tui_status=${PIPESTATUS[0]}
    set -e
    grep -A12 'scenario summary' "$cache/last-tui.log" || true
    if [ "$tui_status" != 0 ]; then echo "hosts.sh: the TUI receivers FAILED (log: $cache/last-tui.log)" >&2; status=$tui_status; fi
    ;;
esac
if [ "$status" != 0 ]; then echo "hosts.sh: FAILED (log: $cache/last-test.log, sessions: $cache/last-run)" >&2; fi
exit "$status"
