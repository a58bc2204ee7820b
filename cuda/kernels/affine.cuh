// The block affine scan H_t = A_t H_{t-1} + X_t, with A (B,T,N,K,K),
// X and H (B,T,N,K,V), H0 (B,N,K,V) or null for zeros, and its backward.
//
// Two layouts. Where T is not cut into chunks and V > 1 (the host's
// choice: many lanes, or a block too large to chunk), the row layout of
// affine_fwd_rows and affine_bwd_rows: one thread per row of H, R lanes
// per block, every input element read once in coalesced runs (the
// backward with V = 16 keeps the column layout: AFFINE_ROWS_BWD).
// Otherwise the column layout below.
//
// Lanes. With V > 1 a thread block serves one lane, the block (b, n); the
// grid has B*N blocks. With V = 1 a thread
// block serves a tile of W = blockDim.x contiguous n of one batch row b
// (the grid has B*ceil(N/W) blocks), thread x owning lane n0 + x: a warp's
// loads of A[b,t,n0..n0+W-1] are then one contiguous run of W*K*K
// elements. Threads past the last n compute lane N-1 again and store
// nothing. The host picks W (affineTile, a power of two up to 32).
//
// With V > 1 the V columns of H
// are independent recurrences that share A_t, so thread j (threadIdx.x)
// owns column j: K registers of state, updated with K*K FMAs per step. A_t
// is read by the V threads of a chunk at the same addresses (one broadcast
// load). Every register array is indexed by compile-time constants only
// (the loops over K and V are unrolled).
//
// Forward chunking: T is cut into C = blockDim.y chunks (threadIdx.y),
// chosen by the host (blockChunkCount). Pass 1: thread (j, c) scans its
// chunk from a zero state, giving column j of the chunk's offset Q_c, and
// also carries the columns j, j+V, ... of the chunk's transition product
// P_c = A_{t1-1} ... A_{t0} (started from the identity). The aggregates go
// to shared memory (C * W * (K*K + K*V) floats, dynamic); after one barrier
// each chunk folds those before it, H = P_i H + Q_i from H0, and pass 2
// re-scans its chunk from that carry and stores (where that carry is not
// finite, it is taken from the sequential recurrence over the steps before
// the chunk instead, so that NaN and Inf come out as in the sequential
// reference). Carrying P costs K * ceil(K/V) registers, so chunking is
// compiled in only where that is at most 64 (AFFINE_CHUNKABLE); elsewhere
// the host always passes C = 1.
// The backward chunks the same way (see affine_bwd).
#pragma once
#include "common.cuh"

#define AFFINE_CHUNKABLE(K, V) ((K) * (((K) + (V)-1) / (V)) <= 64)

// AFFINE_MAX_THREADS is the largest block the host launches (the kernels'
// __launch_bounds__): V columns x 32 chunks for V > 1; for V = 1, W lanes
// x C chunks with W*C*(K*K + K) floats of aggregates in 48 KiB.
#define AFFINE_MAX_THREADS(K, V) \
    ((V) > 1 ? (V)*32 : (K) <= 2 ? 1024 : (K) == 4 ? 512 : (K) == 8 ? 128 : 32)

// AFFINE_LANE defines the thread's lane: j its column of H (0 when V = 1),
// w and W its place in the tile of lanes and the tile's width (0 and 1
// when V > 1), b and n the block it computes (n clamped to N-1 past the
// tile's end), lane = b*N + n, and on whether it stores.
#define AFFINE_LANE()                                               \
    const int j = V == 1 ? 0 : (int)threadIdx.x;                    \
    const int w = V == 1 ? (int)threadIdx.x : 0;                    \
    const int W = V == 1 ? (int)blockDim.x : 1;                     \
    const i64 tiles = (N + W - 1) / W;                              \
    const i64 b = (i64)blockIdx.x / tiles;                          \
    const i64 nt = ((i64)blockIdx.x % tiles) * W + w;               \
    const bool on = V > 1 || nt < N;                                \
    const i64 n = on ? nt : N - 1;                                  \
    const i64 lane = V == 1 ? b * N + n : (i64)blockIdx.x

// ld_row reads row r[0..K) of A at element offset off. f32 rows with
// K = 4 or 8 start on a 16-byte boundary (off is a multiple of K, the
// allocation 256-byte aligned) and are read as float4: a quarter of the
// load instructions, the bottleneck of the forward where V threads share
// each A_t. 16-bit rows with K = 2, 4 or 8 (4, 8 or 16 bytes, aligned so
// too) are read as one load of whole words (words_ld) and widened
// element by element. (K = 16 keeps scalar loads: float4 rows make
// ptxas spill.)
template <int DT, int K>
__device__ __forceinline__ void ld_row(const void* __restrict__ A, i64 off, float (&r)[K]) {
    if constexpr (DT != DT_F32 && (K == 2 || K == 4 || K == 8)) {
        Words<DT, K> w;
        words_ld<DT, K>(A, off, w);
#pragma unroll
        for (int l = 0; l < K; l++) {
            r[l] = words_at<DT, K>(w, l);
        }
    } else if (DT == DT_F32 && (K == 4 || K == 8)) {
        const float4* p = (const float4*)((const float*)A + off);
#pragma unroll
        for (int q = 0; q < K / 4; q++) {
            const float4 v = __ldg(p + q);
            r[4 * q] = v.x;
            r[4 * q + 1] = v.y;
            r[4 * q + 2] = v.z;
            r[4 * q + 3] = v.w;
        }
    } else {
#pragma unroll
        for (int l = 0; l < K; l++) {
            r[l] = ld<DT>(A, off + l);
        }
    }
}

