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
    const i64 base = l.b * T * D + l.d;          // (b, t, d) of lc and h
    const i64 vbase = l.b * (T + 1) * D + l.d;   // (b, s, d) of lv
    float m = 0.0f;
    if (l.on) {
        m = ld<DT>(lv, vbase);
    }
    if (l.C > 1) {
        float P = 0.0f, Q = -INFINITY;
        if (l.on && l.t0 < l.t1) {
            // The first step from m = -Inf is lv_{t0+1} itself.
            P = ld<DT>(lc, base + l.t0 * D);
            Q = ld<DT>(lv, vbase + (l.t0 + 1) * D);
            for (i64 t = l.t0 + 1; t < l.t1; t++) {
                float ct = ld<DT>(lc, base + t * D);
                Q = logaddexp(ct + Q, ld<DT>(lv, vbase + (t + 1) * D));
                P += ct;
            }
        }
        agg[l.c * TILE + l.j] = P;
        agg[(l.C + l.c) * TILE + l.j] = Q;
        __syncthreads();
        for (int i = 0; i < l.c; i++) {
            m = logaddexp(agg[i * TILE + l.j] + m, agg[(l.C + i) * TILE + l.j]);
        }
    }
    if (!l.on) {
        return;
    }
    for (i64 t = l.t0; t < l.t1; t++) {
        m = logaddexp(ld<DT>(lc, base + t * D) + m, ld<DT>(lv, vbase + (t + 1) * D));
        st<DT>(h, base + t * D, expf(m));
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
// g = exp(lc_t) G_t.
template <int DT>
__device__ __forceinline__ void log_bwd(const void* __restrict__ lc, const void* __restrict__ lv,
                                        const void* __restrict__ h, const void* __restrict__ dh,
                                        void* __restrict__ dlc, void* __restrict__ dlv, i64 T,
                                        i64 D) {
    DYNAMIC_SHARED(agg);
    Lane l = lane_of(T, D);
    const i64 base = l.b * T * D + l.d;
    const i64 vbase = l.b * (T + 1) * D + l.d;
    float g = 0.0f;
    if (l.C > 1) {
        float P = 1.0f, Q = 0.0f;
        if (l.on) {
            for (i64 t = l.t1 - 1; t >= l.t0; t--) {
                float at = expf(ld<DT>(lc, base + t * D));
                Q = at * (ld<DT>(dh, base + t * D) + Q);
                P *= at;
            }
        }
        agg[l.c * TILE + l.j] = P;
        agg[(l.C + l.c) * TILE + l.j] = Q;
        __syncthreads();
        for (int i = l.C - 1; i > l.c; i--) {
            g = fmaf(agg[i * TILE + l.j], g, agg[(l.C + i) * TILE + l.j]);
        }
    }
    if (!l.on) {
        return;
    }
    float G = 0.0f;
    for (i64 t = l.t1 - 1; t >= l.t0; t--) {
        G = ld<DT>(dh, base + t * D) + g;
        float ct = ld<DT>(lc, base + t * D);
        st<DT>(dlv, vbase + (t + 1) * D, G * expf(ld<DT>(lv, vbase + (t + 1) * D)));
        float lp = t > 0 ? logf(ld<DT>(h, base + (t - 1) * D)) : ld<DT>(lv, vbase);
        st<DT>(dlc, base + t * D, G * expf(ct + lp));
        g = expf(ct) * G;
    }
    if (l.c == 0) {
        // G is G_0 here: chunk 0 always holds step 0.
        st<DT>(dlv, vbase, G * expf(ld<DT>(lc, base) + ld<DT>(lv, vbase)));
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
