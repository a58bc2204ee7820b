// The lane layout of the elementwise scans (linear_scan, parallel_scan_log).
//
// A lane is one batch row b and a tile of TILE contiguous channels; the
// grid has B * ceil(D / TILE) blocks. A block is TILE x C threads:
// threadIdx.x picks the channel inside the tile (so a warp's loads of one
// step are TILE consecutive elements), threadIdx.y the chunk. The host
// picks C (a power of two, at most 32) from T and the number of lanes.
//
// T is walked in segments of C*S steps (S = SEG_FWD, SEG_LOG_FWD or
// SEG_BWD; the backwards walk the segments from the last); chunk c of a
// segment is its steps [c*S, (c+1)*S), held in registers, so every input
// is read once. Steps past T act as the identity. With C > 1 each thread
// scans its registers with a zero carry to get the chunk's aggregate
// (P, Q), the block publishes the aggregates in shared memory
// (2 * C * TILE floats, dynamic), each chunk folds the aggregates of the
// chunks before it (after it, for the reverse scans) into the segment's
// carry-in, re-scans its registers from there and stores; the fold of all
// C is the next segment's carry. Two barriers per segment; C = 1 has
// none. No block waits on another.
#pragma once
#include "common.cuh"

#define TILE 32

// Steps per thread and segment held in registers: linear_scan's forward,
// parallel_scan_log's forward (its logaddexp needs more registers), and
// both backwards. Blocks of up to 1024 threads leave 64 registers each.
#define SEG_FWD 16
#define SEG_LOG_FWD 8
#define SEG_BWD 8

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
