// givens_scan, the angle-fused Givens scan: h_t = sigma_t * R(theta_t) h_{t-1} + x_t
// per block of K channels (K in {2,4,8,16}), with theta (B,T,N,K-1),
// sigma, x and h (B,T,N,K), h0 (B,N,K) or null. R(theta) is never formed:
// the first K/2 angles rotate the pairs (0,1), (2,3), ..., then the next
// K/2-1 rotate (1,2), (3,4), ...; rotating (i,j) by th gives
// x_i' = cos(th) x_i - sin(th) x_j, x_j' = sin(th) x_i + cos(th) x_j.
//
// A thread block serves a tile of W = blockDim.x contiguous n of one batch
// row b (the grid has B*ceil(N/W) blocks) and C = blockDim.y chunks of T:
// thread (x, y) holds the K channels of lane n0 + x over chunk y in
// registers, so a warp's loads of one step are contiguous runs of W*K
// (W*(K-1) for theta) elements. Threads past the last n compute lane N-1
// again and store nothing. The host picks W (affineTile in plan.go, a
// power of two up to 32). With C > 1 a
// chunk first scans from a zero state (its offset Q_c) and carries its
// transition product P_c as K columns of K registers, applying each step
// to every column; the aggregates meet in shared memory (C * W * (K*K + K)
// floats, dynamic), each chunk folds those before it (after it, for the
// backward) and re-scans its chunk from that carry. Carrying P_c takes K*K
// registers, so chunking is compiled in for K <= 8 only
// (GIVENS_CHUNKABLE); for K = 16 the host always passes C = 1. Exported as
// givens_scan_{fwd,bwd}_{f32,f16,bf16}_k<K>.
#include "common.cuh"

#define GIVENS_CHUNKABLE(K) ((K) * (K) <= 64)

// GIVENS_MAX_THREADS is the largest block the host launches (the kernels'
// __launch_bounds__): W lanes x C chunks with W*C*(K*K + K) floats of
// aggregates in 48 KiB.
#define GIVENS_MAX_THREADS(K) ((K) <= 2 ? 1024 : (K) == 4 ? 512 : (K) == 8 ? 128 : 32)

// Step holds one step's transition A_t = diag(sigma_t) R(theta_t): the
// cosines and sines of both layers and sigma.
template <int K>
struct Step {
    static constexpr int F = K / 2;               // angles of the first layer
    static constexpr int S = F > 1 ? F - 1 : 1;  // of the second (at least 1 slot)
    float c1[F], s1[F], c2[S], s2[S], sg[K];

    template <int DT>
    __device__ __forceinline__ void load(const void* __restrict__ theta, const void* __restrict__ sigma,
                                         i64 blk) {
#pragma unroll
        for (int p = 0; p < F; p++) {
            sincosf(ld<DT>(theta, blk * (K - 1) + p), &s1[p], &c1[p]);
        }
#pragma unroll
        for (int q = 0; q < F - 1; q++) {
            sincosf(ld<DT>(theta, blk * (K - 1) + F + q), &s2[q], &c2[q]);
        }
#pragma unroll
        for (int i = 0; i < K; i++) {
            sg[i] = ld<DT>(sigma, blk * K + i);
        }
    }

    // rotate1 and rotate2 apply the first and the second layer to y.
    __device__ __forceinline__ void rotate1(float (&y)[K]) const {
#pragma unroll
        for (int p = 0; p < F; p++) {
            const float yi = y[2 * p], yj = y[2 * p + 1];
            y[2 * p] = c1[p] * yi - s1[p] * yj;
            y[2 * p + 1] = s1[p] * yi + c1[p] * yj;
        }
    }
    __device__ __forceinline__ void rotate2(float (&y)[K]) const {
#pragma unroll
        for (int q = 0; q < F - 1; q++) {
            const float yi = y[2 * q + 1], yj = y[2 * q + 2];
            y[2 * q + 1] = c2[q] * yi - s2[q] * yj;
            y[2 * q + 2] = s2[q] * yi + c2[q] * yj;
        }
    }

    // apply sets y = sigma * R y (no offset).
    __device__ __forceinline__ void apply(float (&y)[K]) const {
        rotate1(y);
        rotate2(y);
#pragma unroll
        for (int i = 0; i < K; i++) {
            y[i] = sg[i] * y[i];
        }
    }

