// linear_scan: h_t = a_t * h_{t-1} + b_t elementwise over (B,T,D), h_{-1} = h0
// (zeros when h0 is null), and its backward. See elementwise.cuh for the
// lane and chunk layout.
#include "elementwise.cuh"

template <int DT>
__device__ __forceinline__ void linear_fwd(const void* __restrict__ a, const void* __restrict__ b,
                                           const void* __restrict__ h0, void* __restrict__ h, i64 T,
                                           i64 D) {
    DYNAMIC_SHARED(agg);  // P[C][TILE], then Q[C][TILE]
    Lane l = lane_of(T, D);
    const i64 base = l.b * T * D + l.d;  // element (b, t, d) is base + t*D
    float carry = 0.0f;
    if (l.on && h0 != nullptr) {
        carry = ld<DT>(h0, l.b * D + l.d);
    }
    if (l.C > 1) {
        // Pass 1: the chunk's map h -> P h + Q.
        float P = 1.0f, Q = 0.0f;
        if (l.on) {
            for (i64 t = l.t0; t < l.t1; t++) {
                float at = ld<DT>(a, base + t * D);
                Q = fmaf(at, Q, ld<DT>(b, base + t * D));
                P *= at;
            }
        }
        agg[l.c * TILE + l.j] = P;
        agg[(l.C + l.c) * TILE + l.j] = Q;
        __syncthreads();
        for (int i = 0; i < l.c; i++) {
            carry = fmaf(agg[i * TILE + l.j], carry, agg[(l.C + i) * TILE + l.j]);
        }
    }
    if (!l.on) {
        return;
    }
    // Pass 2: re-scan from the carry-in and store.
    for (i64 t = l.t0; t < l.t1; t++) {
        carry = fmaf(ld<DT>(a, base + t * D), carry, ld<DT>(b, base + t * D));
        st<DT>(h, base + t * D, carry);
    }
}

// The reverse scan: G_t = dh_t + a_{t+1} G_{t+1}; db_t = G_t;
// da_t = G_t h_{t-1} (h_{-1} = h0 or 0); dh0 = a_0 G_0. The carry between
// steps is g = a_t G_t, so a chunk maps the carry entering at its end,
// g_in, to g_out = P g_in + Q with P the product of its a_t.
template <int DT>
__device__ __forceinline__ void linear_bwd(const void* __restrict__ a, const void* __restrict__ h0,
                                           const void* __restrict__ h, const void* __restrict__ dh,
                                           void* __restrict__ da, void* __restrict__ db,
                                           void* __restrict__ dh0, i64 T, i64 D) {
    DYNAMIC_SHARED(agg);
    Lane l = lane_of(T, D);
    const i64 base = l.b * T * D + l.d;
    float g = 0.0f;
    if (l.C > 1) {
        float P = 1.0f, Q = 0.0f;
        if (l.on) {
            for (i64 t = l.t1 - 1; t >= l.t0; t--) {
                float at = ld<DT>(a, base + t * D);
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
    for (i64 t = l.t1 - 1; t >= l.t0; t--) {
        float G = ld<DT>(dh, base + t * D) + g;
        float hp = 0.0f;
        if (t > 0) {
            hp = ld<DT>(h, base + (t - 1) * D);
        } else if (h0 != nullptr) {
            hp = ld<DT>(h0, l.b * D + l.d);
        }
        st<DT>(db, base + t * D, G);
        st<DT>(da, base + t * D, G * hp);
        g = ld<DT>(a, base + t * D) * G;
    }
    if (l.c == 0 && dh0 != nullptr) {
        st<DT>(dh0, l.b * D + l.d, g);
    }
}

#define LINEAR_SCAN(NAME, DT)                                                                    \
    extern "C" __global__ void __launch_bounds__(1024, 1)                                           \
        linear_scan_fwd_##NAME(const void* a, const void* b, const void* h0, void* h, i64 T,     \
                               i64 D) {                                                          \
        linear_fwd<DT>(a, b, h0, h, T, D);                                                       \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(1024, 1)                                           \
        linear_scan_bwd_##NAME(const void* a, const void* h0, const void* h, const void* dh,     \
                               void* da, void* db, void* dh0, i64 T, i64 D) {                    \
        linear_bwd<DT>(a, h0, h, dh, da, db, dh0, T, D);                                         \
    }

LINEAR_SCAN(f32, DT_F32)
LINEAR_SCAN(f16, DT_F16)
LINEAR_SCAN(bf16, DT_BF16)
