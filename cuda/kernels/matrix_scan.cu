// matrix_scan: h_t = A_t h_{t-1} + b_t per 2x2 block, A (B,T,N,2,2),
// b and h (B,T,N,2), h0 (B,N,2) or null for zeros, and its backward,
// exported as matrix_scan_{fwd,bwd}_{f32,f16,bf16}.
//
// Layout (the elementwise scans' of elementwise.cuh, with a 2x2 block for
// a channel). A thread block serves one batch row b and a tile of
// W = blockDim.x contiguous blocks n, thread x owning n0 + x, so a warp's
// loads of one step are one contiguous run of W*4 elements of A and W*2 of
// b; threadIdx.y is the chunk c of C = blockDim.y. The host picks W
// (affineTile) and C (chunkCount). Threads past the last n load the
// identity and store nothing.
//
// T is walked in segments of C*S steps (the backward from the last);
// chunk c of a segment is its steps [c*S, (c+1)*S), held in registers, so
// every input element is read once (the block kernels of affine.cuh read
// each chunk twice). A chunk's map is h -> P h + q (P 2x2); with C > 1 each
// thread forms its chunk's map from its registers, the maps meet in shared
// memory (6*C*W floats, dynamic) after one barrier, and every thread of the
// lane folds them in order from the segment's carry: the fold up to its
// own chunk is its carry-in (it then re-applies its steps from registers
// and stores), the fold over all C is the next segment's carry, computed
// alike by every thread of the lane. A second barrier frees the shared
// memory. C = 1 is the plain sequential recurrence, no barriers. Steps
// past T are the identity (A = I, b = 0).
//
// Composing maps is exact algebra but not IEEE-identical to the sequential
// recurrence once a value is infinite or NaN (it can form inf - inf or
// 0 * inf where the sequential order does not). So when an aggregate or a
// carry of a segment is not finite, the threads of that lane walk the
// whole segment sequentially from the segment's carry, reading from
// memory and storing only their own steps: NaN and Inf then propagate
// exactly as in the sequential reference. The walk holds no barrier; the
// other lanes of the block meet the next segment's barriers as usual.
#include "common.cuh"

// Steps per thread and segment held in registers: 6 floats per step in
// both directions (A and b forward, A and dh backward), 48 registers,
// within the 64 a thread of a 1024-thread block has.
#ifndef MS_SEG
#define MS_SEG 8
#endif
// Both directions hold their steps as loaded (MsSeg): in the 16-bit types
// a step takes 3 registers, not 6, so the forward's segment holds half as
// many steps again (12; ptxas -v on sm_90: 16 steps spill three times the
// bytes of 12, 8 steps put half the bytes in flight).
template <int DT>
__device__ constexpr int ms_seg_fwd() {
    return DT == DT_F32 ? MS_SEG : MS_SEG + MS_SEG / 2;
}
// MS_MAX_THREADS and MS_MAX_THREADS_BWD are the largest blocks the host
// launches (the kernels' __launch_bounds__). The f32 backward's 512 leaves
// a thread 128 registers, room for h_{t-1} of its segment beside A and dh
// (MS_BWD_PRELOAD; with 64, ptxas spilled 284 bytes).
#define MS_MAX_THREADS 1024
#define MS_MAX_THREADS_BWD(DT) ((DT) == DT_F32 ? 512 : 1024)
// MS_BWD_PRELOAD says whether the backward loads h_{t-1} with a segment's
// other inputs (f32) or at its store (f16, bf16). Loaded at its store, a
// step's h_{t-1} comes after the stores of the step before, above which
// the compiler does not move a load: one round trip to memory per step.
// On an H200 the preload took the f32 backward at the large shape from
// 1.29 to 1.03 ms (lab 19 to 13 us, long-T 53 to 42 us), but the 16-bit
// ones from 830 to 900 us (f16) and 806 to 856 us (bf16): at 95
// registers a thread their blocks of 512 run one to an SM instead of two.
#define MS_BWD_PRELOAD(DT) ((DT) == DT_F32)

struct MsLane {
    i64 b;    // batch row
    i64 n;    // block
    bool on;  // n < N
    int w;    // place in the tile
    int W;    // tile width
    int c;    // chunk
    int C;    // number of chunks
};