    // applyT sets g = A^T g = R^T (sigma * g): the transposed rotations of
    // the second layer, then of the first.
    __device__ __forceinline__ void applyT(float (&g)[K]) const {
#pragma unroll
        for (int i = 0; i < K; i++) {
            g[i] = sg[i] * g[i];
        }
#pragma unroll
        for (int q = F - 2; q >= 0; q--) {
            const int i = 2 * q + 1;
            const float gi = g[i], gj = g[i + 1];
            g[i] = c2[q] * gi + s2[q] * gj;
            g[i + 1] = -s2[q] * gi + c2[q] * gj;
        }
#pragma unroll
        for (int p = F - 1; p >= 0; p--) {
            const int i = 2 * p;
            const float gi = g[i], gj = g[i + 1];
            g[i] = c1[p] * gi + s1[p] * gj;
            g[i + 1] = -s1[p] * gi + c1[p] * gj;
        }
    }
};

// Chunk is the part [t0, t1) of T that thread threadIdx.y scans, and the
// thread's lane: b and n (clamped to N-1 past the tile's end), lane =
// b*N + n, on whether it stores, and its aggregate slot c*W + w among the
// C*W in shared memory.
struct Chunk {
    int c, C, slot, W;
    i64 t0, t1;
    i64 b, n, lane;
    bool on;
};

__device__ __forceinline__ Chunk chunk_of(i64 T, i64 N) {
    Chunk k;
    k.c = threadIdx.y;
    k.C = blockDim.y;
    k.W = blockDim.x;
    k.slot = k.c * k.W + (int)threadIdx.x;
    const i64 tiles = (N + k.W - 1) / k.W;
    k.b = (i64)blockIdx.x / tiles;
    const i64 nt = ((i64)blockIdx.x % tiles) * k.W + threadIdx.x;
    k.on = nt < N;
    k.n = k.on ? nt : N - 1;
    k.lane = k.b * N + k.n;
    const i64 L = (T + k.C - 1) / k.C;
    k.t0 = (i64)k.c * L < T ? (i64)k.c * L : T;
    k.t1 = k.t0 + L < T ? k.t0 + L : T;
    return k;
}

// fold applies the aggregates of the chunks from..to (step +1 or -1,
// exclusive of to) to y: y = P_ci y + Q_ci, with P (K,K) row-major and Q
// (K) per chunk and lane in shared memory.
template <int K>
__device__ __forceinline__ void fold(float (&y)[K], const float* P, const float* Q, int from, int to,
                                     int step, int W) {
    for (int ci = from; ci != to; ci += step) {
        const int si = ci * W + (int)threadIdx.x;
        float ny[K];
#pragma unroll
        for (int r = 0; r < K; r++) {
            float s = Q[si * K + r];
#pragma unroll
            for (int l = 0; l < K; l++) {
                s = fmaf(P[si * (K * K) + r * K + l], y[l], s);
            }
            ny[r] = s;
        }
#pragma unroll
        for (int r = 0; r < K; r++) {
            y[r] = ny[r];
        }
    }
}

// publish writes a chunk's aggregate (columns pc of P, and q) to its slot
// in shared memory and waits for every chunk's.
template <int K>
__device__ __forceinline__ void publish(float* P, float* Q, int slot, const float (&pc)[K][K], const float (&q)[K]) {
#pragma unroll
    for (int r = 0; r < K; r++) {
        Q[slot * K + r] = q[r];
#pragma unroll
        for (int col = 0; col < K; col++) {
            P[slot * (K * K) + r * K + col] = pc[col][r];
        }
    }
    __syncthreads();
}

