// parallel_scan_log: h_t = exp(lc_t) h_{t-1} + exp(lv_{t+1}), h_{-1} = exp(lv_0),
// computed in log space so that it neither overflows nor underflows:
//
//	m_{-1} = lv_0,  m_t = logaddexp(lc_t + m_{t-1}, lv_{t+1}),  h_t = exp(m_t)
//
// log_coeffs and h are (B,T,D), log_values (B,T+1,D). A chunk's map is
// m -> logaddexp(P + m, Q) with P the sum of its lc_t and Q its scan from
// m = -Inf; maps compose like the affine ones (in log space). See
// elementwise.cuh for the lane and chunk layout.
#include "elementwise.cuh"

template <int DT>
__device__ __forceinline__ void log_fwd(const void* __restrict__ lc, const void* __restrict__ lv,
                                        void* __restrict__ h, i64 T, i64 D) {
    DYNAMIC_SHARED(agg);
    Lane l = lane_of(T, D);
    const i64 base = l.b * T * D + l.d;         // (b, t, d) of lc and h
    const i64 vbase = l.b * (T + 1) * D + l.d;  // (b, s, d) of lv
    float carry = 0.0f;                         // log state entering the segment
    if (l.on) {
        carry = ld<DT>(lv, vbase);
    }
    const i64 span = (i64)l.C * SEG_LOG_FWD;
    for (i64 s0 = 0; s0 < T; s0 += span) {
        const i64 t0 = s0 + (i64)l.c * SEG_LOG_FWD;
        // Steps past T are the identity: lc = 0, lv = -Inf.
        float cv[SEG_LOG_FWD], vv[SEG_LOG_FWD];
#pragma unroll
        for (int r = 0; r < SEG_LOG_FWD; r++) {
            const i64 t = t0 + r;
            const bool in = l.on && t < T;
            cv[r] = in ? ld<DT>(lc, base + t * D) : 0.0f;
            vv[r] = in ? ld<DT>(lv, vbase + (t + 1) * D) : -INFINITY;
        }
        float m = carry;
        if (l.C > 1) {
            float P = 0.0f, Q = -INFINITY;
#pragma unroll
            for (int r = 0; r < SEG_LOG_FWD; r++) {
                Q = logaddexp(cv[r] + Q, vv[r]);
                P += cv[r];
            }
            agg[l.c * TILE + l.j] = P;
            agg[(l.C + l.c) * TILE + l.j] = Q;
            __syncthreads();
            for (int i = 0; i < l.c; i++) {
                m = logaddexp(agg[i * TILE + l.j] + m, agg[(l.C + i) * TILE + l.j]);
            }
            float next = m;
            for (int i = l.c; i < l.C; i++) {
                next = logaddexp(agg[i * TILE + l.j] + next, agg[(l.C + i) * TILE + l.j]);
            }
            carry = next;
            __syncthreads();
        }
#pragma unroll
        for (int r = 0; r < SEG_LOG_FWD; r++) {
            m = logaddexp(cv[r] + m, vv[r]);
            if (l.on && t0 + r < T) {
                st<DT>(h, base + (t0 + r) * D, expf(m));
            }
        }
        if (l.C == 1) {
            carry = m;
        }
    }
}