__device__ __forceinline__ MsLane ms_lane(i64 N) {
    MsLane l;
    l.W = (int)blockDim.x;
    l.w = (int)threadIdx.x;
    l.c = (int)threadIdx.y;
    l.C = (int)blockDim.y;
    const i64 tiles = (N + l.W - 1) / l.W;
    l.b = (i64)blockIdx.x / tiles;
    l.n = ((i64)blockIdx.x % tiles) * l.W + l.w;
    l.on = l.n < N;
    return l;
}

__device__ __forceinline__ bool ms_finite(float x) { return fabsf(x) <= 3.402823466e38f; }

// ms_ld4 reads the 2x2 block of A at element offset i (a multiple of 4, so
// 16-byte aligned for f32) row-major into a.
template <int DT>
__device__ __forceinline__ void ms_ld4(const void* __restrict__ p, i64 i, float* a) {
    if (DT == DT_F32) {
        const float4 v = __ldg((const float4*)((const float*)p + i));
        a[0] = v.x;
        a[1] = v.y;
        a[2] = v.z;
        a[3] = v.w;
    } else {
        // One 8-byte load of the four 16-bit elements (element i + e in
        // bits 16e..16e+15), widened after it.
        const unsigned long long w = __ldg((const unsigned long long*)((const unsigned short*)p + i));
        for (int e = 0; e < 4; e++) {
            a[e] = widen<DT>((unsigned short)(w >> (16 * e)));
        }
    }
}

// ms_ld2 reads the 2-vector at element offset i (even).
template <int DT>
__device__ __forceinline__ void ms_ld2(const void* __restrict__ p, i64 i, float& x0, float& x1) {
#ifdef __CUDACC__
    if (DT == DT_F32) {
        const float2 v = __ldg((const float2*)((const float*)p + i));
        x0 = v.x;
        x1 = v.y;
        return;
    }
#endif
    if (DT == DT_F32) {
        x0 = ld<DT>(p, i);
        x1 = ld<DT>(p, i + 1);
    } else {
        // One 4-byte load of both 16-bit elements.
        const unsigned int w = __ldg((const unsigned int*)((const unsigned short*)p + i));
        x0 = widen<DT>((unsigned short)w);
        x1 = widen<DT>((unsigned short)(w >> 16));
    }
}

// ms_st2 stores the 2-vector (x0, x1) at element offset i (even).
template <int DT>
__device__ __forceinline__ void ms_st2(void* __restrict__ p, i64 i, float x0, float x1) {
#ifdef __CUDACC__
    if (DT == DT_F32) {
        *(float2*)((float*)p + i) = make_float2(x0, x1);
        return;
    }
#endif
    if (DT == DT_F32) {
        st<DT>(p, i, x0);
        st<DT>(p, i + 1, x1);
    } else {
        *(unsigned int*)((unsigned short*)p + i) = narrow<DT>(x0) | (narrow<DT>(x1) << 16);
    }
}

// ms_st4 stores the 2x2 block (row-major) at element offset i (a multiple
// of 4).
template <int DT>
__device__ __forceinline__ void ms_st4(void* __restrict__ p, i64 i, float a0, float a1, float a2,
                                       float a3) {
    if (DT == DT_F32) {
        float4 v;
        v.x = a0;
        v.y = a1;
        v.z = a2;
        v.w = a3;
        *(float4*)((float*)p + i) = v;
    } else {
        const unsigned long long lo = narrow<DT>(a0) | (narrow<DT>(a1) << 16);
        const unsigned long long hi = narrow<DT>(a2) | (narrow<DT>(a3) << 16);
        *(unsigned long long*)((unsigned short*)p + i) = lo | (hi << 32);
    }
}

