#!/usr/bin/env bash
# Builds, on a machine without a GPU, the binaries that scripts/gpu-run.sh
# runs on a GPU machine that has no Go toolchain: the Vulkan and CUDA
# conformance test binaries and scanbench with every backend compiled in.
# They go to .build/ (ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .build
go test -c -o .build/vk.test ./vk
go test -c -tags cuda -o .build/cuda.test ./cuda
go build -tags cuda -o .build/scanbench ./cmd/scanbench
ls -la .build
