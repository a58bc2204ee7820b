// The lane layout of the elementwise scans (linear_scan, parallel_scan_log).
//
// A lane is one batch row b and a tile of TILE x P contiguous channels;
// the grid has B * ceil(D / (TILE P)) blocks. A block is TILE x C threads:
// threadIdx.x picks the P channels inside the tile (so a warp's loads of
// one step are TILE P consecutive elements), threadIdx.y the chunk. The
// host picks C (a power of two, at most 32) from T and the number of
// lanes. P is 1, or 2 in the 16-bit forwards where D is even (the
// kernels with the suffix _pairs; parallel_scan_log's where the host's
// logPairs says so): a thread then loads the two channels of a step as
// one 32-bit word, so that its loads move 1.5 times the bytes of a
// one-channel 16-bit thread's with as many registers, and a warp's cover
// whole 128-byte lines.
//
// T is walked in segments of C*S steps (S = SEG_FWD, SEG_LOG_FWD or
// SEG_BWD; the backwards walk the segments from the last); chunk c of a
// segment is its steps [c*S, (c+1)*S), held in registers, so every input
// is read once. Steps past T act as the identity. With C > 1 each thread
// scans its registers with a zero carry to get the chunk's aggregate
// (P, Q) for each of its channels, the block publishes the aggregates in
// shared memory (2 * C * TILE * P floats, dynamic), each chunk folds the
// aggregates of the chunks before it (after it, for the reverse scans)
// into the segment's carry-in, re-scans its registers from there and
// stores; the fold of all C (in parallel_scan_log's forward, whose fold
// steps are dearer: the last chunk's final state, passed through shared
// memory) is the next segment's carry. Two barriers per segment; C = 1
// has none. No block waits on another. Folding aggregates is exact algebra
// but not IEEE-identical to the recurrence once a value is infinite or
// NaN: where a fold is not finite, the kernels take the sequential
// recurrence from memory instead, so NaN and Inf come out as in the
// sequential reference.
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
// linear_scan's 16-bit forward with two channels per thread: 12 steps
// (ptxas: no spills in f16, 20 bytes in bf16; on an H200 16 steps ran
// f16 5% faster but bf16 7% slower, 8 steps both 10-15% slower).
#define SEG_PAIRS 12

struct Lane {
    i64 b;     // batch row
    i64 d;     // the first of the thread's channels
    bool on;   // d < D (threads past the last channel only join barriers)
    int j;     // thread inside the tile
    int c;     // chunk
    int C;     // number of chunks
    i64 t0;    // first step of the chunk
    i64 t1;    // one past its last step
};

// lane_of is the lane of this thread for P channels per thread (with P =
// 2, D is even, so both channels exist where the first does).
template <int P>
__device__ __forceinline__ Lane lane_of(i64 T, i64 D) {
    Lane l;
    i64 tiles = (D + TILE * P - 1) / (TILE * P);
    l.b = (i64)blockIdx.x / tiles;
    l.j = threadIdx.x;
    l.d = ((i64)blockIdx.x % tiles) * TILE * P + (i64)l.j * P;
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

// agg_at is the shared-memory slot of aggregate part w (0 for P, 1 for Q)
// of chunk i for channel ch of the thread: one plane of C x TILE floats
// per part and channel, so a warp's accesses are consecutive.
template <int P>
__device__ __forceinline__ int agg_at(const Lane& l, int w, int i, int ch) {
    return ((w * P + ch) * l.C + i) * TILE + l.j;
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

// A thread's registers hold a step of its P channels as a Step<DT, P>:
// with P = 1 the element widened to f32 where it is loaded (a float); with
// P = 2 (16-bit types only) a Pair, the 32-bit word of both elements as
// loaded, channel 0 in the low half, widened where used (step_at) and
// overwritten in place by the step's narrowed results (step_set), so that
// a chunk takes one register per step either way.
template <int DT>
struct Pair {
    unsigned int w;
};
template <int DT, int P>
struct StepOf {
    typedef float type;
};
template <int DT>
struct StepOf<DT, 2> {
    typedef Pair<DT> type;
};
template <int DT, int P>
using Step = typename StepOf<DT, P>::type;

__device__ __forceinline__ float step_at(float f, int) { return f; }

template <int DT>
__device__ __forceinline__ float step_at(Pair<DT> s, int ch) {
    return widen<DT>((unsigned short)(s.w >> (16 * ch)));
}

__device__ __forceinline__ void step_set(float& f, const float (&y)[1]) { f = y[0]; }

template <int DT>
__device__ __forceinline__ void step_set(Pair<DT>& s, const float (&y)[2]) {
    s.w = narrow<DT>(y[0]) | (narrow<DT>(y[1]) << 16);
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

// The same for Pairs: element o and o + 1 of each step as one word (o
// even), both as id where the step is absent.
template <int DT, int S>
__device__ __forceinline__ void ld_steps(const void* __restrict__ p, i64 o, i64 D, int r0, int n, float id,
                                         Pair<DT> (&v)[S]) {
    const unsigned int h = narrow_sw<DT>(id);
    const unsigned int* q = (const unsigned int*)p + o / 2;
    const i64 stride = D / 2;
    if (r0 == 0 && n == S) {
#pragma unroll
        for (int r = 0; r < S; r++) {
            v[r].w = __ldg(q);
            q += stride;
        }
    } else {
#pragma unroll
        for (int r = 0; r < S; r++) {
            v[r].w = r >= r0 && r < n ? __ldg(q + r * stride) : h | (h << 16);
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

// The same for Pairs, which hold their results narrowed (step_set).
template <int DT, int S>
__device__ __forceinline__ void st_steps(void* __restrict__ p, i64 o, i64 D, int n, const Pair<DT> (&v)[S]) {
    unsigned int* q = (unsigned int*)p + o / 2;
    const i64 stride = D / 2;
#pragma unroll
    for (int r = 0; r < S; r++) {
        if (n == S || r < n) {
            *q = v[r].w;
        }
        q += stride;
    }
}