// ld_vec reads n = M contiguous elements at element offset off into r;
// f32 with M a multiple of 4 (and off too) as float4.
template <int DT, int M>
__device__ __forceinline__ void ld_vec(const void* __restrict__ p, i64 off, float (&r)[M]) {
    if (DT == DT_F32 && M % 4 == 0) {
        const float4* q = (const float4*)((const float*)p + off);
#pragma unroll
        for (int e = 0; e < M / 4; e++) {
            const float4 v = __ldg(q + e);
            r[4 * e] = v.x;
            r[4 * e + 1] = v.y;
            r[4 * e + 2] = v.z;
            r[4 * e + 3] = v.w;
        }
    } else {
#pragma unroll
        for (int e = 0; e < M; e++) {
            r[e] = ld<DT>(p, off + e);
        }
    }
}

// st_vec stores r[0..M) at element offset off, like ld_vec.
template <int DT, int M>
__device__ __forceinline__ void st_vec(void* __restrict__ p, i64 off, const float (&r)[M]) {
    if (DT == DT_F32 && M % 4 == 0) {
        float4* q = (float4*)((float*)p + off);
#pragma unroll
        for (int e = 0; e < M / 4; e++) {
            float4 v;
            v.x = r[4 * e];
            v.y = r[4 * e + 1];
            v.z = r[4 * e + 2];
            v.w = r[4 * e + 3];
            q[e] = v;
        }
    } else if (DT != DT_F32 && M % 2 == 0) {
        // Pairs of 16-bit elements narrowed into whole words and stored as
        // runs of 16, 8 or 4 bytes (off is a multiple of M). One sum tells
        // whether any of the M can be NaN, which needs the narrowings'
        // patch (a NaN sum may also come from opposite infinities: the
        // patched path is right for those too).
        Words<DT, M> o;
        float any = 0.0f;
#pragma unroll
        for (int e = 0; e < M; e++) {
            any += r[e];
        }
        if (any == any) {
#pragma unroll
            for (int e = 0; e < M / 2; e++) {
                o.w[e] = narrow_num<DT>(r[2 * e]) | (narrow_num<DT>(r[2 * e + 1]) << 16);
            }
        } else {
#pragma unroll
            for (int e = 0; e < M / 2; e++) {
                o.w[e] = narrow<DT>(r[2 * e]) | (narrow<DT>(r[2 * e + 1]) << 16);
            }
        }
        unsigned int* q = (unsigned int*)((unsigned short*)p + off);
        if constexpr (M % 8 == 0) {
#pragma unroll
            for (int e = 0; e < M / 8; e++) {
                uint4 v;
                v.x = o.w[4 * e];
                v.y = o.w[4 * e + 1];
                v.z = o.w[4 * e + 2];
                v.w = o.w[4 * e + 3];
                ((uint4*)q)[e] = v;
            }
        } else if constexpr (M % 4 == 0) {
#pragma unroll
            for (int e = 0; e < M / 4; e++) {
                uint2 v;
                v.x = o.w[2 * e];
                v.y = o.w[2 * e + 1];
                ((uint2*)q)[e] = v;
            }
        } else {
#pragma unroll
            for (int e = 0; e < M / 2; e++) {
                q[e] = o.w[e];
            }
        }
    } else {
#pragma unroll
        for (int e = 0; e < M; e++) {
            st<DT>(p, off + e, r[e]);
        }
    }
}

// The row layout's ring: the inputs of the next U steps, copied into
// shared memory as they are stored (cp_row), so that U - 1 steps of loads
// are in flight while each step waits on the one before it (common.cuh
// says why not registers). Slot u holds, for each input of a step, the
// rows of all n = blockDim.x threads side by side (thread x's row of M
// elements at x*M), each input's part padded to 16 bytes; the slots follow
// the step buffers (padded alike). U is the largest power of two up to 16
// with at most AFFINE_RING_BYTES of a thread's rows in the ring, and at
// least 2. Rows of fewer than 4 bytes (K = 1 in 16 bits) cannot be
// copied so: those lanes keep the column layout (AFFINE_ROWS).
#define AFFINE_RING_BYTES 512
#define AFFINE_ROWS(DT, K, V) ((V) > 1 && (K) * ((DT) == DT_F32 ? 4 : 2) >= 4)

__host__ __device__ constexpr int pad16(int bytes) { return (bytes + 15) / 16 * 16; }

// affine_ring_steps is U for rows of W elements a step in all (K + V
// forward, K + 2V backward) of ES bytes each.
__host__ __device__ constexpr int affine_ring_steps(int W, int ES) {
    int u = 16;
    while (u > 2 && u * W * ES > AFFINE_RING_BYTES) {
        u /= 2;
    }
    return u;
}

