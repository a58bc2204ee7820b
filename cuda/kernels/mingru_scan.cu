// mingru_scan: a minGRU layer's recurrence from its pre-activations k and
// x (B,T,D), with h0 (B,D) or null (zeros):
//
//	log h_{-1} = log h0   (-Inf without h0)
//	log h_t    = logaddexp(log(1 - z_t) + log h_{t-1}, log z_t + log g(x_t))
//
// z_t = sigmoid(k_t), g(x) = x + 0.5 for x >= 0 and sigmoid(x) below. It
// is parallel_scan_log's scan (logscan.cuh) with its log coefficients and
// values formed from k and x as they are loaded, so the gates never reach
// memory. A step past T is (k = -Inf, x = 0): log coefficient 0, log
// value -Inf, the identity. The backward, with a_t = sigmoid(-k_t) and
// h_{-1} = h0 (0 without it):
//
//	dk_t = G_t a_t z_t (g(x_t) - h_{t-1})
//	dx_t = G_t z_t g'(x_t)
//	dh0  = a_0 G_0
//
// A lane whose h0 entry is negative or NaN has NaN for its log h_{-1},
// so every output of the lane is NaN, and it stores NaN in every gradient.
#include "logscan.cuh"

// log1p_unit is log(1 + e) for e in [0, 1], from its series where e is
// small (a decay near 1 keeps its relative precision); NaN gives NaN.
__device__ __forceinline__ float log1p_unit(float e) {
    if (e < 0.0625f) {
        return e * (1.0f - e * (0.5f - e * (1.0f / 3.0f - e * (0.25f - e * (0.2f - e * (1.0f / 6.0f))))));
    }
    return LN2 * lg2_fast(1.0f + e);
}

// softplus_tail is log1p(exp(-|k|)), the part softplus(k) and
// softplus(-k) share: softplus(k) = max(k, 0) + softplus_tail(k).
__device__ __forceinline__ float softplus_tail(float k) { return log1p_unit(exp_fast(-fabsf(k))); }

// pos_part is max(k, 0), 0 for NaN (softplus_tail carries the NaN).
__device__ __forceinline__ float pos_part(float k) { return k > 0.0f ? k : 0.0f; }

// log_keep is log(1 - z) = -softplus(k).
__device__ __forceinline__ float log_keep(float k) { return -(pos_part(k) + softplus_tail(k)); }

// log_take is log z + log g(x) = -softplus(-k) + log g(x), with log g(x)
// = log(x + 0.5) for x >= 0 and log sigmoid(x) = x - log1p(exp(x)) below.
__device__ __forceinline__ float log_take(float k, float x) {
    const float lz = -(pos_part(-k) + softplus_tail(k));
    const float lg = x >= 0.0f ? LN2 * lg2_fast(x + 0.5f) : x - log1p_unit(exp_fast(x));
    return lz + lg;
}

// log_state is log h for h >= 0 (log 0 = -Inf), NaN for a negative or
// NaN h.
__device__ __forceinline__ float log_state(float h) {
    return h > 0.0f ? LN2 * lg2_full(h) : (h == 0.0f ? -INFINITY : NAN);
}

// sigmoid is 1 / (1 + exp(-k)): 0 and 1 at the infinities, NaN for NaN.
__device__ __forceinline__ float sigmoid(float k) { return 1.0f / (1.0f + exp_fast(-k)); }

// mingru_g is g(x), with g'(x) in dg.
__device__ __forceinline__ float mingru_g(float x, float& dg) {
    if (x >= 0.0f) {
        dg = 1.0f;
        return x + 0.5f;
    }
    const float s = sigmoid(x);
    dg = s * (1.0f - s);
    return s;
}

// MingruFwd is the forward policy (logscan.cuh): c = k, v = x, both in
// h's layout; h0 may be null.
struct MingruFwd {
    const void* c;
    const void* v;
    const void* h0;
    static constexpr int VS = 0;
    static constexpr float C_ID = -INFINITY;
    static constexpr float V_ID = 0.0f;
    __device__ __forceinline__ static void gates(float& k, float& x) {
        x = log_take(k, x);
        k = log_keep(k);
    }
    template <int DT>
    __device__ __forceinline__ float init(const Lane& l, i64, i64 D, int ch) const {
        return h0 != nullptr ? log_state(ld<DT>(h0, l.b * D + l.d + ch)) : -INFINITY;
    }
};

// MINGRU_LIN_RANGE bounds the pre-activations of the forward's linear
// form: |k| and -x at most this keep e^k, e^x and every gate formed from
// them normal floats.
#define MINGRU_LIN_RANGE 80.0f