template <int DT, int K>
__device__ __forceinline__ void givens_fwd(const void* __restrict__ theta, const void* __restrict__ sigma,
                                           const void* __restrict__ x, const void* __restrict__ h0,
                                           void* __restrict__ h, i64 T, i64 N) {
    const Chunk ch = chunk_of(T, N);
    const i64 b = ch.b, n = ch.n, lane = ch.lane;
    float y[K];
#pragma unroll
    for (int i = 0; i < K; i++) {
        y[i] = h0 != nullptr ? ld<DT>(h0, lane * K + i) : 0.0f;
    }
    if (GIVENS_CHUNKABLE(K) && ch.C > 1) {
        DYNAMIC_SHARED(agg);  // P[C][W][K*K], then Q[C][W][K]
        float q[K], pc[K][K];
#pragma unroll
        for (int i = 0; i < K; i++) {
            q[i] = 0.0f;
#pragma unroll
            for (int col = 0; col < K; col++) {
                pc[col][i] = col == i ? 1.0f : 0.0f;
            }
        }
        i64 blk = b * T * N + ch.t0 * N + n;
        for (i64 t = ch.t0; t < ch.t1; t++, blk += N) {
            Step<K> st_;
            st_.template load<DT>(theta, sigma, blk);
            st_.apply(q);
#pragma unroll
            for (int i = 0; i < K; i++) {
                q[i] += ld<DT>(x, blk * K + i);
            }
#pragma unroll
            for (int col = 0; col < K; col++) {
                st_.apply(pc[col]);
            }
        }
        publish<K>(agg, agg + ch.C * ch.W * K * K, ch.slot, pc, q);
        fold<K>(y, agg, agg + ch.C * ch.W * K * K, 0, ch.c, 1, ch.W);
    }
    i64 blk = b * T * N + ch.t0 * N + n;
    // Unrolling lets the loads of the next steps (read-only, independent
    // of the state) be issued early.
#pragma unroll(K <= 8 ? 2 : 1)
    for (i64 t = ch.t0; t < ch.t1; t++, blk += N) {
        Step<K> st_;
        st_.template load<DT>(theta, sigma, blk);
        st_.rotate1(y);
        st_.rotate2(y);
#pragma unroll
        for (int i = 0; i < K; i++) {
            y[i] = st_.sg[i] * y[i] + ld<DT>(x, blk * K + i);
            if (ch.on) {
                st<DT>(h, blk * K + i, y[i]);
            }
        }
    }
}

