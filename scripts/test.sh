#!/usr/bin/env bash
# The project's test command: installs what the tests need (scripts/install-deps.sh),
# then runs every check CI runs. Usage: ./scripts/test.sh   (from any directory)
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step's heading says how long the command has run so far.
t0=$(date +%s)
took() { local s=$(($(date +%s) - t0)); echo "$((s / 60))m$((s % 60))s"; }
step() { printf '\n== %s  [%s]\n' "$*" "$(took)"; }

step "install test dependencies"
./scripts/install-deps.sh

# Pure-Go packages run under the race detector; the GPU packages run
# without it (cgo-heavy) but with the Khronos validation layer for Vulkan.
PURE=(. ./eager/... ./dispatch/... ./bench/... ./conformance/... ./reference/... ./cmd/... ./experiments/...)

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

step "go test (Vulkan on the machine's device, validation layer on, beside the CUDA tests)"
log=$(mktemp)
# Lavapipe compiles each kernel with LLVM, on one core, the first time it
# runs it, and CI starts with Mesa's shader cache empty. GALLIVM_PERF=nopt
# leaves out LLVM's optimization passes: it cuts that compile time by a
# third. The CUDA emulator runs one kernel at a time too, so the CUDA tests
# (stand-in driver, then the kernels' host emulation) and two halves of the
# Vulkan conformance matrix run side by side.
export GALLIVM_PERF=nopt
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
(go test -count=1 -timeout 30m -tags cuda ./cuda/... && go test -count=1 -timeout 30m ./cuda/...) >"$log.cuda" 2>&1 &
cuda=$!
# vkrun NAME ENV... -- ARGS...: runs the Vulkan test binary's quick tier in
# vk/ with the environment ENV and the test flags ARGS into $log.NAME; on
# failure prints its failures and exits.
go test -c -o "$log.vk.test" ./vk
vkrun() {
  local name=$1 env=()
  shift
  while [ "$1" != -- ]; do env+=("$1"); shift; done
  shift
  if ! (cd vk && env "${env[@]}" "$log.vk.test" -test.short -test.count=1 -test.timeout 30m -test.v "$@" >"$log.$name" 2>&1); then
    grep -E -- '--- FAIL|^FAIL|panic|validation' "$log.$name" | head -100
    tail -30 "$log.$name"
    exit 1
  fi
}
# The Vulkan tests' quick tier: the trimmed conformance matrix runs every
# kernel in every type. Their full tier (go test ./vk: every (k, v) pair
# and the layout and path tests, over a thousand kernel specializations)
# takes two cores over half an hour to compile on lavapipe, so it runs on
# GPUs (scripts/gpu-run.sh conformance) and wherever go test ./vk is run.
vkrun forward -- -test.run '^TestConformance$/.*/^forward$' &
fwd=$!
vkrun backward -- -test.run '^TestConformance$/.*/^backward$' &
bwd=$!
wait $fwd
wait $bwd
vkrun rest -- -test.skip '^TestConformance$'
go test -count=1 -timeout 10m ./shaders/...
# The device and the conformance rows checked, then the verdicts.
grep -hE 'conformance:|device:|--- SKIP|^(ok|PASS|FAIL)' "$log.forward" "$log.backward" "$log.rest" || true
# The trimmed matrix again with guard regions after every buffer
# (MINGRU_VK_GUARD=1), so that a write past a buffer's end fails; its
# kernels are in the shader cache by now. It runs beside the runs below.
vkrun guard MINGRU_VK_GUARD=1 -- -test.run '^(TestConformance|TestGuardCatchesOverrun)$' &
guarded=$!
# lavapipe's subgroup size follows LP_NATIVE_VECTOR_WIDTH (128 -> 4,
# 512 -> 16, 1024 -> 32, 2048 -> 64; the runs above have 8). Only the
# Givens kernels use subgroup operations: at each width their rows of the
# trimmed matrix and the subgroup probe's tests run, with guard regions at
# 16. At 32 and 64 Mesa 22 runs narrower subgroups than it reports, so
# the probe keeps the subgroup kernels off there (vk/subgroup.go).
for w in 128 512 1024 2048; do
  guard=0
  [ "$w" = 512 ] && guard=1
  vkrun "$w" LP_NATIVE_VECTOR_WIDTH=$w MINGRU_VK_GUARD=$guard -- \
    -test.run '^(TestConformance|TestSubgroupProbe|TestShuffleProbeCheck)$/^givens_scan'
  echo "LP_NATIVE_VECTOR_WIDTH=$w MINGRU_VK_GUARD=$guard:"
  grep -E 'conformance: llvmpipe|subgroup_test.go|^(ok|PASS|FAIL)' "$log.$w" || true
done
wait $guarded
echo "MINGRU_VK_GUARD=1:"
grep -E 'conformance: llvmpipe|^(ok|PASS|FAIL)' "$log.guard" || true

step "go test (CUDA: the stand-in driver's tests, then the kernels' host emulation)"
if ! wait $cuda; then
  grep -E -- '--- FAIL|^FAIL|panic' "$log.cuda" | head -100
  tail -50 "$log.cuda"
  exit 1
fi
grep -E '^(ok|FAIL|---)' "$log.cuda" || true

step "scanbench --check --quick (eager, plus every device found)"
go run ./cmd/scanbench --check --quick --backends eager,vulkan --out "$(mktemp -d)"

echo
echo "all checks passed in $(took)"
