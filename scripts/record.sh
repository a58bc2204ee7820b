#!/usr/bin/env bash
# Remakes a device's table of record, experiments/bench/<device>/, whole:
# the conformance check, the benchmarks (chart included) and the memory
# comparison of one scanbench run, its log and its exact command.
#
#   scripts/record.sh lavapipe          runs here, on Mesa's lavapipe
#   scripts/record.sh h200 RESULTS.tgz... [LABEL=CONFORMANCE.tgz ...]
#                                       takes the archives that
#                                       `scripts/gpu-run.sh record` wrote
#                                       on the GPU machine (one, or one per
#                                       RECORD_STEP, in order), and the logs of
#                                       conformance runs (gpu-run.sh's
#                                       conformance modes) as
#                                       conformance-LABEL.log; a LABEL
#                                       starting with cuda takes the CUDA
#                                       test binary's log, one starting
#                                       with vulkan the Vulkan one's
#
# On a GPU machine without Go: scripts/build-gpu-bins.sh here, then
# scripts/gpu-run.sh record there (see that script), then this here.
set -euo pipefail
cd "$(dirname "$0")/.."
dev=${1:?usage: scripts/record.sh DEVICE [RESULTS.tgz]}
dir=experiments/bench/$dev

# The commands of record per device: the check (its trimmed matrix, in
# every type), the memory comparison and the training step, then the
# benchmarks: on a GPU every shape in f32, on lavapipe, a CPU, the lab and
# long-T shapes in f32. (--quick also trims the benchmarks, so it never
# goes with --bench here.) scripts/gpu-run.sh's record mode runs gpu_cmds.
gpu_cmds=('scanbench --check --quick --memory --step'
  'scanbench --bench')
cpu_cmds=('scanbench --check --quick --memory --backends eager,vulkan'
  'scanbench --bench --shapes lab,long-T --backends eager,vulkan')

case $dev in
lavapipe)
  tmp=$(mktemp -d)
  go build -o "$tmp/scanbench" ./cmd/scanbench
  # The commit, taken before the table's files go (their removal would
  # read as a local change).
  c=$(git rev-parse HEAD); git diff --quiet HEAD || c="$c+dirty"
  export MINGRU_SCANS_COMMIT=$c
  rm -rf "$dir" && mkdir -p "$dir"
  printf '%s\n' "${cpu_cmds[@]}" >"$dir/COMMAND"
  for cmd in "${cpu_cmds[@]}"; do
    # shellcheck disable=SC2086
    "$tmp/${cmd%% *}" ${cmd#* } --out "$dir" >>"$dir/run.log" 2>&1
  done
  vulkaninfo --summary 2>/dev/null | grep -E 'deviceName|driverInfo|apiVersion' | head -3 >"$dir/machine.txt" || true
  ;;
*)
  : "${2:?usage: scripts/record.sh $dev RESULTS.tgz... [LABEL=CONFORMANCE.tgz ...]}"
  shift
  rm -rf "$dir" && mkdir -p "$dir"
  while [ $# -gt 0 ] && [[ $1 != *=* ]]; do
    tmp=$(mktemp -d)
    tar xzf "$1" -C "$tmp"
    [ -f "$tmp/record/COMMAND" ] || { echo "record.sh: $1 holds no record/COMMAND" >&2; exit 1; }
    cat "$tmp/record/COMMAND" >>"$dir/COMMAND"
    cat "$tmp/record/run.log" >>"$dir/run.log"
    rm "$tmp/record/COMMAND" "$tmp/record/run.log"
    cp "$tmp"/record/* "$dir/"
    [ -f "$dir/machine.txt" ] || cp "$tmp/machine.txt" "$dir/machine.txt"
    shift
  done
  [ -f "$dir/scan_bench.json" ] || { echo "record.sh: no archive holds record/scan_bench.json" >&2; exit 1; }
  for arg in "$@"; do
    label=${arg%%=*} ctgz=${arg#*=}
    case $label in
    cuda*) name=cuda-conformance ;;
    vulkan*) name=vk-conformance ;;
    *) echo "record.sh: $arg: want LABEL=ARCHIVE with a LABEL starting with cuda or vulkan" >&2; exit 1 ;;
    esac
    ctmp=$(mktemp -d)
    tar xzf "$ctgz" -C "$ctmp"
    [ -f "$ctmp/$name.log" ] || { echo "record.sh: $ctgz holds no $name.log" >&2; exit 1; }
    cp "$ctmp/$name.log" "$dir/conformance-$label.log"
    if [ -f "$ctmp/$name.cmd" ]; then
      echo "$(cat "$ctmp/$name.cmd")  (conformance-$label.log)" >>"$dir/COMMAND"
    fi
  done
  ;;
esac
go run ./experiments/record "$dir" >"$dir/README.md"
echo "record.sh: wrote $dir:"
ls "$dir"