// RowRing addresses the ring: slots of slot bytes from base, in which
// at(u, off, m) is this thread's row of m elements of the input whose
// part starts off bytes into slot u.
template <int DT>
struct RowRing {
    static constexpr int ES = DT == DT_F32 ? 4 : 2;
    char* base;  // slot 0
    int slot;    // bytes per slot
    int x;       // this thread

    // The ring after step buffers of `before` bytes at sh, with slots of
    // slot_bytes.
    __device__ __forceinline__ RowRing(float* sh, int before, int slot_bytes)
        : base((char*)sh + pad16(before)), slot(slot_bytes), x((int)threadIdx.x) {}

    __device__ __forceinline__ char* at(int u, int off, int m) const {
        return base + u * slot + off + x * (m * ES);
    }
};

// The forward with V > 1 and one chunk (blockDim.y = 1) uses the row
// layout (where AFFINE_ROWS): thread i of a lane owns row i of H (V
// registers), and a block of blockDim.x = R*K threads serves R consecutive
// lanes (the host picks R, a power of two dividing B*N, so every thread
// has a lane). Each step a thread reads its row of A_t (K elements) and of
// X_t (V), so the R*K threads of a block read R*K*(K+V) contiguous
// elements: every input element is read once, by one thread, in coalesced
// runs (the column layout reads A_t in every one of its V threads). The
// rows of H_{t-1} are exchanged through shared memory (2 * R * K*V floats,
// alternating between even and odd steps so that one barrier per step
// suffices, as in affine_bwd), and the rows of the next U steps are in
// flight in the ring. The sums run in the sequential reference's order,
// s = X[i][j], then s += A[i][l] H[l][j] for l = 0..K-1, so the result
// matches the column layout bit for bit.
template <int DT, int K, int V>
__device__ __forceinline__ void affine_fwd_rows(const void* __restrict__ A,
                                                const void* __restrict__ X,
                                                const void* __restrict__ H0, void* __restrict__ H,
                                                i64 T, i64 N) {
    constexpr int ES = DT == DT_F32 ? 4 : 2;
    constexpr int U = affine_ring_steps(K + V, ES);
    DYNAMIC_SHARED(sh);  // [2][R][K*V]: H_{t-1}, row-major (K,V) per lane; the ring
    const int R = (int)blockDim.x / K;
    const int r = (int)threadIdx.x / K, i = (int)threadIdx.x % K;
    const i64 lane = (i64)blockIdx.x * R + r;  // b*N + n
    const i64 b = lane / N, n = lane % N;
    const int offX = pad16((int)blockDim.x * K * ES);  // X's part of a slot
    const RowRing<DT> ring(sh, 2 * R * K * V * 4, offX + pad16((int)blockDim.x * V * ES));
    float h[V];
    if (H0 != nullptr) {
        ld_vec<DT, V>(H0, lane * (K * V) + i * V, h);
    } else {
#pragma unroll
        for (int v = 0; v < V; v++) {
            h[v] = 0.0f;
        }
    }
    // Step t of the lane is block (b*T + t)*N + n; it goes to slot t % U.
    // oA and oX are the thread's rows of A and X of the next step to copy,
    // oH its row of H of the next step to store.
    const i64 blk0 = b * T * N + n;
    const i64 sA = N * (K * K), sX = N * (K * V);  // a step, in elements
    i64 oA = blk0 * (K * K) + i * K, oX = blk0 * (K * V) + i * V, oH = oX;
#pragma unroll
    for (int u = 0; u < U; u++) {
        if (u < T) {
            cp_row<DT, K>(ring.at(u, 0, K), A, oA);
            cp_row<DT, V>(ring.at(u, offX, V), X, oX);
        }
        cp_commit();
        oA += sA;
        oX += sX;
    }
    for (i64 t0 = 0; t0 < T; t0 += U) {
#pragma unroll
        for (int u = 0; u < U; u++) {
            const i64 t = t0 + u;
            if (t < T) {  // alike in the whole block: T is shared
                float* buf = sh + ((int)(t & 1) * R + r) * (K * V);
#pragma unroll
                for (int v = 0; v < V; v++) {
                    buf[i * V + v] = h[v];
                }
                cp_wait<U - 1>();  // step t's group is in
                Words<DT, K> pa;
                Words<DT, V> px;
                words_lds<DT, K>(ring.at(u, 0, K), pa);
                words_lds<DT, V>(ring.at(u, offX, V), px);
                __syncthreads();
                float out[V];
#pragma unroll
                for (int v = 0; v < V; v++) {
                    out[v] = words_at(px, v);
                }
#pragma unroll
                for (int l = 0; l < K; l++) {
                    const float a = words_at(pa, l);
#pragma unroll
                    for (int v = 0; v < V; v++) {
                        out[v] = fmaf(a, buf[l * V + v], out[v]);
                    }
                }
#pragma unroll
                for (int v = 0; v < V; v++) {
                    h[v] = out[v];
                }
                st_vec<DT, V>(H, oH, h);
                oH += sX;
                if (t + U < T) {
                    cp_row<DT, K>(ring.at(u, 0, K), A, oA);
                    cp_row<DT, V>(ring.at(u, offX, V), X, oX);
                }
                cp_commit();
                oA += sA;
                oX += sX;
            }
        }
    }
}

