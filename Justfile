# herdr-link tasks. Install just with: npm install -g rust-just

set shell := ["bash", "-euo", "pipefail", "-c"]

# list the recipes
default:
    @just --list

# fetch modules (root and e2e/) and build the three binaries into ./bin
setup:
    go mod download
    go -C e2e mod download
    CGO_ENABLED=0 go build -trimpath -o bin/ ./cmd/herdr-link ./cmd/herdr-sim ./cmd/herdr-bench ./cmd/herdr-board

# build herdr-link, herdr-sim and herdr-bench into ./bin (static: no cgo)
build:
    CGO_ENABLED=0 go build -trimpath -o bin/ ./cmd/herdr-link ./cmd/herdr-sim ./cmd/herdr-bench ./cmd/herdr-board

# static binaries for linux and darwin × amd64 and arm64, with SHA256SUMS, in ./dist
release:
    bash scripts/release.sh dist

# install the three commands into $(go env GOPATH)/bin
install:
    CGO_ENABLED=0 go install -trimpath ./cmd/herdr-link ./cmd/herdr-sim ./cmd/herdr-bench ./cmd/herdr-board

# the main job without Herdr: three agents over MCP on an embedded simulator
demo: build
    bin/herdr-sim demo

# serve MCP on stdio (what an MCP host runs)
serve: build
    bin/herdr-link

# run a simulated Herdr on a socket; prints the HERDR_* lines to use
sim *ARGS: build
    bin/herdr-sim serve {{ARGS}}

# diagnose the Herdr socket of this pane
probe *ARGS: build
    bin/herdr-link probe {{ARGS}}

# the README's test command: both modules (the product's, and e2e/'s process and host tests)
test *ARGS:
    bash scripts/test.sh {{ARGS}}

# vet, staticcheck and formatting, both modules
lint:
    go vet ./...
    go -C e2e vet ./...
    go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
    cd e2e && go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
    test -z "$(gofmt -l $(git ls-files '*.go'))" || (gofmt -l $(git ls-files '*.go'); exit 1)

# regenerate schema/ from ../shared/herdr-api (or pipe `herdr api schema --json | go run ./schema/gen -out schema`)
gen:
    go generate ./schema/...

# the official TypeScript SDK client's round trip (needs Node 20)
conformance:
    bash scripts/ts-conformance.sh

# herdr-python-sdk 0.1.0's typed client against the simulator of Herdr 0.9.1 and 0.9.5 (needs Python 3.13)
py-conformance *VERSIONS:
    bash scripts/py-conformance.sh {{VERSIONS}}

# socket route vs CLI route vs MCP, side by side, on the embedded simulator
bench *ARGS: build
    bin/herdr-bench --sim {{ARGS}}

# Go benchmarks in benchstat format (compare runs with scripts/benchstat.sh)
bench-go COUNT="10":
    go test -run '^$' -bench . -benchmem -count {{COUNT}} ./socket/ ./link/ | tee bench.txt

# fuzz every parser for a while each
fuzz SECONDS="20":
    bash scripts/fuzz.sh {{SECONDS}}

# real agent hosts (Claude Code, Codex, OpenCode, Pi, Gemini CLI, Qwen Code, Copilot CLI) end to end against a fake model; installs pinned hosts into ~/.cache/herdr-link-hosts
hosts *ARGS:
    bash scripts/hosts.sh {{ARGS}}

# what CI runs
ci:
    bash .ci/run
