// givens_scan, the angle-fused Givens scan: h_t = sigma_t * R(theta_t) h_{t-1} + x_t
// per block of K channels (K in {2,4,8,16}), with theta (B,T,N,K-1),
// sigma, x and h (B,T,N,K), h0 (B,N,K) or null. R(theta) is never formed:
// the first K/2 angles rotate the pairs (0,1), (2,3), ..., then the next
// K/2-1 rotate (1,2), (3,4), ...; rotating (i,j) by th gives
// x_i' = cos(th) x_i - sin(th) x_j, x_j' = sin(th) x_i + cos(th) x_j.
//
// One thread per channel: a thread block of blockDim.x = W*K threads (a
// multiple of 32, at most GIVENS_MAX_THREADS) serves a tile of W
// contiguous n of one batch row b (the grid has B*ceil(N/W) blocks);
// thread x holds channel j = x % K of lane n0 + x / K and walks all of T.
// So a warp's loads of one step are contiguous runs of 32 elements (of
// sigma, x, h, dh; theta: thread j < K-1 reads angle j), each load
// instruction filling whole 32-byte sectors, and the per-step work is one
// sincos per thread, not K-1. The K threads of a lane sit in one warp and
// meet through shuffles: each angle's cosine and sine go to the two
// threads of its pair, and each rotation layer swaps one value between
// the pair. Threads past the last n compute lane N-1 again and store
// nothing. Every thread of a block runs the same T steps, so the shuffles
// are always warp-uniform.
//
// Memory-level parallelism comes from a ring of GIVENS_PREFETCH steps of
// inputs in registers: the loads of step t + D are issued at step t, so a
// thread has D steps of loads in flight while its recurrence (two
// shuffles and a few FMAs per step) runs. There is no chunking of T: a
// chunk's transition product would take K*K registers and a second read
// of the inputs, while K threads per lane already give B*N*K threads.
// Exported as givens_scan_{fwd,bwd}_{f32,f16,bf16}_k<K>.
#include "common.cuh"

// GIVENS_MAX_THREADS is the largest block the host launches (the kernels'
// __launch_bounds__); GIVENS_PREFETCH the steps of inputs in flight per
// thread.
#define GIVENS_MAX_THREADS 128
#define GIVENS_PREFETCH 16

#ifdef __CUDACC__
// gv_shfl2 replaces a and b with those of lane src (0..31) of the calling
// warp; every lane of the warp calls it.
__device__ __forceinline__ void gv_shfl2(float& a, float& b, int src) {
    a = __shfl_sync(0xffffffffu, a, src);
    b = __shfl_sync(0xffffffffu, b, src);
}
__device__ __forceinline__ float gv_shfl(float v, int src) { return __shfl_sync(0xffffffffu, v, src); }
#else
// The host emulation has no warps: an exchange through a block-wide
// buffer and a barrier, which every thread of the block reaches (the
// kernels' loops are block-uniform). Exchanges alternate between two
// buffers, so a thread that writes exchange k+2 has passed barrier k+1,
// which every thread reaches only after its reads of exchange k.
static float gv_xchg[2][2][GIVENS_MAX_THREADS];
thread_local int gv_phase;
inline void gv_shfl2(float& a, float& b, int src) {
    const int tid = (int)threadIdx.x;
    float(*buf)[GIVENS_MAX_THREADS] = gv_xchg[gv_phase];
    gv_phase ^= 1;
    buf[0][tid] = a;
    buf[1][tid] = b;
    __syncthreads();
    a = buf[0][(tid & ~31) + src];
    b = buf[1][(tid & ~31) + src];
}
inline float gv_shfl(float v, int src) {
    float w = v;
    gv_shfl2(v, w, src);
    return v;
}
#endif

#ifdef __CUDACC__
#define GV_NOINLINE __noinline__
#else
#define GV_NOINLINE
#endif

// GvSinCos is a sine and a cosine, returned in registers.
struct GvSinCos {
    float s, c;
};

// gv_sincos_slow is sincosf out of line, for the angles the fast path
// does not take (huge, Inf, NaN): its argument reduction would otherwise
// be inlined at every step of the unrolled loops.
GV_NOINLINE __device__ GvSinCos gv_sincos_slow(float x) {
    GvSinCos r;
    sincosf(x, &r.s, &r.c);
    return r;
}