template <int DT, int K, int V>
__device__ __forceinline__ void affine_fwd(const void* __restrict__ A, const void* __restrict__ X,
                                           const void* __restrict__ H0, void* __restrict__ H,
                                           i64 T, i64 N) {
    if constexpr (AFFINE_ROWS(DT, K, V)) {
        if (blockDim.y == 1) {
            affine_fwd_rows<DT, K, V>(A, X, H0, H, T, N);
            return;
        }
    }
    constexpr int PC = (K + V - 1) / V;  // columns of P per thread
    const int c = threadIdx.y, C = blockDim.y;
    AFFINE_LANE();
    const i64 L = (T + C - 1) / C;
    const i64 t0 = (i64)c * L < T ? (i64)c * L : T;
    const i64 t1 = t0 + L < T ? t0 + L : T;
    float h[K];
#pragma unroll
    for (int i = 0; i < K; i++) {
        h[i] = H0 != nullptr ? ld<DT>(H0, lane * (K * V) + i * V + j) : 0.0f;
    }
    if (AFFINE_CHUNKABLE(K, V) && C > 1) {
        DYNAMIC_SHARED(agg);  // P[C][K*K], then Q[C][K*V]
        float q[K];
        float p[PC][K];
#pragma unroll
        for (int i = 0; i < K; i++) {
            q[i] = 0.0f;
#pragma unroll
            for (int m = 0; m < PC; m++) {
                p[m][i] = (j + m * V == i) ? 1.0f : 0.0f;
            }
        }
        i64 blk = b * T * N + t0 * N + n;
        for (i64 t = t0; t < t1; t++, blk += N) {
            const i64 a0 = blk * (K * K);
            const i64 x0 = blk * (K * V) + j;
            float nq[K];
            float np[PC][K];
#pragma unroll
            for (int i = 0; i < K; i++) {
                float s = ld<DT>(X, x0 + i * V);
                float r[PC], ar[K];
                ld_row<DT, K>(A, a0 + i * K, ar);
#pragma unroll
                for (int m = 0; m < PC; m++) {
                    r[m] = 0.0f;
                }
#pragma unroll
                for (int l = 0; l < K; l++) {
                    const float a = ar[l];
                    s = fmaf(a, q[l], s);
#pragma unroll
                    for (int m = 0; m < PC; m++) {
                        r[m] = fmaf(a, p[m][l], r[m]);
                    }
                }
                nq[i] = s;
#pragma unroll
                for (int m = 0; m < PC; m++) {
                    np[m][i] = r[m];
                }
            }
#pragma unroll
            for (int i = 0; i < K; i++) {
                q[i] = nq[i];
#pragma unroll
                for (int m = 0; m < PC; m++) {
                    p[m][i] = np[m][i];
                }
            }
        }
        float* P = agg;                  // P[c][w][r*K + col]
        float* Q = agg + C * W * K * K;  // Q[c][w][r*V + j]
        const int slot = c * W + w;
#pragma unroll
        for (int i = 0; i < K; i++) {
            Q[slot * (K * V) + i * V + j] = q[i];
#pragma unroll
            for (int m = 0; m < PC; m++) {
                if (j + m * V < K) {
                    P[slot * (K * K) + i * K + j + m * V] = p[m][i];
                }
            }
        }
        __syncthreads();
        for (int ci = 0; ci < c; ci++) {
            const int si = ci * W + w;
            float nh[K];
#pragma unroll
            for (int r = 0; r < K; r++) {
                float s = Q[si * (K * V) + r * V + j];
#pragma unroll
                for (int l = 0; l < K; l++) {
                    s = fmaf(P[si * (K * K) + r * K + l], h[l], s);
                }
                nh[r] = s;
            }
#pragma unroll
            for (int r = 0; r < K; r++) {
                h[r] = nh[r];
            }
        }
        // Composing the chunks' maps is exact algebra but not
        // IEEE-identical to the recurrence once a value is infinite or NaN
        // (Inf - Inf, 0 * Inf come in another order). An fma with a
        // non-finite operand is not finite, and a non-finite entry of h
        // reaches every entry in the next fold, so a finite carry-in means
        // H0 and every aggregate folded were finite. Otherwise the carry-in
        // is the sequential walk of steps 0..t0-1 from H0, from memory, with
        // the re-scan's arithmetic below.
        bool fin = true;
#pragma unroll
        for (int i = 0; i < K; i++) {
            fin = fin && fabsf(h[i]) < INFINITY;
        }
        if (!fin) {
#pragma unroll
            for (int i = 0; i < K; i++) {
                h[i] = H0 != nullptr ? ld<DT>(H0, lane * (K * V) + i * V + j) : 0.0f;
            }
            i64 wb = b * T * N + n;
            for (i64 t = 0; t < t0; t++, wb += N) {
                float out[K];
#pragma unroll
                for (int i = 0; i < K; i++) {
                    float s = ld<DT>(X, wb * (K * V) + j + i * V);
#pragma unroll
                    for (int l = 0; l < K; l++) {
                        s = fmaf(ld<DT>(A, wb * (K * K) + i * K + l), h[l], s);
                    }
                    out[i] = s;
                }
#pragma unroll
                for (int i = 0; i < K; i++) {
                    h[i] = out[i];
                }
            }
        }
    }
    // Step t of the lane: A at (b*T + t)*N + n blocks of K*K, X and H at
    // the same index in blocks of K*V.
    i64 blk = b * T * N + t0 * N + n;
    // Small blocks issue few loads per step; unrolling lets the loads of
    // the next steps (read-only, independent of h) be issued early.
#pragma unroll(K <= 4 ? 4 : 1)
    for (i64 t = t0; t < t1; t++, blk += N) {
        const i64 a0 = blk * (K * K);
        const i64 x0 = blk * (K * V) + j;
        float out[K];
#pragma unroll
        for (int i = 0; i < K; i++) {
            float s = ld<DT>(X, x0 + i * V);
            float ar[K];
            ld_row<DT, K>(A, a0 + i * K, ar);
#pragma unroll
            for (int l = 0; l < K; l++) {
                s = fmaf(ar[l], h[l], s);
            }
            out[i] = s;
        }
#pragma unroll
        for (int i = 0; i < K; i++) {
            h[i] = out[i];
            if (on) {
                st<DT>(H, x0 + i * V, out[i]);
            }
        }
    }
}

