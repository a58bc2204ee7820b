#!/usr/bin/env bash
# Runs on a GPU machine, from the repository root, with the binaries from
# scripts/build-gpu-bins.sh in .build/ and, when the machine has no Vulkan
# loader, Debian's libvulkan1 .deb (and friends) in .gl/. Writes logs and
# tables into one archive, $OUT/gpu-results.tgz (default OUT: ./gpu-out), and
# a summary on standard output.
#
#   scripts/gpu-run.sh [conformance] [bench] [memory]   (default: all three)
#
# (record runs the table of record's command; scripts/record.sh h200
# takes the archive.)
#
# (cuda-conformance and vk-conformance run one half of conformance.)
#
# Shorter modes for trying a change: quick (the trimmed conformance matrix of
# both test binaries) and perf (quick benchmarks: every shape in f32, and the
# large shape in f16 and bf16); sweep and cuda-sweep (scanbench --sweep on
# Vulkan and on CUDA);
# profile (Nsight Compute on single kernels,
# NCU_PROFILES); ab (the binaries' scanbench, the one built from BASE by
# build-gpu-bins.sh and those built from its VARIANTS, in turn, AB_ROUNDS
# times each, with AB_ARGS: changes timed against each other in one call;
# go run ./experiments/abcompare on its results prints the comparison). VK_SHORT=1 trims the Vulkan matrix of the
# conformance mode; STEP_TIMEOUT (seconds) limits each step. gorgonia runs
# the gorgonia.org/cu adapter's example (build-gpu-bins.sh GORGONIA=1);
# step the training-step benchmark alone (STEP_ARGS adds arguments);
# calls the host's cost of a call on both GPU backends (BenchmarkCalls of
# the test binaries, CALLS_BENCH a -bench pattern), with CPU profiles.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
# Results are written under $OUT as they come (so a call cut short keeps
# them) and packed into one archive at the end.
RES=$OUT/results
mkdir -p "$RES"
trap 'release_clocks; tar czf "$OUT/gpu-results.tgz" -C "$RES" . && rm -rf "$RES"' EXIT
# Every step runs under a time limit (STEP_TIMEOUT seconds, default 300):
# a kernel that hangs costs one step, not the whole call.
to() { timeout "${STEP_TIMEOUT:-300}" "$@"; }
modes=${*:-conformance bench memory}

