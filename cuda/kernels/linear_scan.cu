// linear_scan: h_t = a_t * h_{t-1} + b_t elementwise over (B,T,D), h_{-1} = h0
// (zeros when h0 is null), and its backward. See elementwise.cuh for the
// lane and chunk layout.
#include "elementwise.cuh"

template <int DT, int P>
__device__ __forceinline__ void linear_fwd(const void* __restrict__ a, const void* __restrict__ b,
                                           const void* __restrict__ h0, void* __restrict__ h, i64 T,
                                           i64 D) {
    DYNAMIC_SHARED(agg);  // per channel: P[C][TILE], then Q[C][TILE] (agg_at)
    Lane l = lane_of<P>(T, D);
    constexpr int S = P == 1 ? SEG_FWD : SEG_PAIRS;
    const i64 base = l.b * T * D + l.d;  // element (b, t, d) is base + t*D
    float carry[P];                      // the state entering the segment
#pragma unroll
    for (int ch = 0; ch < P; ch++) {
        carry[ch] = l.on && h0 != nullptr ? ld<DT>(h0, l.b * D + l.d + ch) : 0.0f;
    }
    const i64 span = (i64)l.C * S;
    for (i64 s0 = 0; s0 < T; s0 += span) {
        const i64 t0 = s0 + (i64)l.c * S;
        const i64 o = base + t0 * D;
        const int n = steps_in(l, t0, T, S);
        // The chunk's steps, read once; steps past T are the identity.
        Step<DT, P> av[S], bv[S];
        ld_steps<DT>(a, o, D, 0, n, 1.0f, av);
        ld_steps<DT>(b, o, D, 0, n, 0.0f, bv);
        float hc[P];
#pragma unroll
        for (int ch = 0; ch < P; ch++) {
            hc[ch] = carry[ch];
        }
        if (l.C > 1) {
            // The chunk's map h -> P h + Q, joined with the others'.
#pragma unroll
            for (int ch = 0; ch < P; ch++) {
                float Pc = 1.0f, Q = 0.0f;
#pragma unroll
                for (int r = 0; r < S; r++) {
                    Q = fmaf(step_at(av[r], ch), Q, step_at(bv[r], ch));
                    Pc *= step_at(av[r], ch);
                }
                agg[agg_at<P>(l, 0, l.c, ch)] = Pc;
                agg[agg_at<P>(l, 1, l.c, ch)] = Q;
            }
            __syncthreads();
            float next[P];
            bool finite = true;
#pragma unroll
            for (int ch = 0; ch < P; ch++) {
                for (int i = 0; i < l.c; i++) {
                    hc[ch] = fmaf(agg[agg_at<P>(l, 0, i, ch)], hc[ch], agg[agg_at<P>(l, 1, i, ch)]);
                }
                next[ch] = hc[ch];
                for (int i = l.c; i < l.C; i++) {
                    next[ch] = fmaf(agg[agg_at<P>(l, 0, i, ch)], next[ch], agg[agg_at<P>(l, 1, i, ch)]);
                }
                finite = finite && is_finite(next[ch]);
            }
            __syncthreads();  // the aggregates are rewritten by the next segment
            if (!finite && l.on) {
                // Composing maps is exact algebra but not IEEE-identical to
                // the recurrence once a value is infinite or NaN (P Inf and
                // Q - Inf, 0 * Inf, in another order). An fma with any
                // non-finite operand is not finite, so a finite fold of all
                // C means every aggregate and the carry were finite.
                // Otherwise the thread walks the whole segment sequentially
                // from memory, with the re-scan's arithmetic, storing its
                // chunk's steps: NaN and Inf come out as in the sequential
                // reference, and the next carry too. (It stores from memory
                // rather than re-scanning the registers, so that no register
                // array is live across it.)
                const i64 te = s0 + span < T ? s0 + span : T;
                for (int ch = 0; ch < P; ch++) {
                    float m = carry[ch];
                    for (i64 t = s0; t < te; t++) {
                        const i64 e = base + t * D + ch;
                        m = fmaf(ld<DT>(a, e), m, ld<DT>(b, e));
                        if (t >= t0 && t < t0 + n) {
                            st<DT>(h, e, m);
                        }
                    }
                    carry[ch] = m;
                }
                continue;
            }
#pragma unroll
            for (int ch = 0; ch < P; ch++) {
                carry[ch] = next[ch];
            }
        }
        // Re-scan the registers from the carry-in (into bv) and store.
#pragma unroll
        for (int r = 0; r < S; r++) {
            float y[P];
#pragma unroll
            for (int ch = 0; ch < P; ch++) {
                hc[ch] = fmaf(step_at(av[r], ch), hc[ch], step_at(bv[r], ch));
                y[ch] = hc[ch];
            }
            step_set(bv[r], y);
        }
        st_steps<DT>(h, o, D, n, bv);
        if (l.C == 1) {
#pragma unroll
            for (int ch = 0; ch < P; ch++) {
                carry[ch] = hc[ch];
            }
        }
    }
}