// AFFINE_ROWS_BWD says whether the backward has the row layout (with one
// chunk): where AFFINE_ROWS and V <= 8. With V = 16 a thread's rows of
// G_t, H_{t-1} and the carry alone take 48 registers; that case keeps
// the column layout.
#define AFFINE_ROWS_BWD(DT, K, V) (AFFINE_ROWS(DT, K, V) && (V) <= 8)

// affine_bwd_fill copies row i of A_t, dH_t and H_{t-1} (H0 or zeros at
// t = 0) of step t into slot u of affine_bwd_rows's ring (the parts of dH
// and H at offD and offH): oA and oD are the thread's rows of A_t and
// dH_t, in elements; H_{t-1}'s is oD - sX, a step before.
template <int DT, int K, int V>
__device__ __forceinline__ void affine_bwd_fill(const RowRing<DT>& ring, int u, int offD, int offH,
                                                const void* __restrict__ A, const void* __restrict__ H0,
                                                const void* __restrict__ H, const void* __restrict__ dH,
                                                i64 oA, i64 oD, i64 sX, i64 t, i64 lane, int i) {
    cp_row<DT, K>(ring.at(u, 0, K), A, oA);
    cp_row<DT, V>(ring.at(u, offD, V), dH, oD);
    if (t > 0) {
        cp_row<DT, V>(ring.at(u, offH, V), H, oD - sX);
    } else if (H0 != nullptr) {
        cp_row<DT, V>(ring.at(u, offH, V), H0, lane * (K * V) + i * V);
    } else {
        unsigned int* z = (unsigned int*)ring.at(u, offH, V);
#pragma unroll
        for (int e = 0; e < Words<DT, V>::n; e++) {
            z[e] = 0;  // +0 in every element type
        }
    }
}