// MsSeg<DT, S> holds S steps of a lane in registers: A_t's 2x2 block (a)
// and a 2-vector (x: b_t forward, dh_t backward). ld loads step s from
// block base + t*N, or sets the identity step (A = I, x = 0) where !ok;
// a and x widen where used. f32 keeps the floats; the 16-bit types keep
// the loaded words (Words), so nothing is widened between the loads of a
// segment and all of them are in flight before the first is used.
template <int DT, int S>
struct MsSeg {
    Words<DT, 4> ra[S];
    Words<DT, 2> rx[S];
    __device__ __forceinline__ void ld(const void* __restrict__ A, const void* __restrict__ X, int s, bool ok,
                                       i64 base, i64 t, i64 N) {
        if (ok) {
            const i64 blk = base + t * N;
            words_ld<DT, 4>(A, blk * 4, ra[s]);
            words_ld<DT, 2>(X, blk * 2, rx[s]);
        } else {
            // The bits of 1.0 in elements 0 and 3 of A, of 0.0 elsewhere.
            const unsigned int one = DT == DT_F16 ? 0x3c00u : 0x3f80u;
            ra[s].w[0] = one;
            ra[s].w[1] = one << 16;
            rx[s].w[0] = 0;
        }
    }
    __device__ __forceinline__ float a(int s, int e) const { return words_at(ra[s], e); }
    __device__ __forceinline__ float x(int s, int e) const { return words_at(rx[s], e); }
};
template <int S>
struct MsSeg<DT_F32, S> {
    float ra[4 * S], rx[2 * S];
    __device__ __forceinline__ void ld(const void* __restrict__ A, const void* __restrict__ X, int s, bool ok,
                                       i64 base, i64 t, i64 N) {
        if (ok) {
            const i64 blk = base + t * N;
            ms_ld4<DT_F32>(A, blk * 4, ra + 4 * s);
            ms_ld2<DT_F32>(X, blk * 2, rx[2 * s], rx[2 * s + 1]);
        } else {
            ra[4 * s] = 1.0f;
            ra[4 * s + 1] = 0.0f;
            ra[4 * s + 2] = 0.0f;
            ra[4 * s + 3] = 1.0f;
            rx[2 * s] = 0.0f;
            rx[2 * s + 1] = 0.0f;
        }
    }
    __device__ __forceinline__ float a(int s, int e) const { return ra[4 * s + e]; }
    __device__ __forceinline__ float x(int s, int e) const { return rx[2 * s + e]; }
};