// The reverse scan: G_t = dh_t + a_{t+1} G_{t+1}; db_t = G_t;
// da_t = G_t h_{t-1} (h_{-1} = h0 or 0); dh0 = a_0 G_0. The carry between
// steps is g = a_t G_t, so a chunk maps the carry entering at its end,
// g_in, to g_out = P g_in + Q with P the product of its a_t. Segments are
// walked from the last to the first.
template <int DT>
__device__ __forceinline__ void linear_bwd(const void* __restrict__ a, const void* __restrict__ h0,
                                           const void* __restrict__ h, const void* __restrict__ dh,
                                           void* __restrict__ da, void* __restrict__ db,
                                           void* __restrict__ dh0, i64 T, i64 D) {
    DYNAMIC_SHARED(agg);
    Lane l = lane_of<1>(T, D);
    const i64 base = l.b * T * D + l.d;
    float hinit = 0.0f;
    if (l.on && h0 != nullptr) {
        hinit = ld<DT>(h0, l.b * D + l.d);
    }
    float carry = 0.0f;  // the carry entering the segment's end
    const i64 span = (i64)l.C * SEG_BWD;
    for (i64 s0 = (T - 1) / span * span; s0 >= 0; s0 -= span) {
        const i64 t0 = s0 + (i64)l.c * SEG_BWD;
        const i64 o = base + t0 * D;
        const int n = steps_in(l, t0, T, SEG_BWD);
        // Steps past T are the identity (a = 1, dh = 0); h_{t-1} is h0
        // (hinit) at t = 0.
        float av[SEG_BWD], dv[SEG_BWD], hv[SEG_BWD];
        ld_steps<DT>(a, o, D, 0, n, 1.0f, av);
        ld_steps<DT>(dh, o, D, 0, n, 0.0f, dv);
        ld_steps<DT>(h, o - D, D, t0 == 0 ? 1 : 0, n, hinit, hv);
        float g = carry;
        if (l.C > 1) {
            float P = 1.0f, Q = 0.0f;
#pragma unroll
            for (int r = SEG_BWD - 1; r >= 0; r--) {
                Q = av[r] * (dv[r] + Q);
                P *= av[r];
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
            __syncthreads();
            if (!is_finite(next) && l.on) {
                // As in the forward: a non-finite fold means the thread walks
                // the whole segment sequentially (from its end, in reverse)
                // from memory, storing its chunk's steps, and carries the
                // walk's result to the next segment.
                const i64 te = s0 + span < T ? s0 + span : T;
                float m = carry;
                for (i64 t = te - 1; t >= s0; t--) {
                    const i64 e = base + t * D;
                    const float G = ld<DT>(dh, e) + m;
                    if (t >= t0 && t < t0 + n) {
                        st<DT>(db, e, G);
                        st<DT>(da, e, G * (t == 0 ? hinit : ld<DT>(h, e - D)));
                    }
                    m = ld<DT>(a, e) * G;
                }
                carry = m;
                if (s0 == 0 && l.c == 0 && dh0 != nullptr) {
                    st<DT>(dh0, l.b * D + l.d, m);
                }
                continue;
            }
            carry = next;
        }
        // G_t into dv, G_t h_{t-1} into hv.
#pragma unroll
        for (int r = SEG_BWD - 1; r >= 0; r--) {
            const float G = dv[r] + g;
            dv[r] = G;
            hv[r] *= G;
            g = av[r] * G;
        }
        st_steps<DT>(db, o, D, n, dv);
        st_steps<DT>(da, o, D, n, hv);
        if (l.C == 1) {
            carry = g;
        }
        if (s0 == 0 && l.c == 0 && l.on && dh0 != nullptr) {
            st<DT>(dh0, l.b * D + l.d, g);
        }
    }
}

#define LINEAR_SCAN(NAME, DT)                                                                    \
    extern "C" __global__ void __launch_bounds__(1024, 1)                                           \
        linear_scan_fwd_##NAME(const void* a, const void* b, const void* h0, void* h, i64 T,     \
                               i64 D) {                                                          \
        linear_fwd<DT, 1>(a, b, h0, h, T, D);                                                    \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(1024, 1)                                           \
        linear_scan_bwd_##NAME(const void* a, const void* h0, const void* h, const void* dh,     \
                               void* da, void* db, void* dh0, i64 T, i64 D) {                    \
        linear_bwd<DT>(a, h0, h, dh, da, db, dh0, T, D);                                         \
    }

// The 16-bit forwards also come with two channels per thread, for even D.
#define LINEAR_SCAN_PAIRS(NAME, DT)                                                              \
    extern "C" __global__ void __launch_bounds__(1024, 1)                                           \
        linear_scan_fwd_##NAME##_pairs(const void* a, const void* b, const void* h0, void* h,    \
                                       i64 T, i64 D) {                                           \
        linear_fwd<DT, 2>(a, b, h0, h, T, D);                                                    \
    }

LINEAR_SCAN(f32, DT_F32)
LINEAR_SCAN(f16, DT_F16)
LINEAR_SCAN(bf16, DT_BF16)
LINEAR_SCAN_PAIRS(f16, DT_F16)
LINEAR_SCAN_PAIRS(bf16, DT_BF16)
