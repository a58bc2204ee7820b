// parallel_scan_log: h_t = exp(lc_t) h_{t-1} + exp(lv_{t+1}), h_{-1} = exp(lv_0),
// computed in log space so that it neither overflows nor underflows:
//
//	m_{-1} = lv_0,  m_t = logaddexp(lc_t + m_{t-1}, lv_{t+1}),  h_t = exp(m_t)
//
// log_coeffs and h are (B,T,D), log_values (B,T+1,D). The scan itself is
// logscan.cuh's; the policies here read lc and lv as they are stored. The
// backward, with a_t = exp(lc_t):
//
//	dlv_{t+1} = G_t exp(lv_{t+1})
//	dlc_t     = G_t exp(lc_t + log h_{t-1})   (log h_{-1} = lv_0)
//	dlv_0     = G_0 exp(lc_0 + lv_0)
//
// The exponents are taken in base 2 (one ex2 or lg2 each, common.cuh):
// after the loads each step keeps a_t and lc_t + log h_{t-1} in log2 units.
#include "logscan.cuh"

// PslFwd is the forward policy (logscan.cuh): c = lc, v = lv, whose row 0
// is log h_{-1}.
struct PslFwd {
    const void* c;
    const void* v;
    static constexpr int VS = 1;
    static constexpr float C_ID = 0.0f;
    static constexpr float V_ID = -INFINITY;
    __device__ __forceinline__ static void gates(float&, float&) {}
    template <int DT>
    __device__ __forceinline__ float init(const Lane&, i64 vbase, i64, int ch) const {
        return ld<DT>(v, vbase + ch);
    }
};

// PslBwd is the backward policy (logscan.cuh).
struct PslBwd {
    const void* c;
    const void* v;
    const void* h;
    const void* dh;
    void* dc;
    void* dv;
    float lv0b;  // log2 h_{-1}
    static constexpr int VS = 1;
    static constexpr float C_ID = 0.0f;
    static constexpr float V_ID = 0.0f;
    template <int DT>
    __device__ __forceinline__ void init(const Lane&, i64 vbase, i64) {
        lv0b = ld<DT>(v, vbase) * LOG2E;
    }
    // c becomes a_t, v stays lv_{t+1}, p becomes log2 of exp(lc_t) h_{t-1}.
    __device__ __forceinline__ void prep(float& c, float&, float& p, bool first) const {
        const float c2 = c * LOG2E;
        const float lp = first ? lv0b : lg2_full(p);
        p = c2 + lp;
        c = ex2_fast(c2);
    }
    __device__ __forceinline__ static void grads(float G, float, float& v, float& p) {
        v = G * exp_fast(v);
        p = G * ex2_fast(p);
    }
    __device__ __forceinline__ static float decay(float c) { return ex2_fast(c * LOG2E); }
    // dlv_0 is dlc_0: both are G_0 exp(lc_0 + lv_0).
    template <int DT>
    __device__ __forceinline__ void init_grad(const Lane&, i64 vbase, i64, float dc0, float) const {
        st<DT>(dv, vbase, dc0);
    }
};

#define PARALLEL_SCAN_LOG_BWD(NAME, DT)                                                          \
    extern "C" __global__ void __launch_bounds__(1024, 1)                                           \
        parallel_scan_log_bwd_##NAME(const void* lc, const void* lv, const void* h,              \
                                     const void* dh, void* dlc, void* dlv, i64 T, i64 D) {       \
        log_bwd<DT>(PslBwd{lc, lv, h, dh, dlc, dlv, 0.0f}, T, D);                                \
    }

// The 16-bit forwards, one channel a thread, and two (_pairs, D even).
#define PARALLEL_SCAN_LOG_FWD16(NAME, DT)                                                        \
    extern "C" __global__ void __launch_bounds__(LOG_FWD16_MAX_THREADS, 1)                          \
        parallel_scan_log_fwd_##NAME(const void* lc, const void* lv, void* h, i64 T, i64 D) {    \
        log_fwd16<DT, 1>(PslFwd{lc, lv}, h, T, D);                                               \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(LOG_FWD16_PAIRS_MAX_THREADS, 1)                    \
        parallel_scan_log_fwd_##NAME##_pairs(const void* lc, const void* lv, void* h, i64 T,     \
                                             i64 D) {                                            \
        log_fwd16<DT, 2>(PslFwd{lc, lv}, h, T, D);                                               \
    }

extern "C" __global__ void __launch_bounds__(1024, 1)
    parallel_scan_log_fwd_f32(const void* lc, const void* lv, void* h, i64 T, i64 D) {
    log_fwd<DT_F32>(PslFwd{lc, lv}, h, T, D);
}
PARALLEL_SCAN_LOG_BWD(f32, DT_F32)
PARALLEL_SCAN_LOG_FWD16(f16, DT_F16)
PARALLEL_SCAN_LOG_BWD(f16, DT_F16)
PARALLEL_SCAN_LOG_FWD16(bf16, DT_BF16)
PARALLEL_SCAN_LOG_BWD(bf16, DT_BF16)
