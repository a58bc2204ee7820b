#!/usr/bin/env bash
# Builds, on a machine without a GPU, the binaries that scripts/gpu-run.sh
# runs on a GPU machine that has no Go toolchain: the Vulkan and CUDA
# conformance test binaries and scanbench with every backend compiled in.
# They go to .build/ (ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .build
# The commit, stamped into the binaries (bench's buildCommit) so that their
# reports name it on any machine, and written beside them.
c=$(git rev-parse HEAD); git diff --quiet HEAD || c="$c+dirty"
flags="-s -w -X github.com/mingru/scans/bench.buildCommit=$c"
go test -c -ldflags="$flags" -o .build/vk.test ./vk
go test -c -ldflags="$flags" -tags cuda -o .build/cuda.test ./cuda
go build -ldflags="$flags" -tags cuda -o .build/scanbench ./cmd/scanbench

# One compressed archive: it travels to the GPU machine (scripts/gpu-run.sh unpacks it).
mkdir -p .carry
echo "$c" > .build/commit
tar czf .carry/bins.tgz -C .build vk.test cuda.test scanbench commit
rm .build/vk.test .build/cuda.test .build/scanbench
ls -la .carry/bins.tgz
