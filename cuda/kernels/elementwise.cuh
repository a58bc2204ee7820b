// The lane layout of the elementwise scans (linear_scan, parallel_scan_log).
//
// A lane is one batch row b and a tile of TILE contiguous channels; the
// grid has B * ceil(D / TILE) blocks. A block is TILE x C threads:
// threadIdx.x picks the channel inside the tile (so a warp's loads of one
// step are TILE consecutive elements), threadIdx.y the chunk of T. Chunk c
// covers steps [c*L, min((c+1)*L, T)) with L = ceil(T / C); trailing
// chunks may be empty (they act as the identity). The host picks C (a power
// of two, at most 32) from T and the number of lanes; C = 1 skips the
// aggregate pass.
//
// The scan of a chunk is the composition of affine maps; each thread first
// scans its chunk with a zero carry to get its aggregate (P, Q), the block
// publishes the aggregates in shared memory (2 * C * TILE floats, dynamic),
// each chunk folds the aggregates of the chunks before it (after it, for
// the reverse scans) into its carry, and re-scans its chunk from that
// carry, storing outputs. No block waits on another.
#pragma once
#include "common.cuh"

#define TILE 32

struct Lane {
    i64 b;     // batch row
    i64 d;     // channel
    bool on;   // d < D (threads past the last channel only join barriers)
    int j;     // channel inside the tile
    int c;     // chunk
    int C;     // number of chunks
    i64 t0;    // first step of the chunk
    i64 t1;    // one past its last step
};

__device__ __forceinline__ Lane lane_of(i64 T, i64 D) {
    Lane l;
    i64 tiles = (D + TILE - 1) / TILE;
    l.b = (i64)blockIdx.x / tiles;
    l.j = threadIdx.x;
    l.d = ((i64)blockIdx.x % tiles) * TILE + l.j;
    l.on = l.d < D;
    l.c = threadIdx.y;
    l.C = blockDim.y;
    i64 L = (T + l.C - 1) / l.C;
    l.t0 = (i64)l.c * L;
    l.t1 = l.t0 + L < T ? l.t0 + L : T;
    if (l.t0 > T) {
        l.t0 = T;
    }
    return l;
}
