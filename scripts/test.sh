#!/usr/bin/env bash
# The project's test command: installs what the tests need (scripts/install-deps.sh),
# then runs every check CI runs. Usage: ./scripts/test.sh   (from any directory)
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "install test dependencies"
./scripts/install-deps.sh

# Pure-Go packages run under the race detector; the GPU packages run
# without it (cgo-heavy) but with the Khronos validation layer for Vulkan.
PURE=(. ./eager/... ./dispatch/... ./bench/... ./cmd/...)

step "gofmt -l (must be empty)"
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$bad" ]; then echo "$bad"; exit 1; fi

step "go vet (default build, -tags cuda, CGO_ENABLED=0)"
go vet ./...
go vet -tags cuda ./...
CGO_ENABLED=0 go build ./...

step "go test -race (pure-Go packages)"
go test -race -count=1 -timeout 30m "${PURE[@]}"

step "go test (Vulkan on the machine's device, validation layer on; CUDA skips without a GPU)"
log=$(mktemp)
if ! go test -count=1 -timeout 45m -v ./vk/... ./shaders/... >"$log" 2>&1; then
  grep -E -- '--- FAIL|^FAIL|panic|validation' "$log" | head -200
  tail -50 "$log"
  exit 1
fi
# The device and the number of conformance rows checked, then each package's verdict.
grep -E 'conformance:|device:|--- SKIP|^(ok|FAIL)' "$log" || true
go test -count=1 -timeout 30m -tags cuda ./cuda/...
go test -count=1 -timeout 30m ./cuda/...

step "scanbench --check --quick (eager, plus every device found)"
go run ./cmd/scanbench --check --quick --out "$(mktemp -d)"

echo
echo "all checks passed"