template <int DT>
__device__ __forceinline__ void ms_fwd(const void* __restrict__ A, const void* __restrict__ X,
                                       const void* __restrict__ H0, void* __restrict__ H, i64 T,
                                       i64 N) {
    // Aggregates, one array of C*W per component (P row-major, then q), so
    // that the lanes of a warp touch consecutive words.
    DYNAMIC_SHARED(agg);
    const MsLane l = ms_lane(N);
    const int CW = l.C * l.W;
    const int me = l.c * l.W + l.w;
    const i64 base = l.b * T * N + l.n;  // block (b, 0, n); step t is base + t*N
    float c0 = 0.0f, c1 = 0.0f;          // h entering the segment
    if (l.on && H0 != nullptr) {
        ms_ld2<DT>(H0, (l.b * N + l.n) * 2, c0, c1);
    }
    constexpr int S = ms_seg_fwd<DT>();
    const i64 span = (i64)l.C * S;
    for (i64 s0 = 0; s0 < T; s0 += span) {
        const i64 t0 = s0 + (i64)l.c * S;
        MsSeg<DT, S> g;
#pragma unroll
        for (int s = 0; s < S; s++) {
            g.ld(A, X, s, l.on && t0 + s < T, base, t0 + s, N);
        }
        float h0 = c0, h1 = c1;
        bool seq = false;
        if (l.C > 1) {
            // The chunk's map from a zero carry: P = A_last ... A_first.
            float p00 = 1.0f, p01 = 0.0f, p10 = 0.0f, p11 = 1.0f, q0 = 0.0f, q1 = 0.0f;
#pragma unroll
            for (int s = 0; s < S; s++) {
                const float a00 = g.a(s, 0), a01 = g.a(s, 1);
                const float a10 = g.a(s, 2), a11 = g.a(s, 3);
                const float n00 = fmaf(a00, p00, a01 * p10), n01 = fmaf(a00, p01, a01 * p11);
                const float n10 = fmaf(a10, p00, a11 * p10), n11 = fmaf(a10, p01, a11 * p11);
                p00 = n00;
                p01 = n01;
                p10 = n10;
                p11 = n11;
                const float m0 = fmaf(a00, q0, fmaf(a01, q1, g.x(s, 0)));
                const float m1 = fmaf(a10, q0, fmaf(a11, q1, g.x(s, 1)));
                q0 = m0;
                q1 = m1;
            }
            agg[me] = p00;
            agg[CW + me] = p01;
            agg[2 * CW + me] = p10;
            agg[3 * CW + me] = p11;
            agg[4 * CW + me] = q0;
            agg[5 * CW + me] = q1;
            __syncthreads();
            float x0 = c0, x1 = c1;
            bool ok = ms_finite(x0) && ms_finite(x1);
            for (int k = 0; k < l.C; k++) {
                const int o = k * l.W + l.w;
                const float g00 = agg[o], g01 = agg[CW + o], g10 = agg[2 * CW + o];
                const float g11 = agg[3 * CW + o], g0 = agg[4 * CW + o], g1 = agg[5 * CW + o];
                if (k == l.c) {
                    h0 = x0;
                    h1 = x1;
                }
                const float y0 = fmaf(g00, x0, fmaf(g01, x1, g0));
                const float y1 = fmaf(g10, x0, fmaf(g11, x1, g1));
                x0 = y0;
                x1 = y1;
                ok = ok && ms_finite(g00) && ms_finite(g01) && ms_finite(g10) && ms_finite(g11) &&
                     ms_finite(g0) && ms_finite(g1) && ms_finite(x0) && ms_finite(x1);
            }
            __syncthreads();  // the aggregates are rewritten by the next segment
            if (ok) {
                c0 = x0;
                c1 = x1;
            } else {
                seq = true;
            }
        }
        if (seq) {
            // The sequential walk of the whole segment from its carry.
            const i64 e = s0 + span < T ? s0 + span : T;
            float y0 = c0, y1 = c1;
            for (i64 t = s0; l.on && t < e; t++) {
                const i64 blk = base + t * N;
                float a[4], x0, x1;
                ms_ld4<DT>(A, blk * 4, a);
                ms_ld2<DT>(X, blk * 2, x0, x1);
                const float n0 = fmaf(a[0], y0, fmaf(a[1], y1, x0));
                const float n1 = fmaf(a[2], y0, fmaf(a[3], y1, x1));
                y0 = n0;
                y1 = n1;
                if (t >= t0 && t < t0 + S) {
                    ms_st2<DT>(H, blk * 2, y0, y1);
                }
            }
            c0 = y0;
            c1 = y1;
            continue;
        }
        // Re-apply the chunk's steps from its carry-in and store.
#pragma unroll
        for (int s = 0; s < S; s++) {
            const float n0 = fmaf(g.a(s, 0), h0, fmaf(g.a(s, 1), h1, g.x(s, 0)));
            const float n1 = fmaf(g.a(s, 2), h0, fmaf(g.a(s, 3), h1, g.x(s, 1)));
            h0 = n0;
            h1 = n1;
            if (l.on && t0 + s < T) {
                ms_st2<DT>(H, (base + (t0 + s) * N) * 2, h0, h1);
            }
        }
        if (l.C == 1) {
            c0 = h0;
            c1 = h1;
        }
    }
}

// ms_store_bwd writes step t's gradients of block blk, G_t = (g0, g1):
// db_t = G_t and dA_t = G_t h_{t-1}^T, h_{-1} = h0 or 0, reading h_{t-1}
// here.
template <int DT>
__device__ __forceinline__ void ms_store_bwd(const MsLane& l, const void* __restrict__ H0,
                                             const void* __restrict__ H, void* __restrict__ dA,
                                             void* __restrict__ dX, i64 blk, i64 t, i64 N,
                                             float g0, float g1) {
    float p0 = 0.0f, p1 = 0.0f;
    if (t > 0) {
        ms_ld2<DT>(H, (blk - N) * 2, p0, p1);
    } else if (H0 != nullptr) {
        ms_ld2<DT>(H0, (l.b * N + l.n) * 2, p0, p1);
    }
    ms_st2<DT>(dX, blk * 2, g0, g1);
    ms_st4<DT>(dA, blk * 4, g0 * p0, g0 * p1, g1 * p0, g1 * p1);
}