// The backward with 1 < V <= 8 and one chunk (blockDim.y = 1) in the row
// layout of affine_fwd_rows: R lanes of K threads per block, T walked
// from the end, thread i owning row i of G_t and of the carry
// u = A_{t+1}^T G_{t+1} (V registers each). Each step thread i reads row i
// of A_t (K elements), of dH_t and of H_{t-1} (V each), all coalesced and
// read once, and publishes its rows of G_t, H_{t-1} and A_t in shared
// memory; after one barrier it forms row i of dA_t = G_t H_{t-1}^T (sums
// over the V columns) and row i of the next carry, sum over r of
// A_t[r][i] G_t[r][:]. The buffers alternate between even and odd steps
// (2 * R * (2*K*V + K*K) floats), one barrier per step. The rows of the
// next U steps are in flight in the ring (as in the forward). Sums run in
// the column layout's order (from 0, index ascending).
template <int DT, int K, int V>
__device__ __forceinline__ void affine_bwd_rows(const void* __restrict__ A,
                                                const void* __restrict__ H0,
                                                const void* __restrict__ H,
                                                const void* __restrict__ dH, void* __restrict__ dA,
                                                void* __restrict__ dX, void* __restrict__ dH0,
                                                i64 T, i64 N) {
    constexpr int ES = DT == DT_F32 ? 4 : 2;
    constexpr int U = affine_ring_steps(K + 2 * V, ES);
    constexpr int STEP = 2 * K * V + K * K;  // floats per lane and buffer
    DYNAMIC_SHARED(sh);  // [2][R][STEP]: G_t, H_{t-1} (row-major (K,V)), A_t; the ring
    const int R = (int)blockDim.x / K;
    const int r = (int)threadIdx.x / K, i = (int)threadIdx.x % K;
    const i64 lane = (i64)blockIdx.x * R + r;  // b*N + n
    const i64 b = lane / N, n = lane % N;
    const int offD = pad16((int)blockDim.x * K * ES);
    const int offH = offD + pad16((int)blockDim.x * V * ES);
    const RowRing<DT> ring(sh, 2 * R * STEP * 4, offH + pad16((int)blockDim.x * V * ES));
    float u[V];
#pragma unroll
    for (int v = 0; v < V; v++) {
        u[v] = 0.0f;
    }
    // Step t is block (b*T + t)*N + n. oA and oD are the thread's rows of
    // A and dH of the next step to copy, pA and pD those of dA and dX of
    // the next step to store; steps go back by stA and stX elements.
    const i64 last = b * T * N + (T - 1) * N + n;  // step T-1
    const i64 stA = N * (K * K), stX = N * (K * V);
    i64 oA = last * (K * K) + i * K, oD = last * (K * V) + i * V;
    i64 pA = oA, pD = oD;
    // The ring: row i of A_t, dH_t and H_{t-1} for the next U steps, step
    // T-1-q in slot q % U.
#pragma unroll
    for (int q = 0; q < U; q++) {
        const i64 t = T - 1 - q;
        if (t >= 0) {
            affine_bwd_fill<DT, K, V>(ring, q, offD, offH, A, H0, H, dH, oA, oD, stX, t, lane, i);
        }
        cp_commit();
        oA -= stA;
        oD -= stX;
    }
    for (i64 s0 = 0; s0 < T; s0 += U) {
#pragma unroll
        for (int q = 0; q < U; q++) {
            const i64 t = T - 1 - (s0 + q);
            if (t >= 0) {  // alike in the whole block
                float* buf = sh + ((int)(t & 1) * R + r) * STEP;
                float* sG = buf;
                float* sP = buf + K * V;
                float* sA = buf + 2 * K * V;
                cp_wait<U - 1>();  // step t's group is in
                Words<DT, K> pa;
                Words<DT, V> pd, ph;
                words_lds<DT, K>(ring.at(q, 0, K), pa);
                words_lds<DT, V>(ring.at(q, offD, V), pd);
                words_lds<DT, V>(ring.at(q, offH, V), ph);
                float G[V];
#pragma unroll
                for (int v = 0; v < V; v++) {
                    G[v] = words_at(pd, v) + u[v];
                    sG[i * V + v] = G[v];
                    sP[i * V + v] = words_at(ph, v);
                }
#pragma unroll
                for (int l = 0; l < K; l++) {
                    sA[i * K + l] = words_at(pa, l);
                }
                st_vec<DT, V>(dX, pD, G);
                pD -= stX;
                __syncthreads();
                // Row i of dA_t: sum over v of G_t[i][v] H_{t-1}[l][v].
                float da[K];
#pragma unroll
                for (int l = 0; l < K; l++) {
                    float acc = 0.0f;
#pragma unroll
                    for (int v = 0; v < V; v++) {
                        acc = fmaf(G[v], sP[l * V + v], acc);
                    }
                    da[l] = acc;
                }
                st_vec<DT, K>(dA, pA, da);
                pA -= stA;
                // Row i of the carry into step t-1: sum over m of
                // A_t[m][i] G_t[m][:].
#pragma unroll
                for (int v = 0; v < V; v++) {
                    u[v] = 0.0f;
                }
#pragma unroll
                for (int m = 0; m < K; m++) {
                    const float a = sA[m * K + i];
#pragma unroll
                    for (int v = 0; v < V; v++) {
                        u[v] = fmaf(a, sG[m * V + v], u[v]);
                    }
                }
                const i64 tn = t - U;
                if (tn >= 0) {
                    affine_bwd_fill<DT, K, V>(ring, q, offD, offH, A, H0, H, dH, oA, oD, stX, tn, lane, i);
                }
                cp_commit();
                oA -= stA;
                oD -= stX;
            }
        }
    }
    if (dH0 != nullptr) {
        st_vec<DT, V>(dH0, lane * (K * V) + i * V, u);
    }
}

// a_t_g sets g = A^T G for the K x K block of A at element offset a0,
// reading A row by row (ld_row); each g[l] sums over i in ascending order
// from 0.
template <int DT, int K>
__device__ __forceinline__ void a_t_g(const void* __restrict__ A, i64 a0, const float (&G)[K],
                                      float (&g)[K]) {
#pragma unroll
    for (int l = 0; l < K; l++) {
        g[l] = 0.0f;
    }
#pragma unroll
    for (int i = 0; i < K; i++) {
        float ar[K];
        ld_row<DT, K>(A, a0 + i * K, ar);
#pragma unroll
        for (int l = 0; l < K; l++) {
            g[l] = fmaf(ar[l], G[i], g[l]);
        }
    }
}

