#!/usr/bin/env bash
# Builds, on a machine without a GPU, the binaries that scripts/gpu-run.sh
# runs on a GPU machine that has no Go toolchain: the Vulkan and CUDA
# conformance test binaries and scanbench with every backend compiled in.
# They go to .build/ (ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .build
go test -c -ldflags="-s -w" -o .build/vk.test ./vk
go test -c -ldflags="-s -w" -tags cuda -o .build/cuda.test ./cuda
go build -ldflags="-s -w" -tags cuda -o .build/scanbench ./cmd/scanbench

# One compressed archive: it travels to the GPU machine (scripts/gpu-run.sh unpacks it).
mkdir -p .carry
c=$(git rev-parse HEAD); git diff --quiet HEAD || c="$c+dirty"
echo "$c" > .build/commit
tar czf .carry/bins.tgz -C .build vk.test cuda.test scanbench commit
rm .build/vk.test .build/cuda.test .build/scanbench
ls -la .carry/bins.tgz