// ms_store_bwd_pre is ms_store_bwd with h_{t-1} = (p0, p1) loaded before.
template <int DT>
__device__ __forceinline__ void ms_store_bwd_pre(void* __restrict__ dA, void* __restrict__ dX, i64 blk,
                                                 float g0, float g1, float p0, float p1) {
    ms_st2<DT>(dX, blk * 2, g0, g1);
    ms_st4<DT>(dA, blk * 4, g0 * p0, g0 * p1, g1 * p0, g1 * p1);
}

// The reverse scan: G_t = dh_t + A_{t+1}^T G_{t+1}; db_t = G_t;
// dA_t = G_t h_{t-1}^T; dh0 = A_0^T G_0. The carry into step t from the
// right is u = A_{t+1}^T G_{t+1}; a chunk maps the carry entering at its
// end to u -> P u + q, P = A_first^T ... A_last^T. Segments are walked from
// the last, chunks fold those after them; the registers hold A and dh of
// the chunk's steps, and in f32 also h_{t-1}, all loaded at the segment's
// start (MS_BWD_PRELOAD; the 16-bit types read h_{t-1} at each store).
template <int DT>
__device__ __forceinline__ void ms_bwd(const void* __restrict__ A, const void* __restrict__ H0,
                                       const void* __restrict__ H, const void* __restrict__ dH,
                                       void* __restrict__ dA, void* __restrict__ dX,
                                       void* __restrict__ dH0, i64 T, i64 N) {
    DYNAMIC_SHARED(agg);
    const MsLane l = ms_lane(N);
    const int CW = l.C * l.W;
    const int me = l.c * l.W + l.w;
    const i64 base = l.b * T * N + l.n;
    float c0 = 0.0f, c1 = 0.0f;  // u entering the segment's last step
    const i64 span = (i64)l.C * MS_SEG;
    for (i64 s0 = (T - 1) / span * span; s0 >= 0; s0 -= span) {
        const i64 t0 = s0 + (i64)l.c * MS_SEG;
        // A_t, dh_t (and in f32 h_{t-1}) of the chunk's steps.
        MsSeg<DT, MS_SEG> seg;
#pragma unroll
        for (int s = 0; s < MS_SEG; s++) {
            seg.ld(A, dH, s, l.on && t0 + s < T, base, t0 + s, N);
        }
        constexpr int NP = MS_BWD_PRELOAD(DT) ? MS_SEG : 1;
        float hp0[NP], hp1[NP];
        if constexpr (MS_BWD_PRELOAD(DT)) {
#pragma unroll
            for (int s = 0; s < MS_SEG; s++) {
                const i64 t = t0 + s;
                hp0[s] = 0.0f;
                hp1[s] = 0.0f;
                if (l.on && t < T && t > 0) {
                    ms_ld2<DT>(H, (base + (t - 1) * N) * 2, hp0[s], hp1[s]);
                } else if (l.on && t == 0 && H0 != nullptr) {
                    ms_ld2<DT>(H0, (l.b * N + l.n) * 2, hp0[s], hp1[s]);
                }
            }
        }
        float u0 = c0, u1 = c1;
        bool seq = false;
        if (l.C > 1) {
            float p00 = 1.0f, p01 = 0.0f, p10 = 0.0f, p11 = 1.0f, q0 = 0.0f, q1 = 0.0f;
#pragma unroll
            for (int s = MS_SEG - 1; s >= 0; s--) {
                const float a00 = seg.a(s, 0), a01 = seg.a(s, 1);
                const float a10 = seg.a(s, 2), a11 = seg.a(s, 3);
                // P <- A^T P
                const float n00 = fmaf(a00, p00, a10 * p10), n01 = fmaf(a00, p01, a10 * p11);
                const float n10 = fmaf(a01, p00, a11 * p10), n11 = fmaf(a01, p01, a11 * p11);
                p00 = n00;
                p01 = n01;
                p10 = n10;
                p11 = n11;
                const float g0 = seg.x(s, 0) + q0, g1 = seg.x(s, 1) + q1;
                q0 = fmaf(a00, g0, a10 * g1);
                q1 = fmaf(a01, g0, a11 * g1);
            }
            agg[me] = p00;
            agg[CW + me] = p01;
            agg[2 * CW + me] = p10;
            agg[3 * CW + me] = p11;
            agg[4 * CW + me] = q0;
            agg[5 * CW + me] = q1;
            __syncthreads();
            float x0 = c0, x1 = c1;
            bool ok = ms_finite(x0) && ms_finite(x1);
            for (int k = l.C - 1; k >= 0; k--) {
                const int o = k * l.W + l.w;
                const float m00 = agg[o], m01 = agg[CW + o], m10 = agg[2 * CW + o];
                const float m11 = agg[3 * CW + o], r0 = agg[4 * CW + o], r1 = agg[5 * CW + o];
                if (k == l.c) {
                    u0 = x0;
                    u1 = x1;
                }
                const float y0 = fmaf(m00, x0, fmaf(m01, x1, r0));
                const float y1 = fmaf(m10, x0, fmaf(m11, x1, r1));
                x0 = y0;
                x1 = y1;
                ok = ok && ms_finite(m00) && ms_finite(m01) && ms_finite(m10) && ms_finite(m11) &&
                     ms_finite(r0) && ms_finite(r1) && ms_finite(x0) && ms_finite(x1);
            }
            __syncthreads();
            if (ok) {
                c0 = x0;
                c1 = x1;
            } else {
                seq = true;
            }
        }
        if (seq) {
            // The sequential walk of the whole segment from its carry.
            const i64 e = s0 + span < T ? s0 + span : T;
            float y0 = c0, y1 = c1;
            for (i64 t = e - 1; l.on && t >= s0; t--) {
                const i64 blk = base + t * N;
                float a[4], d0, d1;
                ms_ld4<DT>(A, blk * 4, a);
                ms_ld2<DT>(dH, blk * 2, d0, d1);
                const float g0 = d0 + y0, g1 = d1 + y1;
                if (t >= t0 && t < t0 + MS_SEG) {
                    ms_store_bwd<DT>(l, H0, H, dA, dX, blk, t, N, g0, g1);
                }
                y0 = fmaf(a[0], g0, a[2] * g1);
                y1 = fmaf(a[1], g0, a[3] * g1);
            }
            c0 = y0;
            c1 = y1;
        } else {
#pragma unroll
            for (int s = MS_SEG - 1; s >= 0; s--) {
                const float g0 = seg.x(s, 0) + u0, g1 = seg.x(s, 1) + u1;
                const i64 t = t0 + s;
                if (l.on && t < T) {
                    if constexpr (MS_BWD_PRELOAD(DT)) {
                        ms_store_bwd_pre<DT>(dA, dX, base + t * N, g0, g1, hp0[s], hp1[s]);
                    } else {
                        ms_store_bwd<DT>(l, H0, H, dA, dX, base + t * N, t, N, g0, g1);
                    }
                }
                u0 = fmaf(seg.a(s, 0), g0, seg.a(s, 2) * g1);
                u1 = fmaf(seg.a(s, 1), g0, seg.a(s, 3) * g1);
            }
            if (l.C == 1) {
                c0 = u0;
                c1 = u1;
            }
        }
    }
    // c is now A_0^T G_0, alike in every thread of the lane.
    if (l.on && l.c == 0 && dH0 != nullptr) {
        ms_st2<DT>(dH0, (l.b * N + l.n) * 2, c0, c1);
    }
}

#define MATRIX_SCAN(NAME, DT)                                                                   \
    extern "C" __global__ void __launch_bounds__(MS_MAX_THREADS, 1)                             \
        matrix_scan_fwd_##NAME(const void* A, const void* b, const void* h0, void* h, i64 T,    \
                               i64 N) {                                                         \
        ms_fwd<DT>(A, b, h0, h, T, N);                                                          \
    }                                                                                           \
    extern "C" __global__ void __launch_bounds__(MS_MAX_THREADS_BWD(DT), 1)                     \
        matrix_scan_bwd_##NAME(const void* A, const void* h0, const void* h, const void* dh,    \
                               void* dA, void* db, void* dh0, i64 T, i64 N) {                   \
        ms_bwd<DT>(A, h0, h, dh, dA, db, dh0, T, N);                                            \
    }

MATRIX_SCAN(f32, DT_F32)
MATRIX_SCAN(f16, DT_F16)
MATRIX_SCAN(bf16, DT_BF16)