// FLT_MIN_NORMAL is the least normal float.
#define FLT_MIN_NORMAL 1.17549435e-38f

// lin_ok reports whether a step's linear form (lin_gates) is as good as
// the log form's: k <= MINGRU_LIN_RANGE and k >= -MINGRU_LIN_RANGE (or k =
// -Inf: a = 1, b = 0), x >= -MINGRU_LIN_RANGE and finite. False for NaN.
__device__ __forceinline__ bool lin_ok(float k, float x) {
    return k <= MINGRU_LIN_RANGE && (k >= -MINGRU_LIN_RANGE || k == -INFINITY) && x >= -MINGRU_LIN_RANGE &&
           x < INFINITY;
}

// lin_gates turns a step's pre-activations into its linear map h -> a h +
// b in place (k becomes a, x becomes b): a = 1 - z = 1 / (1 + e^k), b = z
// g(x), z = e^k a.
__device__ __forceinline__ void lin_gates(float& k, float& x) {
    const float e = exp_fast(k);
    const float a = 1.0f / (1.0f + e);
    float g = x + 0.5f;
    if (x < 0.0f) {
        const float ex = exp_fast(x);
        g = ex / (1.0f + ex);
    }
    k = a;
    x = e * a * g;
}

// mingru_fwd is the forward (f32, one channel a thread) in the lane and
// chunk layout of linear_scan (elementwise.cuh). Where every gate of a
// chunk is a normal float (lin_ok), its steps are taken in the linear form
// h -> a h + b: a convex combination of the last state and g(x), so it
// neither overflows nor underflows, with no exponential or logarithm a
// step but the gates' own. A chunk with a step outside that range, or
// whose product of decays is no longer a normal float, publishes a NaN
// aggregate: the fold then fails and the segment walks the log-space
// recurrence (logaddexp) from memory, so that it neither overflows nor
// underflows where the linear form would, and NaN and Inf come out as in
// the sequential reference. The carry between segments is h itself.
template <int DT>
__device__ __forceinline__ void mingru_fwd(const void* __restrict__ k, const void* __restrict__ x,
                                           const void* __restrict__ h0, void* __restrict__ h, i64 T, i64 D) {
    DYNAMIC_SHARED(agg);
    Lane l = lane_of<1>(T, D);
    const i64 base = l.b * T * D + l.d;
    float carry = 0.0f;  // h entering the segment; NaN for a negative or NaN h0
    if (l.on && h0 != nullptr) {
        const float v = ld<DT>(h0, l.b * D + l.d);
        carry = v >= 0.0f ? v : NAN;
    }
    const i64 span = (i64)l.C * SEG_FWD;
    for (i64 s0 = 0; s0 < T; s0 += span) {
        const i64 t0 = s0 + (i64)l.c * SEG_FWD;
        const i64 o = base + t0 * D;
        const int n = steps_in(l, t0, T, SEG_FWD);
        // Steps past T are (k = -Inf, x = 0): a = 1, b = 0.
        float av[SEG_FWD], bv[SEG_FWD];
        ld_steps<DT>(k, o, D, 0, n, -INFINITY, av);
        ld_steps<DT>(x, o, D, 0, n, 0.0f, bv);
        bool lin = true;
#pragma unroll
        for (int r = 0; r < SEG_FWD; r++) {
            lin = lin && lin_ok(av[r], bv[r]);
            lin_gates(av[r], bv[r]);
        }
        float hc = carry;
        bool seq = !lin;
        if (l.C > 1) {
            float Pc = 1.0f, Q = 0.0f;
#pragma unroll
            for (int r = 0; r < SEG_FWD; r++) {
                Q = fmaf(av[r], Q, bv[r]);
                Pc *= av[r];
            }
            if (!lin || !(Pc >= FLT_MIN_NORMAL)) {
                Pc = NAN;
            }
            agg[l.c * TILE + l.j] = Pc;
            agg[(l.C + l.c) * TILE + l.j] = Q;
            __syncthreads();
            for (int i = 0; i < l.c; i++) {
                hc = fmaf(agg[i * TILE + l.j], hc, agg[(l.C + i) * TILE + l.j]);
            }
            float next = hc;
            for (int i = l.c; i < l.C; i++) {
                next = fmaf(agg[i * TILE + l.j], next, agg[(l.C + i) * TILE + l.j]);
            }
            __syncthreads();
            // An fma with a non-finite operand is not finite: a finite fold
            // of all C means every aggregate and the carry were.
            seq = !is_finite(next);
            if (!seq) {
                carry = next;
            }
        }
        if (seq) {
            if (l.on) {
                const i64 te = s0 + span < T ? s0 + span : T;
                float m = log_state(carry);
                for (i64 t = s0; t < te; t++) {
                    const i64 e = base + t * D;
                    m = step_from_memory<DT>(MingruFwd{k, x, h0}, e, e, m);
                    if (t >= t0 && t < t0 + n) {
                        st<DT>(h, e, exp_fast(m));
                    }
                }
                carry = exp_fast(m);
            }
            continue;
        }
#pragma unroll
        for (int r = 0; r < SEG_FWD; r++) {
            hc = fmaf(av[r], hc, bv[r]);
            bv[r] = hc;
        }
        st_steps<DT>(h, o, D, n, bv);
        if (l.C == 1) {
            carry = hc;
        }
    }
}

