#!/usr/bin/env bash
# Builds herdr-sim, installs the pinned herdr-python-sdk (scripts/py/
# requirements.txt) into a virtual environment in a temporary directory and
# drives its typed client against the simulator of each Herdr release named
# (default 0.9.1 and 0.9.5): every method the simulator implements, each
# answer validated by the SDK's pydantic models, and every simulator answer
# checked against Herdr's protocol-22 schema from ../shared. Exits non-zero
# on any failed call. Python 3.13 through pyenv unless $HERDR_LINK_PYTHON
# names another interpreter (the SDK needs Python 3.12 or later).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(0.9.1 0.9.5)
tmp="$(mktemp -d)"
sim_pid=""
cleanup() {
  if [ -n "$sim_pid" ]; then kill "$sim_pid" 2>/dev/null || true; wait "$sim_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

python="${HERDR_LINK_PYTHON:-python3.13}"
if [ -z "${HERDR_LINK_PYTHON:-}" ]; then export PYENV_VERSION="${PYENV_VERSION:-3.13.0}"; fi
"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir -r "$root/scripts/py/requirements.txt"

go build -o "$tmp/" "$root/cmd/herdr-sim"
schema="$root/../shared/herdr-api/herdr-api.schema.protocol-22.json"
validate=()
if [ -f "$schema" ]; then validate=(--validate "$schema"); else echo "py-conformance: no $schema: simulator answers are not checked against Herdr's schema"; fi

for v in "${versions[@]}"; do
  sock="$tmp/$v.sock"
  "$tmp/herdr-sim" serve --herdr-version "$v" --socket "$sock" "${validate[@]}" >/dev/null 2>"$tmp/$v.err" &
  sim_pid=$!
  for _ in $(seq 100); do [ -S "$sock" ] && break; kill -0 "$sim_pid" 2>/dev/null || break; sleep 0.05; done
  [ -S "$sock" ] || { echo "herdr-sim $v did not start:"; cat "$tmp/$v.err"; exit 1; }
  status=0
  "$tmp/venv/bin/python" "$root/scripts/py/conformance.py" "$sock" "$v" || status=$?
  kill "$sim_pid" 2>/dev/null || true
  wait "$sim_pid" 2>/dev/null || true
  sim_pid=""
  if grep -q 'fails the schema' "$tmp/$v.err"; then
    echo "herdr-sim $v answered outside Herdr's schema:"; grep 'fails the schema' "$tmp/$v.err"; status=1
  fi
  [ "$status" -eq 0 ] || { echo "py-conformance: herdr-python-sdk against herdr-sim $v failed"; exit 1; }
done
echo "py-conformance: passed for ${versions[*]}"
