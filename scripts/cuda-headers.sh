#!/usr/bin/env bash
# Fetches CUDA 11.8's driver-API header (cuda.h) and the stub libcuda.so from
# Debian's non-free component into ./.cuda/ (ignored by git), without
# installing anything, and prints the cgo flags that make the `cuda` build
# tag work on a machine that has no CUDA toolkit:
#
#	eval "$(scripts/cuda-headers.sh)"
#	go vet -tags cuda ./cuda/
#	go test -c -tags cuda -o .build/cuda.test ./cuda
#
# Package cuda needs only the header at build time: it opens libcuda.so.1
# (the driver's library) when a program first uses the backend, so its
# binaries start on machines without a GPU and report why CUDA is missing.
# The stub library is for programs that link the driver API directly
# (gorgonia.org/cu links -lcuda); CGO_LDFLAGS points at it.
#
# Why CUDA 11.8 (or 12) and not 13: gorgonia.org/cu v0.9.6 calls the driver
# API by its CUDA 11 names. CUDA 13's cuda.h maps cuCtxCreate to
# cuCtxCreate_v4, which takes an extra CUctxCreateParams argument, and
# replaced cuMemAdvise and cuMemPrefetchAsync by their _v2 forms, which take
# a CUmemLocation struct instead of a device number; cu's cgo calls to those
# functions no longer compile against it. Debian bookworm's non-free
# nvidia-cuda-dev ships 11.8, which compiles them.
#
# Needs apt-get (Debian bookworm or a derivative). Run from anywhere; the
# files land in the repository's .cuda/. Idempotent.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/.cuda"
inc="$dest/usr/include"
stub="$dest/usr/lib/x86_64-linux-gnu/stubs"

if [ ! -f "$inc/cuda.h" ] || [ ! -f "$stub/libcuda.so" ]; then
  # nvidia-cuda-dev lives in Debian's non-free component.
  . "$root/scripts/nonfree-sources.sh"
  if add_nonfree_sources; then
    $SUDO apt-get update -qq >&2
  fi
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  # apt-get download fetches the .deb into the current directory without
  # installing it or its dependencies. The package holds cuda.h and the
  # stub libcuda.so (usr/lib/x86_64-linux-gnu/stubs/).
  if ! (cd "$tmp" && apt-get download nvidia-cuda-dev >&2); then
    $SUDO apt-get update -qq >&2
    (cd "$tmp" && apt-get download nvidia-cuda-dev >&2)
  fi
  mkdir -p "$dest"
  dpkg -x "$tmp"/nvidia-cuda-dev_*.deb "$dest"
fi

test -f "$inc/cuda.h" || { echo "cuda-headers: $inc/cuda.h missing after extraction" >&2; exit 1; }
ver=$(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$inc/cuda.h")
echo "cuda-headers: cuda.h CUDA_VERSION $ver in $inc" >&2
echo "export CGO_CFLAGS=\"-I$inc\""
echo "export CGO_LDFLAGS=\"-L$stub\""