// The reverse scan G_t = dH_t + A_{t+1}^T G_{t+1}; dX_t = G_t;
// dA_t = G_t H_{t-1}^T (H_{-1} = H0 or 0); dH0 = A_0^T G_0.
//
// Thread j walks column j of G back in time, carrying g = A_t^T G_t (K
// registers). T is cut into C = blockDim.y chunks like the forward. A
// chunk maps the carry entering at its end, g_in, to
// g_out = M_c g_in + Q_c with M_c = A_{t0}^T ... A_{t1-1}^T; pass 1 builds
// Q_c (from g_in = 0) and the columns j, j+V, ... of M_c (from the
// identity, M <- A_t^T M going back in time), the chunks fold those after
// them, and pass 2 re-walks the chunk from its carry and stores (a carry
// that is not finite is the sequential walk instead, as in the forward).
//
// With V = 1, dA_t = G_t H_{t-1}^T is one thread's outer product, stored
// as it is formed. With V > 1, dA_t sums over the V columns, so at each
// step the V threads of a chunk
// put their columns of G_t and H_{t-1} into shared memory and then share
// the K*K sums of dA_t among themselves (thread j the elements j, j+V,
// ...). The buffers alternate between even and odd steps, so one barrier
// per step suffices: a buffer is rewritten two steps later, after every
// thread has passed the barrier of the step in between, which it reaches
// only when done reading. Every chunk runs ceil(T/C) steps so that all
// threads meet the same barriers; steps past a short chunk's end do
// nothing but wait.
//
// Dynamic shared memory, in floats: C*W*(K*K + K*V) for the aggregates
// when C > 1, then (V > 1) the step buffers, C * 2 * 2 * K*V.
template <int DT, int K, int V>
__device__ __forceinline__ void affine_bwd(const void* __restrict__ A, const void* __restrict__ H0,
                                           const void* __restrict__ H, const void* __restrict__ dH,
                                           void* __restrict__ dA, void* __restrict__ dX,
                                           void* __restrict__ dH0, i64 T, i64 N) {
    if constexpr (AFFINE_ROWS_BWD(DT, K, V)) {
        if (blockDim.y == 1) {
            affine_bwd_rows<DT, K, V>(A, H0, H, dH, dA, dX, dH0, T, N);
            return;
        }
    }
    constexpr int PC = (K + V - 1) / V;
    DYNAMIC_SHARED(smem);
    const int c = threadIdx.y, C = blockDim.y;
    AFFINE_LANE();
    const i64 L = (T + C - 1) / C;
    const i64 t0 = (i64)c * L < T ? (i64)c * L : T;
    const i64 t1 = t0 + L < T ? t0 + L : T;
    float g[K];
#pragma unroll
    for (int i = 0; i < K; i++) {
        g[i] = 0.0f;
    }
    float* step = smem;
    if (AFFINE_CHUNKABLE(K, V) && C > 1) {
        float* M = smem;                  // M[c][w][r*K + col]
        float* Q = smem + C * W * K * K;  // Q[c][w][r*V + j]
        step = Q + C * W * K * V;
        const int slot = c * W + w;
        float mcol[PC][K];
#pragma unroll
        for (int m = 0; m < PC; m++) {
#pragma unroll
            for (int i = 0; i < K; i++) {
                mcol[m][i] = (j + m * V == i) ? 1.0f : 0.0f;
            }
        }
        i64 blk = b * T * N + (t1 - 1) * N + n;
        for (i64 t = t1 - 1; t >= t0; t--, blk -= N) {
            const i64 a0 = blk * (K * K);
            const i64 x0 = blk * (K * V) + j;
            float G[K];
#pragma unroll
            for (int i = 0; i < K; i++) {
                G[i] = ld<DT>(dH, x0 + i * V) + g[i];
            }
            // Row by row of A_t (ld_row), each sum over i still in
            // ascending order.
            float ng[K];
            float nm[PC][K];
#pragma unroll
            for (int l = 0; l < K; l++) {
                ng[l] = 0.0f;
#pragma unroll
                for (int m = 0; m < PC; m++) {
                    nm[m][l] = 0.0f;
                }
            }
#pragma unroll
            for (int i = 0; i < K; i++) {
                float ar[K];
                ld_row<DT, K>(A, a0 + i * K, ar);
#pragma unroll
                for (int l = 0; l < K; l++) {
                    ng[l] = fmaf(ar[l], G[i], ng[l]);
#pragma unroll
                    for (int m = 0; m < PC; m++) {
                        nm[m][l] = fmaf(ar[l], mcol[m][i], nm[m][l]);
                    }
                }
            }
#pragma unroll
            for (int i = 0; i < K; i++) {
                g[i] = ng[i];
#pragma unroll
                for (int m = 0; m < PC; m++) {
                    mcol[m][i] = nm[m][i];
                }
            }
        }
#pragma unroll
        for (int i = 0; i < K; i++) {
            Q[slot * (K * V) + i * V + j] = g[i];
#pragma unroll
            for (int m = 0; m < PC; m++) {
                if (j + m * V < K) {
                    M[slot * (K * K) + i * K + j + m * V] = mcol[m][i];
                }
            }
        }
        __syncthreads();
        // The carry entering this chunk's end: fold the chunks after it.
#pragma unroll
        for (int i = 0; i < K; i++) {
            g[i] = 0.0f;
        }
        for (int ci = C - 1; ci > c; ci--) {
            const int si = ci * W + w;
            float ng[K];
#pragma unroll
            for (int r = 0; r < K; r++) {
                float s = Q[si * (K * V) + r * V + j];
#pragma unroll
                for (int l = 0; l < K; l++) {
                    s = fmaf(M[si * (K * K) + r * K + l], g[l], s);
                }
                ng[r] = s;
            }
#pragma unroll
            for (int r = 0; r < K; r++) {
                g[r] = ng[r];
            }
        }
        // As in the forward: a finite carry means every aggregate folded
        // was finite, and composing the chunks' maps is not IEEE-identical
        // to the recurrence otherwise. A carry that is not finite is
        // taken from the sequential walk of steps T-1 .. t1 instead, from
        // memory, with pass 2's arithmetic below.
        bool fin = true;
#pragma unroll
        for (int i = 0; i < K; i++) {
            fin = fin && fabsf(g[i]) < INFINITY;
        }
        if (!fin) {
#pragma unroll
            for (int i = 0; i < K; i++) {
                g[i] = 0.0f;
            }
            i64 wb = b * T * N + (T - 1) * N + n;
            for (i64 t = T - 1; t >= t1; t--, wb -= N) {
                float G[K];
#pragma unroll
                for (int i = 0; i < K; i++) {
                    G[i] = ld<DT>(dH, wb * (K * V) + j + i * V) + g[i];
                }
                a_t_g<DT, K>(A, wb * (K * K), G, g);
            }
        }
    }
    if (V == 1) {
        // One column: dA_t = G_t H_{t-1}^T is the thread's own outer
        // product; no shared step buffers, no barriers.
        i64 blk = b * T * N + (t1 - 1) * N + n;
        for (i64 t = t1 - 1; t >= t0; t--, blk -= N) {
            const i64 a0 = blk * (K * K);
            const i64 x0 = blk * K;
            float G[K], p[K];
#pragma unroll
            for (int i = 0; i < K; i++) {
                G[i] = ld<DT>(dH, x0 + i) + g[i];
                p[i] = 0.0f;
                if (t > 0) {
                    p[i] = ld<DT>(H, x0 - N * K + i);
                } else if (H0 != nullptr) {
                    p[i] = ld<DT>(H0, lane * K + i);
                }
            }
            a_t_g<DT, K>(A, a0, G, g);
            if (on) {
#pragma unroll
                for (int i = 0; i < K; i++) {
                    st<DT>(dX, x0 + i, G[i]);
#pragma unroll
                    for (int l = 0; l < K; l++) {
                        st<DT>(dA, a0 + i * K + l, G[i] * p[l]);
                    }
                }
            }
        }
        if (c == 0 && dH0 != nullptr && on) {
#pragma unroll
            for (int i = 0; i < K; i++) {
                st<DT>(dH0, lane * K + i, g[i]);
            }
        }
        return;
    }
    float* sG = step + c * (4 * K * V);  // [2][K*V]: G_t, row-major (K,V)
    float* sP = sG + 2 * K * V;          // [2][K*V]: H_{t-1}
    for (i64 s = 0; s < L; s++) {
        const i64 t = t1 - 1 - s;
        const bool on = t >= t0;
        const int buf = (int)(s & 1);
        const i64 blk = b * T * N + t * N + n;
        const i64 a0 = blk * (K * K);
        if (on) {
            // Every load of the step comes before its first store: the
            // compiler does not move a load above a store, so a store of
            // dX between the loads made the step K round trips to memory
            // (about 4 us per step at the long-T shape) instead of one.
            const i64 x0 = blk * (K * V) + j;
            float G[K], p[K];
#pragma unroll
            for (int i = 0; i < K; i++) {
                G[i] = ld<DT>(dH, x0 + i * V) + g[i];
            }
#pragma unroll
            for (int i = 0; i < K; i++) {
                p[i] = t > 0 ? ld<DT>(H, x0 - N * (K * V) + i * V)
                             : H0 != nullptr ? ld<DT>(H0, lane * (K * V) + i * V + j) : 0.0f;
            }
            // The carry into step t-1: g = A_t^T G_t.
            a_t_g<DT, K>(A, a0, G, g);
#pragma unroll
            for (int i = 0; i < K; i++) {
                st<DT>(dX, x0 + i * V, G[i]);
                sG[buf * (K * V) + i * V + j] = G[i];
                sP[buf * (K * V) + i * V + j] = p[i];
            }
        }
        __syncthreads();
        if (on) {
            for (int e = j; e < K * K; e += V) {
                const int r = e / K, col = e % K;
                float acc = 0.0f;
#pragma unroll
                for (int q = 0; q < V; q++) {
                    acc = fmaf(sG[buf * (K * V) + r * V + q], sP[buf * (K * V) + col * V + q], acc);
                }
                st<DT>(dA, a0 + e, acc);
            }
        }
    }
    if (c == 0 && dH0 != nullptr) {
#pragma unroll
        for (int i = 0; i < K; i++) {
            st<DT>(dH0, lane * (K * V) + i * V + j, g[i]);
        }
    }
}
