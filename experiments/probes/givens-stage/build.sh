#!/usr/bin/env bash
# Builds the Givens forward probe on a machine without a GPU (nvcc 11.8
# and CUDA 11.8's cuda.h and libcuda stub, as scripts/install-deps.sh
# installs them) into .carry/probe/, which travels to a GPU machine:
#   .carry/probe/probe .carry/probe [B T N repeats]   (default: the large shape)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(cd "$here/../../.." && pwd)/.carry/probe
mkdir -p "$out"
for d in f32:DT_F32 f16:DT_F16 bf16:DT_BF16; do
  n=${d%%:*}
  nvcc -ptx -arch=compute_80 -O3 -DSCAN_DT_NAME="$n" -DSCAN_DT="${d##*:}" -DSCAN_K=8 -o "$out/probe_$n.ptx" "$here/probe.cu"
done
gcc -O2 -Wall -o "$out/probe" "$here/host.c" -lcuda -lm
ls -la "$out"