// gv_sincos_fast sets s, c = sin(x), cos(x) with the CUDA library's own fast
// path (the same three-part reduction by pi/2 and polynomials, so the
// same results, within 2 ulp), valid for |x| <= GV_FAST_ANGLE; gv_sincos
// takes the library function beyond, and for Inf and NaN. The benchmark's angles lie in
// (-pi, pi). The intrinsics __sinf/__cosf are not used: their absolute
// error (2^-21.4 on [-pi, pi]) accumulates over T beyond the long-memory
// gate.
__device__ __forceinline__ void gv_sincos_fast(float x, float& s, float& c) {
    const float qf = rintf(x * 0.636619772f);
    const int q = (int)qf;
    float r = fmaf(qf, -1.5707962512969971e+00f, x);
    r = fmaf(qf, -7.5497894158615964e-08f, r);
    r = fmaf(qf, -5.3903029534742384e-15f, r);
    const float r2 = r * r;
    float ps = fmaf(-1.9574658654164523e-04f, r2, 8.3327032625675201e-03f);
    ps = fmaf(ps, r2, -1.6666662693023682e-01f);
    const float sn = fmaf(fmaf(r2, r, 0.0f), ps, r);  // as the library: sin(-0) = -0
    float pc = fmaf(2.4279579520225525e-05f, r2, -1.3887860113754869e-03f);
    pc = fmaf(pc, r2, 4.1666727513074875e-02f);
    pc = fmaf(pc, r2, -4.9999997019767761e-01f);
    const float cs = fmaf(pc, r2, 1.0f);
    // sin(x) = sin(r + q pi/2): quadrant q & 3 picks sin or cos of r and the sign.
    const float so = (q & 1) ? cs : sn, co = (q & 1) ? sn : cs;
    s = (q & 2) ? -so : so;
    c = ((q + 1) & 2) ? -co : co;
}

// GV_FAST_ANGLE bounds the angles gv_sincos_fast takes.
#define GV_FAST_ANGLE 105615.0f

__device__ __forceinline__ void gv_sincos(float x, float& s, float& c) {
    if (!(fabsf(x) <= GV_FAST_ANGLE)) {
        const GvSinCos r = gv_sincos_slow(x);
        s = r.s;
        c = r.c;
        return;
    }
    gv_sincos_fast(x, s, c);
}

// GvLane is a thread's place: its lane (b, n; n clamped to N-1 past the
// tile's end, lane = b*N + n), whether it stores, its channel j, and the
// warp lanes it meets: the owners of its layer-1 and layer-2 angles, its
// partners in both layers, and whether it is the lower channel of each
// pair (has2: whether layer 2 touches channel j at all).
template <int K>
struct GvLane {
    static constexpr int F = K / 2;
    i64 b, n, lane;
    int j, a1, a2, p1, p2;
    bool on, lo1, lo2, has2;
    // The backward's dtheta: whether the thread stores its layer-1 and
    // layer-2 angle (on, and the lower channel of the pair), and their
    // indices among the lane's K-1 angles.
    bool st1, st2;
    int i1, i2;

    __device__ __forceinline__ GvLane(i64 N) {
        const int W = (int)blockDim.x / K;
        const int w = (int)threadIdx.x / K;
        j = (int)threadIdx.x % K;
        const i64 tiles = (N + W - 1) / W;
        b = (i64)blockIdx.x / tiles;
        const i64 nt = ((i64)blockIdx.x % tiles) * W + w;
        on = nt < N;
        n = on ? nt : N - 1;
        lane = b * N + n;
        const int l = (int)threadIdx.x & 31, base = l & ~(K - 1);
        a1 = base + (j >> 1);
        lo1 = (j & 1) == 0;
        p1 = l ^ 1;
        has2 = j >= 1 && j <= K - 2;
        lo2 = (j & 1) == 1;
        a2 = has2 ? base + F + ((j - 1) >> 1) : base;
        p2 = has2 ? (lo2 ? l + 1 : l - 1) : l;
        st1 = on && lo1;
        st2 = on && has2 && lo2;
        i1 = j >> 1;
        i2 = has2 ? F + ((j - 1) >> 1) : 0;
    }
};

// GvAngles holds the cosines and sines of the thread's two rotations at a
// step, gathered from the threads that computed them.
struct GvAngles {
    float c1, s1, c2, s2;
};

template <int K, bool FAST>
__device__ __forceinline__ GvAngles gv_angles(const GvLane<K>& L, float th) {
    float s, c;
    if (FAST) {
        gv_sincos_fast(th, s, c);
    } else {
        gv_sincos(th, s, c);
    }
    GvAngles g;
    g.c1 = c;
    g.s1 = s;
    gv_shfl2(g.c1, g.s1, L.a1);
    g.c2 = c;
    g.s2 = s;
    if (K > 2) {
        gv_shfl2(g.c2, g.s2, L.a2);
    }
    return g;
}