// The reverse scan G_t = dh_t + A_{t+1}^T G_{t+1} with A = diag(sigma) R,
// so A^T g = R^T (sigma * g). At each step the rotations are recomputed in
// registers from the stored h_{t-1} (never by dividing by sigma):
//
//	y1 = first layer of R_t applied to h_{t-1};  u = second layer applied to y1
//	dx_t = G_t;  dsigma_t = G_t * u
//	gu = sigma_t * G_t, carried back through the second layer (its output u)
//	and the first (its output y1); each rotation's angle gets
//	dth = -g_i y_j + g_j y_i (y its output), and g becomes R^T g.
//
// What leaves the first layer is A_t^T G_t, the carry into step t-1; after
// step 0 it is dh0. With chunks, a chunk maps the carry entering at its
// end to M_c g + Q_c, M_c = A_{t0}^T ... A_{t1-1}^T, built in pass 1 by
// applying A_t^T to the columns of the identity going back in time.
template <int DT, int K>
__device__ __forceinline__ void givens_bwd(const void* __restrict__ theta, const void* __restrict__ sigma,
                                           const void* __restrict__ h0, const void* __restrict__ h,
                                           const void* __restrict__ dh, void* __restrict__ dtheta,
                                           void* __restrict__ dsigma, void* __restrict__ dx,
                                           void* __restrict__ dh0, i64 T, i64 N) {
    constexpr int F = K / 2;
    const Chunk ch = chunk_of(T, N);
    const i64 b = ch.b, n = ch.n, lane = ch.lane;
    float carry[K];
#pragma unroll
    for (int i = 0; i < K; i++) {
        carry[i] = 0.0f;
    }
    if (GIVENS_CHUNKABLE(K) && ch.C > 1) {
        DYNAMIC_SHARED(agg);  // M[C][W][K*K], then Q[C][W][K]
        float mc[K][K];
#pragma unroll
        for (int i = 0; i < K; i++) {
#pragma unroll
            for (int col = 0; col < K; col++) {
                mc[col][i] = col == i ? 1.0f : 0.0f;
            }
        }
        i64 blk = b * T * N + (ch.t1 - 1) * N + n;
        for (i64 t = ch.t1 - 1; t >= ch.t0; t--, blk -= N) {
            Step<K> st_;
            st_.template load<DT>(theta, sigma, blk);
#pragma unroll
            for (int i = 0; i < K; i++) {
                carry[i] += ld<DT>(dh, blk * K + i);
            }
            st_.applyT(carry);
#pragma unroll
            for (int col = 0; col < K; col++) {
                st_.applyT(mc[col]);
            }
        }
        publish<K>(agg, agg + ch.C * ch.W * K * K, ch.slot, mc, carry);
#pragma unroll
        for (int i = 0; i < K; i++) {
            carry[i] = 0.0f;
        }
        fold<K>(carry, agg, agg + ch.C * ch.W * K * K, ch.C - 1, ch.c, -1, ch.W);
    }
    i64 blk = b * T * N + (ch.t1 - 1) * N + n;
    for (i64 t = ch.t1 - 1; t >= ch.t0; t--, blk -= N) {
        const i64 th0 = blk * (K - 1);
        const i64 s0 = blk * K;
        Step<K> st_;
        st_.template load<DT>(theta, sigma, blk);
        float y1[K], u[K];
#pragma unroll
        for (int i = 0; i < K; i++) {
            if (t > 0) {
                y1[i] = ld<DT>(h, s0 - N * K + i);
            } else {
                y1[i] = h0 != nullptr ? ld<DT>(h0, lane * K + i) : 0.0f;
            }
        }
        st_.rotate1(y1);
#pragma unroll
        for (int i = 0; i < K; i++) {
            u[i] = y1[i];
        }
        st_.rotate2(u);
        float g[K];
#pragma unroll
        for (int i = 0; i < K; i++) {
            const float G = ld<DT>(dh, s0 + i) + carry[i];
            if (ch.on) {
                st<DT>(dx, s0 + i, G);
                st<DT>(dsigma, s0 + i, G * u[i]);
            }
            g[i] = st_.sg[i] * G;
        }
#pragma unroll
        for (int q = F - 2; q >= 0; q--) {
            const int i = 2 * q + 1;
            const float gi = g[i], gj = g[i + 1];
            if (ch.on) {
                st<DT>(dtheta, th0 + F + q, -gi * u[i + 1] + gj * u[i]);
            }
            g[i] = st_.c2[q] * gi + st_.s2[q] * gj;
            g[i + 1] = -st_.s2[q] * gi + st_.c2[q] * gj;
        }
#pragma unroll
        for (int p = F - 1; p >= 0; p--) {
            const int i = 2 * p;
            const float gi = g[i], gj = g[i + 1];
            if (ch.on) {
                st<DT>(dtheta, th0 + p, -gi * y1[i + 1] + gj * y1[i]);
            }
            g[i] = st_.c1[p] * gi + st_.s1[p] * gj;
            g[i + 1] = -st_.s1[p] * gi + st_.c1[p] * gj;
        }
#pragma unroll
        for (int i = 0; i < K; i++) {
            carry[i] = g[i];
        }
    }
    if (ch.c == 0 && dh0 != nullptr && ch.on) {
#pragma unroll
        for (int i = 0; i < K; i++) {
            st<DT>(dh0, lane * K + i, carry[i]);
        }
    }
}

#define GIVENS_K(NAME, DT, K)                                                                    \
    extern "C" __global__ void __launch_bounds__(GIVENS_MAX_THREADS(K), 1)                                          \
        givens_scan_fwd_##NAME##_k##K(const void* theta, const void* sigma, const void* x,       \
                                      const void* h0, void* h, i64 T, i64 N) {                   \
        givens_fwd<DT, K>(theta, sigma, x, h0, h, T, N);                                         \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(GIVENS_MAX_THREADS(K), 1)                                          \
        givens_scan_bwd_##NAME##_k##K(const void* theta, const void* sigma, const void* h0,      \
                                      const void* h, const void* dh, void* dtheta,               \
                                      void* dsigma, void* dx, void* dh0, i64 T, i64 N) {         \
        givens_bwd<DT, K>(theta, sigma, h0, h, dh, dtheta, dsigma, dx, dh0, T, N);               \
    }

#define GIVENS(NAME, DT)   \
    GIVENS_K(NAME, DT, 2)  \
    GIVENS_K(NAME, DT, 4)  \
    GIVENS_K(NAME, DT, 8)  \
    GIVENS_K(NAME, DT, 16)

GIVENS(f32, DT_F32)
GIVENS(f16, DT_F16)
GIVENS(bf16, DT_BF16)
