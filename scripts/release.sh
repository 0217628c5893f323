#!/usr/bin/env bash
# Static release binaries of herdr-link, herdr-sim and herdr-bench for linux and darwin
# on amd64 and arm64, with SHA-256 checksums, in dist/ (or $1).
# No cgo (so no libc dependency), -trimpath (no local paths in binaries);
# the version is internal/buildinfo's Base plus the commit.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
rm -rf "$out"
mkdir -p "$out"
for os in linux darwin; do
  for arch in amd64 arm64; do
    for cmd in herdr-link herdr-sim herdr-bench; do
      CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -ldflags='-s -w' \
        -o "$out/${cmd}_${os}_${arch}" "./cmd/$cmd"
    done
  done
done
cd "$out"
if command -v sha256sum >/dev/null; then
  sha256sum herdr-* > SHA256SUMS
else
  shasum -a 256 herdr-* > SHA256SUMS
fi
cat SHA256SUMS