// gv_rotate1 and gv_rotate2 apply the first and the second layer to the
// thread's channel y of the lane's state.
template <int K>
__device__ __forceinline__ float gv_rotate1(const GvLane<K>& L, const GvAngles& g, float y) {
    const float yp = gv_shfl(y, L.p1);
    return L.lo1 ? g.c1 * y - g.s1 * yp : g.s1 * yp + g.c1 * y;
}
template <int K>
__device__ __forceinline__ float gv_rotate2(const GvLane<K>& L, const GvAngles& g, float y) {
    if (K == 2) {
        return y;
    }
    const float yp = gv_shfl(y, L.p2);
    const float r = L.lo2 ? g.c2 * y - g.s2 * yp : g.s2 * yp + g.c2 * y;
    return L.has2 ? r : y;
}

// The ring holds elements as loaded (raw 16-bit words for f16 and bf16)
// and widens them where a step uses them: a widening right after its load
// would make the thread wait for the load there, and the ring's loads
// would no longer be in flight while the steps before them run.
template <int DT>
struct GvRaw {
    typedef unsigned short type;
};
template <>
struct GvRaw<DT_F32> {
    typedef float type;
};

// gv_ld loads element i of p as it is stored.
template <int DT>
__device__ __forceinline__ typename GvRaw<DT>::type gv_ld(const void* __restrict__ p, i64 i) {
    return __ldg((const typename GvRaw<DT>::type*)p + i);
}

// gv_wide widens a loaded element to f32 (exactly).
template <int DT>
__device__ __forceinline__ float gv_wide(float v) {
    return v;
}
template <int DT>
__device__ __forceinline__ float gv_wide(unsigned short v) {
    return DT == DT_F16 ? f16_to_f32(v) : bf16_to_f32(v);
}

// gv_all_fast reports whether every angle of a ring takes the fast sincos.
template <int DT, int D, typename R>
__device__ __forceinline__ bool gv_all_fast(const R (&th)[D]) {
    bool fast = true;
#pragma unroll
    for (int d = 0; d < D; d++) {
        fast &= fabsf(gv_wide<DT>(th[d])) <= GV_FAST_ANGLE;
    }
    return fast;
}

// GvFwd is a forward thread's state: the lane, the ring of inputs (slot d
// holds the steps t = d mod D), the indices of the next step to load (eL,
// aL: element j and angle j) and to store (eS), and the state y.
template <int DT, int K>
struct GvFwd {
    static constexpr int D = GIVENS_PREFETCH;
    const void* __restrict__ theta;
    const void* __restrict__ sigma;
    const void* __restrict__ x;
    void* __restrict__ h;
    GvLane<K> L;
    bool hasth;
    i64 es, as, eL, aL, eS;
    typedef typename GvRaw<DT>::type R;
    R rth[D], rsg[D], rx[D];
    float y;

    __device__ __forceinline__ GvFwd(const void* th_, const void* sg_, const void* x_, const void* h0, void* h_,
                                     i64 T, i64 N)
        : theta(th_), sigma(sg_), x(x_), h(h_), L(N) {
        hasth = L.j < K - 1;
        // Element j of the lane's block at step t: e0 + t*es; angle j: a0 + t*as.
        const i64 blk0 = L.b * T * N + L.n;
        es = N * K;
        as = N * (K - 1);
        eL = eS = blk0 * K + L.j;
        aL = blk0 * (K - 1) + L.j;
        y = h0 != nullptr ? ld<DT>(h0, L.lane * K + L.j) : 0.0f;
#pragma unroll
        for (int d = 0; d < D; d++) {
            if (d < T) {
                load(d);
            }
        }
    }

    __device__ __forceinline__ void load(int d) {
        rth[d] = hasth ? gv_ld<DT>(theta, aL) : R(0);
        rsg[d] = gv_ld<DT>(sigma, eL);
        rx[d] = gv_ld<DT>(x, eL);
        eL += es;
        aL += as;
    }