// MingruBwd is the backward policy (logscan.cuh): c = k, v = x; h0 and
// dh0 are both null or both not.
struct MingruBwd {
    const void* c;
    const void* v;
    const void* h0;
    const void* h;
    const void* dh;
    void* dc;
    void* dv;
    void* dh0;
    float hinit;   // h_{-1}
    float poison;  // 0, or NaN where h0 is negative or NaN: added to every gradient
    static constexpr int VS = 0;
    static constexpr float C_ID = -INFINITY;
    static constexpr float V_ID = 0.0f;
    template <int DT>
    __device__ __forceinline__ void init(const Lane& l, i64, i64 D) {
        hinit = 0.0f;
        poison = 0.0f;
        if (h0 != nullptr) {
            hinit = ld<DT>(h0, l.b * D + l.d);
            poison = hinit >= 0.0f ? 0.0f : NAN;
        }
    }
    // c becomes a_t, v z_t g'(x_t) and p z_t (g(x_t) - h_{t-1}).
    __device__ __forceinline__ void prep(float& c, float& v, float& p, bool first) const {
        const float hp = first ? hinit : p;
        const float z = sigmoid(c);
        float dg;
        const float g = mingru_g(v, dg);
        c = sigmoid(-c);
        v = z * dg;
        p = z * (g - hp);
    }
    __device__ __forceinline__ void grads(float G, float a, float& v, float& p) const {
        v = G * v + poison;
        p = G * a * p + poison;
    }
    __device__ __forceinline__ static float decay(float c) { return sigmoid(-c); }
    template <int DT>
    __device__ __forceinline__ void init_grad(const Lane& l, i64, i64 D, float, float g) const {
        if (dh0 != nullptr) {
            st<DT>(dh0, l.b * D + l.d, g + poison);
        }
    }
};

#define MINGRU_SCAN_BWD(NAME, DT)                                                               \
    extern "C" __global__ void __launch_bounds__(1024, 1)                                          \
        mingru_scan_bwd_##NAME(const void* k, const void* x, const void* h0, const void* h,    \
                               const void* dh, void* dk, void* dx, void* dh0, i64 T, i64 D) {  \
        log_bwd<DT>(MingruBwd{k, x, h0, h, dh, dk, dx, dh0, 0.0f, 0.0f}, T, D);                 \
    }

// The 16-bit forwards, one channel a thread, and two (_pairs, D even).
#define MINGRU_SCAN_FWD16(NAME, DT)                                                             \
    extern "C" __global__ void __launch_bounds__(LOG_FWD16_MAX_THREADS, 1)                         \
        mingru_scan_fwd_##NAME(const void* k, const void* x, const void* h0, void* h, i64 T,   \
                               i64 D) {                                                         \
        log_fwd16<DT, 1>(MingruFwd{k, x, h0}, h, T, D);                                         \
    }                                                                                           \
    extern "C" __global__ void __launch_bounds__(LOG_FWD16_PAIRS_MAX_THREADS, 1)                   \
        mingru_scan_fwd_##NAME##_pairs(const void* k, const void* x, const void* h0, void* h,  \
                                       i64 T, i64 D) {                                          \
        log_fwd16<DT, 2>(MingruFwd{k, x, h0}, h, T, D);                                         \
    }

extern "C" __global__ void __launch_bounds__(1024, 1)
    mingru_scan_fwd_f32(const void* k, const void* x, const void* h0, void* h, i64 T, i64 D) {
    mingru_fwd<DT_F32>(k, x, h0, h, T, D);
}
MINGRU_SCAN_BWD(f32, DT_F32)
MINGRU_SCAN_FWD16(f16, DT_F16)
MINGRU_SCAN_BWD(f16, DT_F16)
MINGRU_SCAN_FWD16(bf16, DT_BF16)
MINGRU_SCAN_BWD(bf16, DT_BF16)
