#!/usr/bin/env bash
# Remakes a device's table of record, experiments/bench/<device>/, whole:
# the conformance check, the benchmarks (chart included) and the memory
# comparison of one scanbench run, its log and its exact command.
#
#   scripts/record.sh lavapipe          runs here, on Mesa's lavapipe
#   scripts/record.sh h200 RESULTS.tgz  takes the archive that
#                                       `scripts/gpu-run.sh record` wrote
#                                       on the GPU machine
#
# On a GPU machine without Go: scripts/build-gpu-bins.sh here, then
# scripts/gpu-run.sh record there (see that script), then this here.
set -euo pipefail
cd "$(dirname "$0")/.."
dev=${1:?usage: scripts/record.sh DEVICE [RESULTS.tgz]}
dir=experiments/bench/$dev

# The commands of record per device: on a GPU every shape and type; on
# lavapipe, a CPU, the check in every type and the benchmarks at the lab
# and long-T shapes in f32.
gpu_cmd='scanbench --check --quick --bench --memory --dtypes f32,f16,bf16'
cpu_cmds=('scanbench --check --quick --memory --backends eager,vulkan'
  'scanbench --bench --shapes lab,long-T --backends eager,vulkan')

case $dev in
lavapipe)
  tmp=$(mktemp -d)
  go build -o "$tmp/scanbench" ./cmd/scanbench
  rm -rf "$dir" && mkdir -p "$dir"
  printf '%s\n' "${cpu_cmds[@]}" >"$dir/COMMAND"
  for cmd in "${cpu_cmds[@]}"; do
    # shellcheck disable=SC2086
    "$tmp/${cmd%% *}" ${cmd#* } --out "$dir" >>"$dir/run.log" 2>&1
  done
  vulkaninfo --summary 2>/dev/null | grep -E 'deviceName|driverInfo|apiVersion' | head -3 >"$dir/machine.txt" || true
  ;;
*)
  tgz=${2:?usage: scripts/record.sh $dev RESULTS.tgz}
  tmp=$(mktemp -d)
  tar xzf "$tgz" -C "$tmp"
  [ -f "$tmp/record/scan_bench.json" ] || { echo "record.sh: $tgz holds no record/scan_bench.json" >&2; exit 1; }
  rm -rf "$dir" && mkdir -p "$dir"
  cp "$tmp"/record/* "$dir/"
  cp "$tmp/machine.txt" "$dir/machine.txt"
  ;;
esac
go run ./experiments/record "$dir" >"$dir/README.md"
echo "record.sh: wrote $dir:"
ls "$dir"