# xz archives unpack with Python where the machine has no xz.
untxz() { tar xJf "$1" -C .build 2>/dev/null || python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall('.build')" "$1"; }
mkdir -p .build; [ -f .carry/bins.txz ] && untxz .carry/bins.txz
[ -f .carry/base.txz ] && untxz .carry/base.txz
if [ -f .carry/variants.txz ]; then
  untxz .carry/variants.txz
fi
[ -f .carry/gorgonia.txz ] && untxz .carry/gorgonia.txz
# Each binary names the commit it was built from in its tables (stamped
# at link time by build-gpu-bins.sh), so the ab mode's base and variants
# name their own; MINGRU_SCANS_COMMIT, which would override them all, is
# left unset.
unset MINGRU_SCANS_COMMIT
if ! ldconfig -p | grep -q libvulkan.so.1 && ls .gl/*.deb >/dev/null 2>&1; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] &&
   [ ! -e /usr/share/vulkan/icd.d/nvidia_icd.json ] && [ ! -e /etc/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi

{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv 2>&1
  nvidia-smi -q 2>/dev/null | grep -iE 'CUDA Version|Driver Version' | head -3
} | tee "$RES/machine.txt"

# A process holding a CUDA context keeps an NVIDIA GPU's clocks up while
# a Vulkan-only process runs (scanbench's package doc says why); torch is one way
# to hold one. scanbench needs none: its CUDA backend holds one.
holder=
hold_clocks() {
  [ -n "$holder" ] && return
  if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    python3 -c 'import torch, time; torch.zeros(1, device="cuda"); time.sleep(3600)' &
    holder=$!
    sleep 5
  fi
}
release_clocks() { [ -n "$holder" ] && kill "$holder"; holder=; }
# VK_SHORT=1 runs the Vulkan conformance on the trimmed matrix.
vkargs=; [ "${VK_SHORT:-0}" = 1 ] && vkargs=-test.short
# VK_RUN and CUDA_RUN, -test.run patterns, pick the Vulkan and the CUDA
# tests of the conformance modes.
[ -n "${VK_RUN:-}" ] && vkargs="$vkargs -test.run $VK_RUN"
cudaargs=; [ -n "${CUDA_RUN:-}" ] && cudaargs="-test.run $CUDA_RUN"

rc=0
# tests NAME BIN ARGS...: runs the test binary BIN (.build/PKG.test) in
# PKG's directory, as go test does (some tests read the package's files),
# into $RES/NAME.log, writes its exact command (with the MINGRU_
# settings of the environment) to $RES/NAME.cmd and prints its
# conformance summary and verdicts.
tests() {
  local name=$1 bin=$PWD/$2; shift 2
  local pkg; pkg=$(basename "$bin" .test)
  { env | grep -E '^MINGRU_VK_VALIDATION=' | tr '\n' ' '; printf '%q ' "$pkg.test" "$@"; echo; } >"$RES/$name.cmd"
  (cd "$pkg" && to "$bin" "$@") >"$RES/$name.log" 2>&1 || rc=1
  grep -E 'conformance:|^(--- FAIL|FAIL|ok|PASS)' "$RES/$name.log" | tail -20
}
for m in $modes; do
  case $m in
  conformance|cuda-conformance|vk-conformance)
    if [ "$m" != vk-conformance ]; then
      echo "== CUDA conformance"
      tests cuda-conformance .build/cuda.test $cudaargs -test.v -test.count=1 -test.timeout=${TEST_TIMEOUT:-280s}
    fi
    if [ "$m" != cuda-conformance ]; then
      echo "== Vulkan conformance"
      hold_clocks
      MINGRU_VK_PIPELINE_LOG="$RES/vk-pipelines.log" tests vk-conformance .build/vk.test $vkargs -test.v -test.count=1 -test.timeout=${TEST_TIMEOUT:-280s}
      release_clocks
    fi
    ;;
  gorgonia)
    # The gorgonia.org/cu adapter's example (build-gpu-bins.sh GORGONIA=1).
    echo "== gorgonia.org/cu adapter"
    (cd interop/gorgoniacu && to ../../.build/gorgoniacu.test -test.v -test.count=1) >"$RES/gorgonia.log" 2>&1 || rc=1
    tail -5 "$RES/gorgonia.log"
    ;;
  bench)
    # The trimmed parity matrix first (the full one is the conformance
    # mode's: on a fresh NVIDIA machine its Vulkan half alone builds some
    # 600 pipelines), then every benchmark shape and type.
    # BENCH_CHECK=0 leaves the check out; BENCH_DTYPES and BENCH_OPS narrow
    # the types and the operations.
    echo "== scanbench --check --quick, then --bench"
    if [ "${BENCH_CHECK:-1}" = 1 ]; then
      mkdir -p "$RES/check"
      MINGRU_VK_PIPELINE_LOG="$RES/check/pipelines.log" to .build/scanbench --check --quick --out "$RES/check" >"$RES/check/scanbench.log" 2>&1 || rc=1
      grep -E '^check' "$RES/check/scanbench.log"
    fi
    ops=; [ -n "${BENCH_OPS:-}" ] && ops="--ops $BENCH_OPS"
    # The full benchmark runs some 350 seconds on an H200: its own limit,
    # BENCH_TIMEOUT (default 600), not STEP_TIMEOUT's.
    MINGRU_VK_PIPELINE_LOG="$RES/scanbench-pipelines.log" STEP_TIMEOUT=${BENCH_TIMEOUT:-600} to .build/scanbench --bench --dtypes "${BENCH_DTYPES:-f32,f16,bf16}" $ops --out "$RES" >"$RES/scanbench.log" 2>&1 || rc=1
    tail -3 "$RES/scanbench.log"
    ;;
  quick)
    echo "== CUDA and Vulkan conformance, trimmed matrix"
    tests cuda-quick .build/cuda.test -test.short -test.v -test.count=1
    hold_clocks
    tests vk-quick .build/vk.test -test.short -test.v -test.count=1
    release_clocks
    ;;
  perf)
    echo "== scanbench --bench --quick"
    mkdir -p "$RES/f32" "$RES/half"
    # PERF_SHAPES, PERF_OPS, PERF_BACKENDS (cuda or vulkan) and PERF_HALF=0
    # narrow it.
    ops=; [ -n "${PERF_OPS:-}" ] && ops="--ops $PERF_OPS"
    [ -n "${PERF_BACKENDS:-}" ] && ops="$ops --backends $PERF_BACKENDS"
    MINGRU_VK_PIPELINE_LOG="$RES/f32/pipelines.log" to .build/scanbench --bench --quick --shapes "${PERF_SHAPES:-lab,long-T,large}" $ops --out "$RES/f32" 2>&1 | tail -3 || rc=1
    if [ "${PERF_HALF:-1}" = 1 ]; then
      MINGRU_VK_PIPELINE_LOG="$RES/half/pipelines.log" to .build/scanbench --bench --quick --shapes large --dtypes f16,bf16 $ops --out "$RES/half" 2>&1 | tail -3 || rc=1
    fi
    ;;
  sweep|cuda-sweep)
    # scanbench --sweep: the layout experiments (VK_SWEEP_SETS or
    # CUDA_SWEEP_PARTS pick the parts; default all and givens-chunks).
    # scanbench holds a CUDA context, so that the clocks stay up for the
    # Vulkan rows.
    be=vulkan parts=${VK_SWEEP_SETS:-all}
    [ $m = cuda-sweep ] && be=cuda parts=${CUDA_SWEEP_PARTS:-givens-chunks}
    echo "== $be layout sweep ($parts)"
    mkdir -p "$RES/sweep"
    STEP_TIMEOUT=${SWEEP_TIMEOUT:-540} to .build/scanbench --sweep "$parts" --backends "$be" --out "$RES/sweep" >"$RES/sweep/scanbench.log" 2>&1 || rc=1
    tail -3 "$RES/sweep/scanbench.log"
    ;;
  profile)
    # Nsight Compute reports of single kernels: NCU_PROFILES is a list of
    # name|kernel regex|scanbench arguments, separated by ';'; each
    # profiles the first launch whose name matches, during a quick
    # benchmark run with those arguments. NCU_SECTIONS adds sections (for
    # example "InstructionStats SourceCounters").
    echo "== ncu"
    ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    IFS=';' read -ra profs <<<"${NCU_PROFILES:-}"
    for p in "${profs[@]}"; do
      IFS='|' read -r pname kre pargs <<<"$p"
      to "$ncu" --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis \
        --section Occupancy --section LaunchStats --section SchedulerStats \
        $(for x in ${NCU_SECTIONS:-}; do echo --section "$x"; done) -k "regex:$kre" -c 1 \
        .build/scanbench --bench --quick $pargs --out "$RES/ncu-$pname" >"$RES/ncu-$pname.txt" 2>&1 || rc=1
      grep -E 'Duration|Throughput|Stall|Warp Cycles|Achieved Occupancy|Registers|==ERR|==PROF==' "$RES/ncu-$pname.txt" | head -20
      # NCU_SASS=1: also the kernel's SASS as the driver compiled it, with
      # per-instruction executions and stall samples.
      if [ "${NCU_SASS:-0}" = 1 ]; then
        to "$ncu" --section SourceCounters --page source --print-source sass --csv -k "regex:$kre" -c 1 \
          .build/scanbench --bench --quick $pargs --out "$RES/ncu-$pname-sass" >"$RES/ncu-$pname-sass.csv" 2>&1 || rc=1
        wc -l "$RES/ncu-$pname-sass.csv"
      fi
    done
    ;;
  ab)
    echo "== scanbench A/B: $(cat .build/commit 2>/dev/null) against the base"
    # The base may come as a variant instead (VARIANTS="<base> ...", one
    # archive for all of them, smaller than base.txz beside variants.txz).
    sides=new
    [ -x .build/base-scanbench ] && sides="$sides base"
    [ -f .build/variants.txt ] && sides="$sides $(awk '{print $1}' .build/variants.txt | tr '\n' ' ')"
    for i in $(seq "${AB_ROUNDS:-2}"); do
      for v in $sides; do
        case $v in
          new) bin=.build/scanbench ;;
          base) bin=.build/base-scanbench ;;
          *) bin=.build/var-$v ;;
        esac
        mkdir -p "$RES/ab-$v-$i"
        to $bin --bench --quick ${AB_ARGS:-} --out "$RES/ab-$v-$i" >"$RES/ab-$v-$i/scanbench.log" 2>&1 || rc=1
        tail -1 "$RES/ab-$v-$i/scanbench.log"
      done
    done
    ;;
  record)
    # The table of record's run (scripts/record.sh takes its archive):
    # its commands are record.sh's gpu_cmds.
    echo "== scanbench, the table of record's run"
    mkdir -p "$RES/record"
    # RECORD_STEP=N runs only the Nth command, so that the commands can
    # take a call each (record.sh files the archives together).
    sed -n '/^gpu_cmds=(/,/)$/p' scripts/record.sh | grep -o "'[^']*'" | tr -d "'" |
      sed -n "${RECORD_STEP:-1,\$}p" >"$RES/record/COMMAND"
    while read -r cmd; do
      # shellcheck disable=SC2086
      STEP_TIMEOUT=${BENCH_TIMEOUT:-590} to .build/$cmd --out "$RES/record" >>"$RES/record/run.log" 2>&1 </dev/null || rc=1
    done <"$RES/record/COMMAND"
    grep -E '^check|^memory|^wrote' "$RES/record/run.log"
    tail -2 "$RES/record/run.log"
    ;;
  step)
    # The training-step benchmark alone (scan_step.md), with STEP_ARGS.
    echo "== scanbench --step"
    mkdir -p "$RES/step"
    to .build/scanbench --step ${STEP_ARGS:-} --out "$RES/step" >"$RES/step/scanbench.log" 2>&1 || rc=1
    grep -E '^\| (cuda|vulkan|eager) ' "$RES/step/scan_step.md" || tail -5 "$RES/step/scanbench.log"
    ;;
  calls)
    echo "== BenchmarkCalls"
    for pkg in cuda vk; do
      [ $pkg = vk ] && hold_clocks
      (cd $pkg && MINGRU_VK_VALIDATION=0 to ../.build/$pkg.test -test.run '^$' -test.bench "${CALLS_BENCH:-Calls|Submit}" \
        -test.benchtime "${CALLS_TIME:-0.5s}" -test.cpuprofile "$RES/calls-$pkg.prof") >"$RES/calls-$pkg.log" 2>&1 || rc=1
      grep -E '^Benchmark' "$RES/calls-$pkg.log"
    done
    release_clocks
    ;;
  memory)
    echo "== scanbench --memory"
    to .build/scanbench --memory --out "$RES" >"$RES/scanbench-memory.log" 2>&1 || rc=1
    tail -20 "$RES/scanbench-memory.log"
    ;;
  esac
done
exit $rc
