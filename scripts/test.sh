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
PURE=(. ./eager/... ./dispatch/... ./bench/... ./conformance/... ./reference/... ./cmd/...)

step "gofmt -l (must be empty)"
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$bad" ]; then echo "$bad"; exit 1; fi

step "go vet (default build, -tags cuda, CGO_ENABLED=0)"
go vet ./...
go vet -tags cuda ./...
# The gorgonia.org/cu adapter is a module of its own (its dependency stays
# out of the library's); its example needs a GPU.
(cd interop/gorgoniacu && go vet -tags cuda ./...)
CGO_ENABLED=0 go build ./...

step "go test -race (pure-Go packages)"
go test -race -count=1 -timeout 30m "${PURE[@]}"

step "go test (the example that trains a minGRU stack, on eager)"
go test -count=1 -timeout 10m ./examples/...

step "go test (Vulkan on the machine's device, validation layer on; CUDA skips without a GPU)"
log=$(mktemp)
# The CUDA kernels' host emulation (untagged) runs after the Vulkan tests,
# so that each has the machine's cores to itself. Lavapipe compiles each
# kernel on first use: with Mesa's shader cache empty this step takes two
# cores over half an hour, hence its limit.
if ! go test -count=1 -timeout 75m -v ./vk/... ./shaders/... >"$log" 2>&1; then
  grep -E -- '--- FAIL|^FAIL|panic|validation' "$log" | head -200
  tail -50 "$log"
  exit 1
fi
# The device and the number of conformance rows checked, then each package's verdict.
grep -E 'conformance:|device:|--- SKIP|^(ok|FAIL)' "$log" || true
# lavapipe's subgroup size follows LP_NATIVE_VECTOR_WIDTH (128 -> 4,
# 512 -> 16, 1024 -> 32, 2048 -> 64; the run above has 8), validation
# layer on. Only the Givens kernels use subgroup operations: at each width
# their rows of the trimmed matrix and the subgroup probe's tests run; the
# 16-wide run takes the whole trimmed matrix with guard regions after every
# buffer (MINGRU_VK_GUARD=1), so a write past a buffer's end fails there.
# At 32 and 64 Mesa 22 runs narrower subgroups than it reports, so the
# probe keeps the subgroup kernels off there (vk/subgroup.go).
go test -c -o "$log.vk.test" ./vk
for w in 128 512 1024 2048; do
  guard=0 run='^(TestConformance|TestSubgroupProbe|TestShuffleProbeCheck)$/^givens_scan'
  if [ "$w" = 512 ]; then
    guard=1 run='^(TestConformance|TestSubgroupProbe|TestShuffleProbeCheck|TestGuardCatchesOverrun)$'
  fi
  if ! (cd vk && LP_NATIVE_VECTOR_WIDTH=$w MINGRU_VK_GUARD=$guard "$log.vk.test" -test.short -test.count=1 -test.timeout 20m -test.v \
      -test.run "$run" >"$log.$w" 2>&1); then
    grep -E -- '--- FAIL|^FAIL|panic|validation' "$log.$w" | head -100
    tail -30 "$log.$w"
    exit 1
  fi
  echo "LP_NATIVE_VECTOR_WIDTH=$w MINGRU_VK_GUARD=$guard:"
  grep -E 'conformance: llvmpipe|subgroup_test.go|^(ok|PASS|FAIL)' "$log.$w" || true
done
go test -count=1 -timeout 30m -tags cuda ./cuda/...
step "go test (the CUDA kernels' host emulation)"
go test -count=1 -timeout 30m ./cuda/...

step "scanbench --check --quick (eager, plus every device found)"
go run ./cmd/scanbench --check --quick --backends eager,vulkan --out "$(mktemp -d)"

echo
echo "all checks passed"
