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

# One xz archive (it stores what the three binaries share about once, so
# that it fits in what a call carries): it travels to the GPU machine
# (scripts/gpu-run.sh unpacks it). The archives of an earlier build go,
# so that a call never times stale binaries.
mkdir -p .carry
rm -f .carry/bins.tgz .carry/bins.txz .carry/base.tgz .carry/base.txz .carry/variants.txz .carry/gorgonia.txz
echo "$c" > .build/commit
# xz -9's 64 MiB window spans a binary, so what the next shares with it is
# stored once: about half the size of xz's default.
tar cf - -C .build vk.test cuda.test scanbench commit | xz -9 -T1 >.carry/bins.txz
rm .build/vk.test .build/cuda.test .build/scanbench
ls -la .carry/bins.txz

# GORGONIA=1: also the gorgonia.org/cu adapter's test binary, alone in
# .carry/gorgonia.txz (with the others it would pass what a call carries):
# gpu-run.sh's gorgonia mode runs its example.
if [ "${GORGONIA:-0}" = 1 ]; then
  (cd interop/gorgoniacu && go test -c -ldflags="$flags" -tags cuda -o ../../.build/gorgoniacu.test .)
  tar cJf .carry/gorgonia.txz -C .build gorgoniacu.test
  rm .build/gorgoniacu.test
  ls -la .carry/gorgonia.txz
fi

# BASE=<commit>: also scanbench as of that commit, for gpu-run.sh's ab
# mode (.carry/base.txz, xz for the same reason as bins.txz).
if [ -n "${BASE:-}" ]; then
  wt=$(mktemp -d)
  git worktree add -q --detach "$wt" "$BASE"
  b=$(git -C "$wt" rev-parse HEAD)
  bflags="-s -w -X github.com/mingru/scans/bench.buildCommit=$b"
  (cd "$wt" && go build -ldflags="$bflags" -tags cuda -o "$OLDPWD/.build/base-scanbench" ./cmd/scanbench)
  git worktree remove --force "$wt"
  tar cf - -C .build base-scanbench | xz -9 -T1 >.carry/base.txz
  rm .build/base-scanbench
  ls -la .carry/base.txz
fi

# VARIANTS="<revision> ...": also scanbench as of each revision (a branch or
# a commit, named in results by the revision with characters other than
# letters, digits, '.', '_' and '-' turned into '_'), for gpu-run.sh's ab
# mode: every variant is timed with the binaries and the base, in turn.
# One xz archive (.carry/variants.txz), which stores the near-identical
# binaries about once.
if [ -n "${VARIANTS:-}" ]; then
  : > .build/variants.txt
  for v in $VARIANTS; do
    n=${v//[^A-Za-z0-9._-]/_}
    wt=$(mktemp -d)
    git worktree add -q --detach "$wt" "$v"
    b=$(git -C "$wt" rev-parse HEAD)
    vflags="-s -w -X github.com/mingru/scans/bench.buildCommit=$b"
    (cd "$wt" && go build -ldflags="$vflags" -tags cuda -o "$OLDPWD/.build/var-$n" ./cmd/scanbench)
    git worktree remove --force "$wt"
    echo "$n $b" >> .build/variants.txt
  done
  (cd .build && tar cf - variants.txt $(awk '{print "var-" $1}' variants.txt)) | xz -9 -T0 > .carry/variants.txz
  rm .build/variants.txt .build/var-*
  ls -la .carry/variants.txz
fi