// The backward is the linear reverse scan with a_t = exp(lc_t):
//
//	G_t       = dh_t + exp(lc_{t+1}) G_{t+1}
//	dlv_{t+1} = G_t exp(lv_{t+1})
//	dlc_t     = G_t exp(lc_t + log h_{t-1})   (log h_{-1} = lv_0)
//	dlv_0     = G_0 exp(lc_0 + lv_0)
//
// log h_{t-1} comes from the stored output h. The carry between steps is
// g = exp(lc_t) G_t. Segments are walked from the last to the first.
template <int DT>
__device__ __forceinline__ void log_bwd(const void* __restrict__ lc, const void* __restrict__ lv,
                                        const void* __restrict__ h, const void* __restrict__ dh,
                                        void* __restrict__ dlc, void* __restrict__ dlv, i64 T,
                                        i64 D) {
    DYNAMIC_SHARED(agg);
    Lane l = lane_of(T, D);
    const i64 base = l.b * T * D + l.d;
    const i64 vbase = l.b * (T + 1) * D + l.d;
    float lv0 = 0.0f;
    if (l.on) {
        lv0 = ld<DT>(lv, vbase);
    }
    float carry = 0.0f;
    const i64 span = (i64)l.C * SEG_BWD;
    for (i64 s0 = (T - 1) / span * span; s0 >= 0; s0 -= span) {
        const i64 t0 = s0 + (i64)l.c * SEG_BWD;
        // Steps past T are the identity: lc = 0, dh = 0.
        float cv[SEG_BWD], dv[SEG_BWD], vv[SEG_BWD], pv[SEG_BWD];
#pragma unroll
        for (int r = 0; r < SEG_BWD; r++) {
            const i64 t = t0 + r;
            const bool in = l.on && t < T;
            cv[r] = in ? ld<DT>(lc, base + t * D) : 0.0f;
            dv[r] = in ? ld<DT>(dh, base + t * D) : 0.0f;
            vv[r] = in ? ld<DT>(lv, vbase + (t + 1) * D) : 0.0f;
            pv[r] = in && t > 0 ? logf(ld<DT>(h, base + (t - 1) * D)) : lv0;
        }
        float g = carry;
        if (l.C > 1) {
            float P = 1.0f, Q = 0.0f;
#pragma unroll
            for (int r = SEG_BWD - 1; r >= 0; r--) {
                const float at = expf(cv[r]);
                Q = at * (dv[r] + Q);
                P *= at;
            }
            agg[l.c * TILE + l.j] = P;
            agg[(l.C + l.c) * TILE + l.j] = Q;
            __syncthreads();
            for (int i = l.C - 1; i > l.c; i--) {
                g = fmaf(agg[i * TILE + l.j], g, agg[(l.C + i) * TILE + l.j]);
            }
            float next = g;
            for (int i = l.c; i >= 0; i--) {
                next = fmaf(agg[i * TILE + l.j], next, agg[(l.C + i) * TILE + l.j]);
            }
            carry = next;
            __syncthreads();
        }
        float G = 0.0f;
#pragma unroll
        for (int r = SEG_BWD - 1; r >= 0; r--) {
            G = dv[r] + g;
            const i64 t = t0 + r;
            if (l.on && t < T) {
                st<DT>(dlv, vbase + (t + 1) * D, G * expf(vv[r]));
                st<DT>(dlc, base + t * D, G * expf(cv[r] + pv[r]));
            }
            g = expf(cv[r]) * G;
        }
        if (l.C == 1) {
            carry = g;
        }
        if (s0 == 0 && l.c == 0 && l.on) {
            // G is G_0 here: chunk 0 of the first segment starts at step 0.
            st<DT>(dlv, vbase, G * expf(cv[0] + lv0));
        }
    }
}

#define PARALLEL_SCAN_LOG(NAME, DT)                                                              \
    extern "C" __global__ void __launch_bounds__(1024, 1)                                           \
        parallel_scan_log_fwd_##NAME(const void* lc, const void* lv, void* h, i64 T, i64 D) {    \
        log_fwd<DT>(lc, lv, h, T, D);                                                            \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(1024, 1)                                           \
        parallel_scan_log_bwd_##NAME(const void* lc, const void* lv, const void* h,              \
                                     const void* dh, void* dlc, void* dlv, i64 T, i64 D) {       \
        log_bwd<DT>(lc, lv, h, dh, dlc, dlv, T, D);                                              \
    }

PARALLEL_SCAN_LOG(f32, DT_F32)
PARALLEL_SCAN_LOG(f16, DT_F16)
PARALLEL_SCAN_LOG(bf16, DT_BF16)