    // steps runs the D steps of the ring (the first left of them when
    // TAIL, left < 2D) and loads the next D (those before left). FAST
    // takes every angle's sincos on the fast path, without a branch, so
    // that the steps form one straight run of code in which the sincos
    // and shuffles of later steps fill the latency of the recurrence.
    template <bool TAIL, bool FAST>
    __device__ __forceinline__ void steps(int left) {
#pragma unroll
        for (int d = 0; d < D; d++) {
            if (!TAIL || d < left) {
                const float th = gv_wide<DT>(rth[d]), sg = gv_wide<DT>(rsg[d]), xv = gv_wide<DT>(rx[d]);
                if (!TAIL || d + D < left) {
                    load(d);
                }
                const GvAngles g = gv_angles<K, FAST>(L, th);
                y = gv_rotate2<K>(L, g, gv_rotate1<K>(L, g, y));
                y = sg * y + xv;
                if (L.on) {
                    st<DT>(h, eS, y);
                }
                eS += es;
            }
        }
    }
};

template <int DT, int K>
__device__ __forceinline__ void givens_fwd(const void* __restrict__ theta, const void* __restrict__ sigma,
                                           const void* __restrict__ x, const void* __restrict__ h0,
                                           void* __restrict__ h, i64 T, i64 N) {
    constexpr int D = GIVENS_PREFETCH;
    GvFwd<DT, K> f(theta, sigma, x, h0, h, T, N);
    i64 t0 = 0;
    for (; T - t0 >= 2 * D; t0 += D) {
        if (gv_all_fast<DT>(f.rth)) {
            f.template steps<false, true>(0);
        } else {
            f.template steps<false, false>(0);
        }
    }
    for (; t0 < T; t0 += D) {
        f.template steps<true, false>((int)(T - t0));
    }
}

// The reverse scan G_t = dh_t + A_{t+1}^T G_{t+1} with A = diag(sigma) R,
// so A^T g = R^T (sigma * g). At each step the rotations are recomputed
// from the stored h_{t-1} (never by dividing by sigma):
//
//	y1 = first layer of R_t applied to h_{t-1};  u = second layer applied to y1
//	dx_t = G_t;  dsigma_t = G_t * u
//	gu = sigma_t * G_t, carried back through the second layer (its output u)
//	and the first (its output y1); each rotation's angle gets
//	dth = -g_i y_j + g_j y_i (y its output, i < j), stored by the thread of
//	channel i, and g becomes R^T g.
//
// What leaves the first layer is A_t^T G_t, the carry into step t-1; after
// step 0 it is dh0. Each thread carries its own channel.
//
// GvBwd is a backward thread's state: the ring (slot d holds the steps
// t = T-1-r with r = d mod D), the indices of the next step to load (eL,
// aL; its h_{t-1} at eL - es, for t > 0) and to store (eS, aS: the
// lane's first angle), and the carry.
template <int DT, int K>
struct GvBwd {
    static constexpr int D = GIVENS_PREFETCH;
    static constexpr int F = K / 2;
    const void* __restrict__ theta;
    const void* __restrict__ sigma;
    const void* __restrict__ h;
    const void* __restrict__ dh;
    void* __restrict__ dtheta;
    void* __restrict__ dsigma;
    void* __restrict__ dx;
    GvLane<K> L;
    bool hasth;
    i64 es, as, eL, aL, eS, aS;
    typedef typename GvRaw<DT>::type R;
    R hinit;
    R rth[D], rsg[D], rhp[D], rdh[D];
    float carry;

    __device__ __forceinline__ GvBwd(const void* th_, const void* sg_, const void* h0, const void* h_,
                                     const void* dh_, void* dth_, void* dsg_, void* dx_, i64 T, i64 N)
        : theta(th_), sigma(sg_), h(h_), dh(dh_), dtheta(dth_), dsigma(dsg_), dx(dx_), L(N) {
        hasth = L.j < K - 1;
        const i64 blk0 = L.b * T * N + L.n;
        es = N * K;
        as = N * (K - 1);
        eL = eS = blk0 * K + L.j + (T - 1) * es;
        aS = blk0 * (K - 1) + (T - 1) * as;
        aL = aS + L.j;
        hinit = h0 != nullptr ? gv_ld<DT>(h0, L.lane * K + L.j) : R(0);  // R(0) is +0 in every type
        carry = 0.0f;
#pragma unroll
        for (int d = 0; d < D; d++) {
            if (d < T) {
                load(d, d < T - 1);
            }
        }
    }

    // load reads the next step into slot d; prev: whether it has t > 0.
    __device__ __forceinline__ void load(int d, bool prev) {
        rth[d] = hasth ? gv_ld<DT>(theta, aL) : R(0);
        rsg[d] = gv_ld<DT>(sigma, eL);
        rhp[d] = prev ? gv_ld<DT>(h, eL - es) : hinit;
        rdh[d] = gv_ld<DT>(dh, eL);
        eL -= es;
        aL -= as;
    }

