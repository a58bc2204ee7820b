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
// C (in parallel_scan_log's forward, whose fold steps are dearer: the last
// chunk's final state, passed through shared memory) is the next
// segment's carry. Two barriers per segment; C = 1 has none. No block
// waits on another. Folding aggregates is exact algebra but not
// IEEE-identical to the recurrence once a value is infinite or NaN: where
// a fold is not finite, the kernels take the sequential recurrence from
// memory instead, so NaN and Inf come out as in the sequential reference.
//
// Whole chunks (all S steps inside T, the lane inside D: every chunk but
// the last of T, the same for a whole warp but at the edge of D) load and
// store without per-step tests, stepping one pointer (ld_steps, st_steps).
#pragma once
#include "common.cuh"

#define TILE 32

// Steps per thread and segment held in registers: the forwards (two
// arrays of steps) and the backwards (three or four). Blocks of up to 1024
// threads leave 64 registers each.
#define SEG_FWD 16
#define SEG_LOG_FWD 16
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

// is_finite is false for +-Inf and NaN.
__device__ __forceinline__ bool is_finite(float x) { return fabsf(x) < INFINITY; }

// steps_in is how many of the S steps from t0 a lane's chunk really has:
// 0 for a lane past D, fewer than S at the end of T.
__device__ __forceinline__ int steps_in(const Lane& l, i64 t0, i64 T, int S) {
    if (!l.on || t0 >= T) {
        return 0;
    }
    return T - t0 < S ? (int)(T - t0) : S;
}

// ld_steps reads the S elements o, o + D, ..., o + (S-1) D of p into v,
// those with r < r0 or r >= n as id (identity steps, or a step whose
// element does not exist). The common case, a whole chunk (r0 = 0, n = S;
// the same for the whole warp but at the ends of T and D), loads without
// per-step tests, stepping one pointer.
template <int DT, int S>
__device__ __forceinline__ void ld_steps(const void* __restrict__ p, i64 o, i64 D, int r0, int n, float id,
                                         float (&v)[S]) {
    const int es = DT == DT_F32 ? 4 : 2;
    if (r0 == 0 && n == S) {
        const char* q = (const char*)p + o * es;
        const i64 stride = D * es;
#pragma unroll
        for (int r = 0; r < S; r++) {
            v[r] = ld<DT>(q, 0);
            q += stride;
        }
    } else {
#pragma unroll
        for (int r = 0; r < S; r++) {
            v[r] = r >= r0 && r < n ? ld<DT>(p, o + (i64)r * D) : id;
        }
    }
}

// st_steps stores v[r] at element o + r D of p for r < n.
template <int DT, int S>
__device__ __forceinline__ void st_steps(void* __restrict__ p, i64 o, i64 D, int n, const float (&v)[S]) {
    const int es = DT == DT_F32 ? 4 : 2;
    if (n == S) {
        char* q = (char*)p + o * es;
        const i64 stride = D * es;
        // A 16-bit NaN needs a patch after the hardware's narrowing
        // (common.cuh); one sum tells whether any of the S can be NaN (a
        // NaN sum may also come from opposite infinities: the careful
        // path is right for those too).
        float any = 0.0f;
        if (DT != DT_F32) {
#pragma unroll
            for (int r = 0; r < S; r++) {
                any += v[r];
            }
        }
        if (any == any) {
#pragma unroll
            for (int r = 0; r < S; r++) {
                st_num<DT>(q, 0, v[r]);
                q += stride;
            }
        } else {
#pragma unroll
            for (int r = 0; r < S; r++) {
                st<DT>(q, 0, v[r]);
                q += stride;
            }
        }
    } else {
#pragma unroll
        for (int r = 0; r < S; r++) {
            if (r < n) {
                st<DT>(p, o + (i64)r * D, v[r]);
            }
        }
    }
}
