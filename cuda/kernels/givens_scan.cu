// givens_scan, the angle-fused Givens scan: h_t = sigma_t * R(theta_t) h_{t-1} + x_t
// per block of K channels (K in {2,4,8,16}), with theta (B,T,N,K-1),
// sigma, x and h (B,T,N,K), h0 (B,N,K) or null. R(theta) is never formed:
// the first K/2 angles rotate the pairs (0,1), (2,3), ..., then the next
// K/2-1 rotate (1,2), (3,4), ...; rotating (i,j) by th gives
// x_i' = cos(th) x_i - sin(th) x_j, x_j' = sin(th) x_i + cos(th) x_j.
//
// A lane is one block (b, n), one thread holding the K channels in
// registers, T scanned as one chunk. Exported as
// givens_scan_{fwd,bwd}_{f32,f16,bf16}_k<K>.
#include "common.cuh"

// rotate applies the rotation of the pair (I, I+1) with cosine c and sine s.
template <int K>
__device__ __forceinline__ void rotate(float (&y)[K], int i, float c, float s) {
    float yi = y[i], yj = y[i + 1];
    y[i] = c * yi - s * yj;
    y[i + 1] = s * yi + c * yj;
}

template <int DT, int K>
__device__ __forceinline__ void givens_fwd(const void* __restrict__ theta, const void* __restrict__ sigma,
                                           const void* __restrict__ x, const void* __restrict__ h0,
                                           void* __restrict__ h, i64 T, i64 N) {
    constexpr int F = K / 2;  // angles of the first layer
    const i64 lane = blockIdx.x;
    const i64 b = lane / N, n = lane % N;
    float y[K];
#pragma unroll
    for (int i = 0; i < K; i++) {
        y[i] = h0 != nullptr ? ld<DT>(h0, lane * K + i) : 0.0f;
    }
    i64 blk = b * T * N + n;
    // Unrolling lets the loads of the next steps (read-only, independent
    // of the state) be issued early.
#pragma unroll(K <= 8 ? 2 : 1)
    for (i64 t = 0; t < T; t++, blk += N) {
        const i64 th0 = blk * (K - 1);
        const i64 s0 = blk * K;
#pragma unroll
        for (int p = 0; p < F; p++) {
            float s, c;
            sincosf(ld<DT>(theta, th0 + p), &s, &c);
            rotate<K>(y, 2 * p, c, s);
        }
#pragma unroll
        for (int q = 0; q < F - 1; q++) {
            float s, c;
            sincosf(ld<DT>(theta, th0 + F + q), &s, &c);
            rotate<K>(y, 2 * q + 1, c, s);
        }
#pragma unroll
        for (int i = 0; i < K; i++) {
            y[i] = ld<DT>(sigma, s0 + i) * y[i] + ld<DT>(x, s0 + i);
            st<DT>(h, s0 + i, y[i]);
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
// step 0 it is dh0.
template <int DT, int K>
__device__ __forceinline__ void givens_bwd(const void* __restrict__ theta, const void* __restrict__ sigma,
                                           const void* __restrict__ h0, const void* __restrict__ h,
                                           const void* __restrict__ dh, void* __restrict__ dtheta,
                                           void* __restrict__ dsigma, void* __restrict__ dx,
                                           void* __restrict__ dh0, i64 T, i64 N) {
    constexpr int F = K / 2;
    const i64 lane = blockIdx.x;
    const i64 b = lane / N, n = lane % N;
    float carry[K];
#pragma unroll
    for (int i = 0; i < K; i++) {
        carry[i] = 0.0f;
    }
    i64 blk = b * T * N + (T - 1) * N + n;
    for (i64 t = T - 1; t >= 0; t--, blk -= N) {
        const i64 th0 = blk * (K - 1);
        const i64 s0 = blk * K;
        float c1[F], s1[F], c2[F > 1 ? F - 1 : 1], s2[F > 1 ? F - 1 : 1];
        float y1[K], u[K];
#pragma unroll
        for (int i = 0; i < K; i++) {
            if (t > 0) {
                y1[i] = ld<DT>(h, s0 - N * K + i);
            } else {
                y1[i] = h0 != nullptr ? ld<DT>(h0, lane * K + i) : 0.0f;
            }
        }
#pragma unroll
        for (int p = 0; p < F; p++) {
            sincosf(ld<DT>(theta, th0 + p), &s1[p], &c1[p]);
            rotate<K>(y1, 2 * p, c1[p], s1[p]);
        }
#pragma unroll
        for (int i = 0; i < K; i++) {
            u[i] = y1[i];
        }
#pragma unroll
        for (int q = 0; q < F - 1; q++) {
            sincosf(ld<DT>(theta, th0 + F + q), &s2[q], &c2[q]);
            rotate<K>(u, 2 * q + 1, c2[q], s2[q]);
        }
        float g[K];
#pragma unroll
        for (int i = 0; i < K; i++) {
            const float G = ld<DT>(dh, s0 + i) + carry[i];
            st<DT>(dx, s0 + i, G);
            st<DT>(dsigma, s0 + i, G * u[i]);
            g[i] = ld<DT>(sigma, s0 + i) * G;
        }
#pragma unroll
        for (int q = F - 2; q >= 0; q--) {
            const int i = 2 * q + 1;
            const float gi = g[i], gj = g[i + 1];
            st<DT>(dtheta, th0 + F + q, -gi * u[i + 1] + gj * u[i]);
            g[i] = c2[q] * gi + s2[q] * gj;
            g[i + 1] = -s2[q] * gi + c2[q] * gj;
        }
#pragma unroll
        for (int p = F - 1; p >= 0; p--) {
            const int i = 2 * p;
            const float gi = g[i], gj = g[i + 1];
            st<DT>(dtheta, th0 + p, -gi * y1[i + 1] + gj * y1[i]);
            g[i] = c1[p] * gi + s1[p] * gj;
            g[i + 1] = -s1[p] * gi + c1[p] * gj;
        }
#pragma unroll
        for (int i = 0; i < K; i++) {
            carry[i] = g[i];
        }
    }
    if (dh0 != nullptr) {
#pragma unroll
        for (int i = 0; i < K; i++) {
            st<DT>(dh0, lane * K + i, carry[i]);
        }
    }
}

#define GIVENS_K(NAME, DT, K)                                                                    \
    extern "C" __global__ void __launch_bounds__(1)                                              \
        givens_scan_fwd_##NAME##_k##K(const void* theta, const void* sigma, const void* x,       \
                                      const void* h0, void* h, i64 T, i64 N) {                   \
        givens_fwd<DT, K>(theta, sigma, x, h0, h, T, N);                                         \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(1)                                              \
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