    // steps is GvFwd::steps for the reverse scan; left counts steps down
    // to t = 0 (left < 2D + 1 when TAIL), and the step loaded at d + D
    // has an h_{t-1} while d + D < left - 1.
    template <bool TAIL, bool FAST>
    __device__ __forceinline__ void steps(int left) {
#pragma unroll
        for (int d = 0; d < D; d++) {
            if (!TAIL || d < left) {
                const float th = gv_wide<DT>(rth[d]), sg = gv_wide<DT>(rsg[d]), hp = gv_wide<DT>(rhp[d]),
                            dhv = gv_wide<DT>(rdh[d]);
                if (!TAIL || d + D < left) {
                    load(d, !TAIL || d + D < left - 1);
                }
                const GvAngles g = gv_angles<K, FAST>(L, th);
                const float y1 = gv_rotate1<K>(L, g, hp);
                const float u = gv_rotate2<K>(L, g, y1);
                const float G = dhv + carry;
                if (L.on) {
                    st<DT>(dx, eS, G);
                    st<DT>(dsigma, eS, G * u);
                }
                float gv = sg * G;
                // Each pair's angle gradient: layer 2 (if any) first, then
                // layer 1, stored by the lower thread; the index and value
                // are formed before the one predicated store.
                float d2 = 0.0f;
                if (K > 2) {
                    float gp = gv, up = u;
                    gv_shfl2(gp, up, L.p2);
                    d2 = -gv * up + gp * u;
                    const float g2 = L.lo2 ? g.c2 * gv + g.s2 * gp : -g.s2 * gp + g.c2 * gv;
                    gv = L.has2 ? g2 : gv;
                }
                float gp = gv, yp = y1;
                gv_shfl2(gp, yp, L.p1);
                const float d1 = -gv * yp + gp * y1;
                carry = L.lo1 ? g.c1 * gv + g.s1 * gp : -g.s1 * gp + g.c1 * gv;
                if (L.st2) {
                    st<DT>(dtheta, aS + L.i2, d2);
                }
                if (L.st1) {
                    st<DT>(dtheta, aS + L.i1, d1);
                }
                eS -= es;
                aS -= as;
            }
        }
    }
};

template <int DT, int K>
__device__ __forceinline__ void givens_bwd(const void* __restrict__ theta, const void* __restrict__ sigma,
                                           const void* __restrict__ h0, const void* __restrict__ h,
                                           const void* __restrict__ dh, void* __restrict__ dtheta,
                                           void* __restrict__ dsigma, void* __restrict__ dx,
                                           void* __restrict__ dh0, i64 T, i64 N) {
    constexpr int D = GIVENS_PREFETCH;
    GvBwd<DT, K> b(theta, sigma, h0, h, dh, dtheta, dsigma, dx, T, N);
    i64 r0 = 0;
    for (; T - r0 >= 2 * D + 1; r0 += D) {
        if (gv_all_fast<DT>(b.rth)) {
            b.template steps<false, true>(0);
        } else {
            b.template steps<false, false>(0);
        }
    }
    for (; r0 < T; r0 += D) {
        b.template steps<true, false>((int)(T - r0));
    }
    if (dh0 != nullptr && b.L.on) {
        st<DT>(dh0, b.L.lane * K + b.L.j, b.carry);
    }
}

#define GIVENS_K(NAME, DT, K)                                                                    \
    extern "C" __global__ void __launch_bounds__(GIVENS_MAX_THREADS)                             \
        givens_scan_fwd_##NAME##_k##K(const void* theta, const void* sigma, const void* x,       \
                                      const void* h0, void* h, i64 T, i64 N) {                   \
        givens_fwd<DT, K>(theta, sigma, x, h0, h, T, N);                                         \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(GIVENS_MAX_THREADS)                             \
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

// The PTX is generated one module per element type and K (SCAN_DT_NAME,
// SCAN_DT and SCAN_K defined on nvcc's command line), so that the driver
// JIT-compiles only the kernels a program uses (all 24 in one module took
// ptxas 17 s for sm_90); without them the file instantiates everything.
// (GIVENS_ONE expands its arguments before GIVENS_K pastes them.)
#define GIVENS_ONE(NAME, DT, K) GIVENS_K(NAME, DT, K)
#if defined(SCAN_K)
GIVENS_ONE(SCAN_DT_NAME, SCAN_DT, SCAN_K)
#else
GIVENS(f32, DT_F32)
GIVENS(f16, DT_F16)
GIVENS(bf16, DT_BF16)
#endif
