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
// shuffles and a few FMAs per step) runs; the f32 backward instead
// copies each next round of its inputs into shared memory while it runs
// the current one (GvBwd, STAGED). These kernels do not cut T:
// where B*N*K threads are plenty, a second read of the inputs would cost
// more than it gains. Where they are few (the host's givensChunks), the
// _chunked kernels cut T into C chunks, blockDim.y = C (see "Chunked T"
// below): each thread carries one row of its chunk's transition product,
// K registers, not K*K.
// Exported as givens_scan_{fwd,bwd}_{f32,f16,bf16}_k<K>[_chunked|_turn].
#include "common.cuh"

// GIVENS_MAX_THREADS is the largest block the host launches (the kernels'
// __launch_bounds__), GIVENS_CHUNKED_MAX_THREADS that of the chunked
// kernels (declared with one block per SM, so that the compiler may use
// up to 255 registers rather than spill); GIVENS_PREFETCH the steps of
// inputs in flight per thread, GIVENS_PREFETCH_FWD16 those of the
// unchunked forward for f16 and bf16 (GV_FWD_D): with half the bytes per
// step, twice the steps keep as many bytes in flight per thread as f32
// does. (The 16-bit backward, with four inputs a step, would spill.)
#define GIVENS_MAX_THREADS 128
#define GIVENS_CHUNKED_MAX_THREADS 256
#define GIVENS_PREFETCH 16
#define GIVENS_PREFETCH_FWD16 32
// GIVENS_STAGE_ROUND is the round of the f32 backward, which stages its
// inputs in shared memory (GvBwd, STAGED) rather than in registers.
#define GIVENS_STAGE_ROUND 8
#define GV_BWD_D(DT) ((DT) == DT_F32 ? GIVENS_STAGE_ROUND : GIVENS_PREFETCH)
// GIVENS_PREFETCH_CHUNKED is the ring of the chunked kernels, whose steps
// are long (pass 1 carries K+1 vectors): a ring of 16 made their code
// (every step of a round unrolled, in two or three variants per pass) too
// large for the instruction cache, and their few warps stalled on
// instruction fetch. 4 steps of such a round still outlast the loads in
// flight: on an H200 at the long-T shape (f32, k = 8, 32 chunks) a ring of
// 4 took the forward from 28.2 to 27.7 us and the forward and backward
// from 63.8 to 59.0 us against a ring of 8 (code 86 and 98 KB, not 150
// and 178).
#define GIVENS_PREFETCH_CHUNKED 4
#define GV_FWD_D(DT) ((DT) == DT_F32 ? GIVENS_PREFETCH : GIVENS_PREFETCH_FWD16)

#ifdef __CUDACC__
// gv_shfl2 replaces a and b with those of lane src (0..31) of the calling
// warp; every lane of the warp calls it.
__device__ __forceinline__ void gv_shfl2(float& a, float& b, int src) {
    a = __shfl_sync(0xffffffffu, a, src);
    b = __shfl_sync(0xffffffffu, b, src);
}
__device__ __forceinline__ float gv_shfl(float v, int src) { return __shfl_sync(0xffffffffu, v, src); }
// gv_shfl_n replaces each of v with that of lane src; gv_gather sets o[k]
// to y of lane base + k.
template <int M>
__device__ __forceinline__ void gv_shfl_n(float (&v)[M], int src) {
#pragma unroll
    for (int i = 0; i < M; i++) {
        v[i] = __shfl_sync(0xffffffffu, v[i], src);
    }
}
template <int M>
__device__ __forceinline__ void gv_gather(float y, int base, float (&o)[M]) {
#pragma unroll
    for (int k = 0; k < M; k++) {
        o[k] = __shfl_sync(0xffffffffu, y, base + k);
    }
}
#else
// The host emulation has no warps: an exchange through a block-wide
// buffer and a barrier, which every thread of the block reaches (the
// kernels' loops are block-uniform). Exchanges alternate between two
// buffers, so a thread that writes exchange k+2 has passed barrier k+1,
// which every thread reaches only after its reads of exchange k.
static float gv_xchg[2][2][GIVENS_CHUNKED_MAX_THREADS];
thread_local int gv_phase;
inline void gv_shfl2(float& a, float& b, int src) {
    const int tid = (int)(threadIdx.x + threadIdx.y * blockDim.x);
    float(*buf)[GIVENS_CHUNKED_MAX_THREADS] = gv_xchg[gv_phase];
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
// The exchanges of many values at once (the chunk aggregates' K+1 vectors)
// take one barrier each; they share the alternation of gv_shfl2.
static float gv_xchg_n[2][17][GIVENS_CHUNKED_MAX_THREADS];
template <int M>
inline void gv_shfl_n(float (&v)[M], int src) {
    const int tid = (int)(threadIdx.x + threadIdx.y * blockDim.x);
    float(*buf)[GIVENS_CHUNKED_MAX_THREADS] = gv_xchg_n[gv_phase];
    gv_phase ^= 1;
    for (int i = 0; i < M; i++) {
        buf[i][tid] = v[i];
    }
    __syncthreads();
    for (int i = 0; i < M; i++) {
        v[i] = buf[i][(tid & ~31) + src];
    }
}
template <int M>
inline void gv_gather(float y, int base, float (&o)[M]) {
    const int tid = (int)(threadIdx.x + threadIdx.y * blockDim.x);
    float(*buf)[GIVENS_CHUNKED_MAX_THREADS] = gv_xchg_n[gv_phase];
    gv_phase ^= 1;
    buf[0][tid] = y;
    __syncthreads();
    for (int k = 0; k < M; k++) {
        o[k] = buf[0][(tid & ~31) + base + k];
    }
}
#endif

// gv_any reports whether p holds in any thread of the calling warp; every
// lane of the warp calls it. The host emulation, whose exchanges are
// block-wide, asks the whole block, so that the threads of a block keep
// taking the same branches.
#ifdef __CUDACC__
__device__ __forceinline__ bool gv_any(bool p) { return __any_sync(0xffffffffu, p); }
#else
inline bool gv_any(bool p) {
    const int tid = (int)(threadIdx.x + threadIdx.y * blockDim.x), nt = (int)(blockDim.x * blockDim.y);
    float* buf = gv_xchg[gv_phase][0];
    gv_phase ^= 1;
    buf[tid] = p ? 1.0f : 0.0f;
    __syncthreads();
    bool any = false;
    for (int i = 0; i < nt; i++) {
        any |= buf[i] != 0.0f;
    }
    return any;
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
// takes the library function beyond, and for Inf and NaN. The benchmark's
// angles lie in (-pi, pi). f32 kernels take these: the special function
// unit's sine and cosine (absolute error up to 2^-21.4 on [-pi, pi]) would
// put an error of that size into every step of an f32 recurrence, whose
// long-memory gate allows 2^-23 a step. The 16-bit kernels take the
// special function unit's (gv_sincos_hw).
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

// gv_sincos_sfu sets s, c = sin(x), cos(x) from the special function unit
// (sin.approx.f32, cos.approx.f32: absolute error at most 2^-21.41 and
// 2^-21.19 for an argument in [-pi, pi]; the host build, the emulation
// test, takes the C library's sinf and cosf). The unit scales its argument
// to turns in f32, which loses about |x| 2^-24 beyond one turn, so x must
// lie within pi: gv_sincos_hw reduces it first, and the _turn kernels,
// whose theta the host found within pi rounded to f32, call it directly.
__device__ __forceinline__ void gv_sincos_sfu(float x, float& s, float& c) {
#ifdef __CUDA_ARCH__
    asm("sin.approx.f32 %0, %1;" : "=f"(s) : "f"(x));
    asm("cos.approx.f32 %0, %1;" : "=f"(c) : "f"(x));
#else
    s = sinf(x);
    c = cosf(x);
#endif
}

// gv_sincos_hw sets s, c = sin(x), cos(x) from the special function unit
// (gv_sincos_sfu) for |x| <= GV_FAST_ANGLE: x is first reduced by the
// nearest multiple q of 2 pi in two parts (the library's split of pi/2,
// times 4; the third part times q stays below 2^-31 here): r = x - 2 pi q
// to within an ulp of r. Six instructions where the library's fast path
// takes about twenty. For |x| at most pi rounded to f32, q is 0 and r is
// x.
__device__ __forceinline__ void gv_sincos_hw(float x, float& s, float& c) {
    const float q = rintf(x * 0.159154943f);
    float r = fmaf(q, -6.2831850051879883e+00f, x);
    r = fmaf(q, -3.0199157663446385e-07f, r);
    gv_sincos_sfu(r, s, c);
}

// gv_sincos is the sine and cosine of an angle of any size: the fast path
// for |x| <= GV_FAST_ANGLE (HW: gv_sincos_hw, the 16-bit kernels'; else
// gv_sincos_fast), the library function beyond (and for Inf and NaN), so
// that an angle's values never depend on the angles around it. The
// unit's absolute error is 2^10 times below an f16 unit in the last place
// (2^8 below bf16's); the 16-bit gates hold the outputs to that unit,
// where the f32 long-memory gate allows 2^-23 a step.
template <bool HW>
__device__ __forceinline__ void gv_sincos(float x, float& s, float& c) {
    if (!(fabsf(x) <= GV_FAST_ANGLE)) {
        const GvSinCos r = gv_sincos_slow(x);
        s = r.s;
        c = r.c;
        return;
    }
    if (HW) {
        gv_sincos_hw(x, s, c);
    } else {
        gv_sincos_fast(x, s, c);
    }
}

// GvLane is a thread's place: its lane (b, n; n clamped to N-1 past the
// tile's end, lane = b*N + n), whether it stores, its channel j, and the
// warp lanes it meets: the owners of its layer-1 and layer-2 angles, its
// partners in both layers, and whether it is the lower channel of each
// pair (has2: whether layer 2 touches channel j at all); base is the warp
// lane of the lane's channel 0.
template <int K>
struct GvLane {
    static constexpr int F = K / 2;
    i64 b, n, lane;
    int j, base, a1, a2, p1, p2;
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
        // The warp lane: blocks are whole warps and blockDim.x = W*K, so the
        // K threads of a lane are K consecutive lanes of one warp.
        const int l = (int)(threadIdx.x + threadIdx.y * blockDim.x) & 31;
        base = l & ~(K - 1);
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

// gv_angles is the thread's angle's sine and cosine, sent to the threads
// of its pairs. FAST: every angle of the ring is within the fast path's
// bound (gv_all_fast), so no branch is taken. TURN: every angle of theta
// is within pi rounded to f32 (the _turn kernels), so none is tested and
// the 16-bit kernels' reduction is left out (gv_sincos_sfu).
template <int DT, int K, bool FAST, bool TURN = false>
__device__ __forceinline__ GvAngles gv_angles(const GvLane<K>& L, float th) {
    float s, c;
    if (TURN && DT != DT_F32) {
        gv_sincos_sfu(th, s, c);
    } else if (!FAST && !TURN) {
        gv_sincos<DT != DT_F32>(th, s, c);
    } else if (DT != DT_F32) {
        gv_sincos_hw(th, s, c);
    } else {
        gv_sincos_fast(th, s, c);
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

// The ring holds elements as loaded (raw 16-bit words for f16 and bf16,
// each in a 32-bit register) and widens them where a step uses them: a
// widening right after its load would make the thread wait for the load
// there, and the ring's loads would no longer be in flight while the steps
// before them run. A 16-bit word is loaded into a 32-bit register (ld.u16
// zero-extends) because the compiler would otherwise pack two 16-bit ring
// slots into the halves of one register, and the packing waits for the
// load that was just issued.
template <int DT>
struct GvRaw {
    typedef unsigned int type;
};
template <>
struct GvRaw<DT_F32> {
    typedef float type;
};

// gv_adv is p + n bytes, formed where it is written: the compiler, which
// sees through a plain sum, would turn a ring's chain of them back into
// base + d*stride (a multiply-add of 64 bits a load).
template <typename P>
__device__ __forceinline__ P* gv_adv(P* p, i64 n) {
#ifdef __CUDA_ARCH__
    P* q;
    asm("add.s64 %0, %1, %2;" : "=l"(q) : "l"(p), "l"(n));
    return q;
#else
    return (P*)((char*)p + n);
#endif
}

// gv_ldp loads the element at p as it is stored; gv_ld element i of p.
template <int DT>
__device__ __forceinline__ typename GvRaw<DT>::type gv_ldp(const char* __restrict__ p) {
    if constexpr (DT == DT_F32) {
        return __ldg((const float*)p);
    } else {
#ifdef __CUDA_ARCH__
        unsigned int v;
        asm("ld.global.nc.u16 %0, [%1];" : "=r"(v) : "l"(p));
        return v;
#else
        return __ldg((const unsigned short*)p);
#endif
    }
}
template <int DT>
__device__ __forceinline__ typename GvRaw<DT>::type gv_ld(const void* __restrict__ p, i64 i) {
    return gv_ldp<DT>((const char*)p + i * (DT == DT_F32 ? 4 : 2));
}

// gv_wide widens a loaded element to f32 (exactly).
template <int DT>
__device__ __forceinline__ float gv_wide(float v) {
    return v;
}
template <int DT>
__device__ __forceinline__ float gv_wide(unsigned int v) {
    return widen<DT>((unsigned short)v);
}

// gv_narrow is narrow for the Givens kernels' stores. For bf16 on the GPU
// it rounds with the packed two-value conversion (cvt.rn.bf16x2.f32, the
// other half zero) rather than cvt.rn.bf16.f32: the same rounding, the
// same values, but ptxas (11.8 here, and the 580 driver's) compiles the
// one-value form in these kernels to F2F.BF16.F32, a conversion at the
// special function unit's rate, where it gives the f16 stores the packed
// F2FP of the ALU. On an H200 the large bf16 forward and backward took
// 1.61 ms with the packed form, not 1.72; the forward alone did not move.
template <int DT>
__device__ __forceinline__ unsigned short gv_narrow(float v) {
#ifdef __CUDA_ARCH__
    if constexpr (DT == DT_BF16) {
        unsigned int w;
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(0.0f), "f"(v));
        return v != v ? bf16_nan(v) : (unsigned short)w;
    }
#endif
    return (unsigned short)narrow<DT>(v);
}

// gv_stp stores v at p, rounded to DT, where on (gv_st: at element i of
// p). The rounding (and a 16-bit NaN's patch) is done whether or not the
// thread stores. PRED makes the store one predicated instruction (st.global
// under a predicate, in PTX of its own): left to the compiler, the `if
// (on)` around each of the unchunked backward's four stores a step became
// a branch with the rounding and the address arithmetic moved into it,
// which cut the unrolled steps into blocks scheduled one at a time (on an
// H200 the bf16 backward ran at half the speed of the f16 one; with PRED
// the large bf16 forward and backward took 1.61 ms, not 2.76). The
// forwards and the chunked kernels keep the plain store, which the
// compiler predicates itself and which times faster there (the f16
// forward 487 against 524 µs).
template <int DT, bool PRED = false>
__device__ __forceinline__ void gv_stp(char* __restrict__ p, float v, bool on) {
#ifdef __CUDA_ARCH__
    if constexpr (PRED) {
        if constexpr (DT == DT_F32) {
            asm volatile(
                "{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %2, 0;\n\t@p st.global.wb.f32 [%0], %1;\n\t}" ::"l"(p),
                "f"(v), "r"((unsigned int)on));
        } else {
            const unsigned short r = gv_narrow<DT>(v);
            asm volatile(
                "{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %2, 0;\n\t@p st.global.wb.u16 [%0], %1;\n\t}" ::"l"(p),
                "h"(r), "r"((unsigned int)on));
        }
        return;
    }
#endif
    if constexpr (DT == DT_F32) {
        if (on) {
#ifdef __CUDA_ARCH__
            __stwb((float*)p, v);
#else
            *(float*)p = v;
#endif
        }
    } else {
        const unsigned short r = gv_narrow<DT>(v);
        if (on) {
#ifdef __CUDA_ARCH__
            __stwb((unsigned short*)p, r);
#else
            *(unsigned short*)p = r;
#endif
        }
    }
}
template <int DT, bool PRED = false>
__device__ __forceinline__ void gv_st(void* __restrict__ p, i64 i, float v, bool on) {
    gv_stp<DT, PRED>((char*)p + i * (DT == DT_F32 ? 4 : 2), v, on);
}

// gv_all_fast reports whether every angle of a ring takes the fast sincos
// (f32: gv_sincos_fast; 16-bit: gv_sincos_hw). Every f16 angle does, with
// no test: a finite one is at most 65504, within GV_FAST_ANGLE, and the
// fast path gives Inf and NaN the library's sine and cosine, NaN (the
// reduction makes them NaN). The test would otherwise wait, at the start
// of each round, for the angle loaded in the round's last step.
template <int DT, int D, typename R>
__device__ __forceinline__ bool gv_all_fast(const R (&th)[D]) {
    if constexpr (DT == DT_F16) {
        return true;
    }
    bool fast = true;
#pragma unroll
    for (int d = 0; d < D; d++) {
        fast &= fabsf(gv_wide<DT>(th[d])) <= GV_FAST_ANGLE;
    }
    return fast;
}

// GvFwd is a forward thread's state: the lane, the ring of inputs (slot d
// holds the steps t = d mod D), the addresses of the next step to load
// (pth: the thread's angle; psg, px: its element) and to store (ph), and
// the state y. The addresses step by a stride in bytes: indices turned
// into addresses at each load took about a third of a step's
// instructions. TURN: theta lies within pi (see gv_angles).
template <int DT, int K, bool TURN = false>
struct GvFwd {
    static constexpr int D = GV_FWD_D(DT);
    static constexpr int ES = DT == DT_F32 ? 4 : 2;
    const char* __restrict__ pth;
    const char* __restrict__ psg;
    const char* __restrict__ px;
    char* __restrict__ ph;
    GvLane<K> L;
    i64 es, as;  // strides in bytes: a step of elements and of angles
    typedef typename GvRaw<DT>::type R;
    R rth[D], rsg[D], rx[D];
    float y;

    __device__ __forceinline__ GvFwd(const void* th_, const void* sg_, const void* x_, const void* h0, void* h_,
                                     i64 T, i64 N)
        : L(N) {
        // Element j of the lane's block at step t: e0 + t*N*K; angle j: a0 +
        // t*N*(K-1). Channel K-1 has no angle: it loads angle K-2 of its
        // lane, which it does not use (only channels 0..K-2 own angles).
        const i64 blk0 = L.b * T * N + L.n;
        es = N * K * ES;
        as = N * (K - 1) * ES;
        const i64 e0 = blk0 * K + L.j, a0 = blk0 * (K - 1) + (L.j < K - 1 ? L.j : K - 2);
        psg = (const char*)sg_ + e0 * ES;
        px = (const char*)x_ + e0 * ES;
        ph = (char*)h_ + e0 * ES;
        pth = (const char*)th_ + a0 * ES;
        y = h0 != nullptr ? ld<DT>(h0, L.lane * K + L.j) : 0.0f;
#pragma unroll
        for (int d = 0; d < D; d++) {
            if (d < T) {
                load(d);
            }
        }
    }

    __device__ __forceinline__ void load(int d) {
        rth[d] = gv_ldp<DT>(pth);
        rsg[d] = gv_ldp<DT>(psg);
        rx[d] = gv_ldp<DT>(px);
        psg = gv_adv(psg, es);
        px = gv_adv(px, es);
        pth = gv_adv(pth, as);
    }

    // steps runs the D steps of the ring (the first left of them when
    // TAIL, left < 2D) and loads the next D (those before left). FAST
    // takes every angle's sincos on the fast path, without a branch, so
    // that the steps form one straight run of code in which the sincos
    // and shuffles of later steps fill the latency of the recurrence; it
    // returns whether any of the thread's angles was beyond the path's
    // bound (never, for f16), and then the steps' values may be wrong.
    template <bool TAIL, bool FAST>
    __device__ __forceinline__ bool steps(int left) {
        bool wide = false;
#pragma unroll
        for (int d = 0; d < D; d++) {
            if (!TAIL || d < left) {
                const float th = gv_wide<DT>(rth[d]), sg = gv_wide<DT>(rsg[d]), xv = gv_wide<DT>(rx[d]);
                if (!TAIL || d + D < left) {
                    load(d);
                }
                if (FAST && DT != DT_F16 && !TURN) {
                    wide |= !(fabsf(th) <= GV_FAST_ANGLE);
                }
                const GvAngles g = gv_angles<DT, K, FAST, TURN>(L, th);
                y = gv_rotate2<K>(L, g, gv_rotate1<K>(L, g, y));
                y = sg * y + xv;
                gv_stp<DT>(ph, y, L.on);
                ph = gv_adv(ph, es);
            }
        }
        return wide;
    }

    // redo runs the D steps of the whole round just run again, from state
    // y0, with each angle's sincos on its own path (gv_sincos), and stores
    // their h over those the round stored. The ring now holds the next
    // round, so the steps load their inputs again (the round's first
    // began 2D steps before the next load; its first store D steps before
    // the next store). A step's values are those of the fast path
    // wherever its angle is within the bound.
    __device__ void redo(float y0) {
        const char* qth = gv_adv(pth, -2 * D * as);
        const char* qsg = gv_adv(psg, -2 * D * es);
        const char* qx = gv_adv(px, -2 * D * es);
        char* qh = gv_adv(ph, -D * es);
        y = y0;
#pragma unroll 1
        for (int d = 0; d < D; d++) {
            const float th = gv_wide<DT>(gv_ldp<DT>(qth)), sg = gv_wide<DT>(gv_ldp<DT>(qsg)),
                        xv = gv_wide<DT>(gv_ldp<DT>(qx));
            const GvAngles g = gv_angles<DT, K, false>(L, th);
            y = gv_rotate2<K>(L, g, gv_rotate1<K>(L, g, y));
            y = sg * y + xv;
            gv_stp<DT>(qh, y, L.on);
            qth = gv_adv(qth, as);
            qsg = gv_adv(qsg, es);
            qx = gv_adv(qx, es);
            qh = gv_adv(qh, es);
        }
    }
};

// givens_fwd is the unchunked forward; TURN: theta lies within pi (the
// _turn kernels: no angle is tested, and no round runs again).
template <int DT, int K, bool TURN = false>
__device__ __forceinline__ void givens_fwd(const void* __restrict__ theta, const void* __restrict__ sigma,
                                           const void* __restrict__ x, const void* __restrict__ h0,
                                           void* __restrict__ h, i64 T, i64 N) {
    constexpr int D = GV_FWD_D(DT);
    GvFwd<DT, K, TURN> f(theta, sigma, x, h0, h, T, N);
    i64 t0 = 0;
    // Each whole round takes the fast path without testing its angles
    // first: the test would wait, at the round's start, for the angle
    // loaded in the round before's last step. A round of f32 or bf16 with
    // an angle beyond the fast path (on any thread of the warp, whose
    // shuffles the redo needs) runs again, and its stores are rewritten.
    for (; T - t0 >= 2 * D; t0 += D) {
        const float y0 = f.y;
        const bool wide = f.template steps<false, true>(0);
        if (DT != DT_F16 && !TURN && gv_any(wide)) {
            f.redo(y0);
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
//
// In f32 (STAGED) the loads do not go to the ring's registers: a round
// copies the next round's inputs into shared memory (cp_row, one group
// per round) while it runs, and the next round starts by reading them
// into the ring. The copies have no register to wait on, so the round
// that issues them never waits for them, and they have a whole round to
// arrive. Two halves of D steps alternate (stg: [2][4][D][blockDim.x]
// floats, the host's givensStageBytes), so a half is rewritten only a
// round after it was read. The 16-bit elements are too small for the
// copies (4 bytes at least) and keep the ring of loads. TURN: theta lies
// within pi (see gv_angles).
template <int DT, int K, bool TURN = false>
struct GvBwd {
    static constexpr bool STAGED = DT == DT_F32;
    static constexpr int D = GV_BWD_D(DT);
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
    float* stg;  // STAGED: the staged inputs
    int half;    // STAGED: the half the next round reads

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
        if constexpr (STAGED) {
            DYNAMIC_SHARED(sh);
            stg = sh;
            half = 0;
#pragma unroll
            for (int d = 0; d < D; d++) {
                if (d < T) {
                    stage(0, d, d < T - 1);
                }
            }
            cp_commit();
        } else {
#pragma unroll
            for (int d = 0; d < D; d++) {
                if (d < T) {
                    load(d, d < T - 1);
                }
            }
        }
    }

    // at is the staged slot of input q (theta, sigma, h_{t-1}, dh) of
    // step d of half hf.
    __device__ __forceinline__ float* at(int hf, int q, int d) const {
        return stg + ((hf * 4 + q) * D + d) * (int)blockDim.x + (int)threadIdx.x;
    }

    // stage is load for STAGED: the next step into slot d of half hf.
    __device__ __forceinline__ void stage(int hf, int d, bool prev) {
        if (hasth) {
            cp_row<DT, 1>(at(hf, 0, d), theta, aL);
        } else {
            *at(hf, 0, d) = 0.0f;
        }
        cp_row<DT, 1>(at(hf, 1, d), sigma, eL);
        if (prev) {
            cp_row<DT, 1>(at(hf, 2, d), h, eL - es);
        } else {
            *at(hf, 2, d) = hinit;
        }
        cp_row<DT, 1>(at(hf, 3, d), dh, eL);
        eL -= es;
        aL -= as;
    }

    // round starts a round of steps, left of them down to t = 0: STAGED,
    // it waits for the round's staged inputs, reads them into the ring
    // and stages the next round's (the steps d + D < left) in the other
    // half; otherwise the ring's loads were issued by the steps before.
    __device__ __forceinline__ void round(int left) {
        if constexpr (STAGED) {
            cp_wait<0>();
#pragma unroll
            for (int d = 0; d < D; d++) {
                rth[d] = *at(half, 0, d);
                rsg[d] = *at(half, 1, d);
                rhp[d] = *at(half, 2, d);
                rdh[d] = *at(half, 3, d);
            }
            half ^= 1;
#pragma unroll
            for (int d = 0; d < D; d++) {
                if (d + D < left) {
                    stage(half, d, d + D < left - 1);
                }
            }
            cp_commit();
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
                if (!STAGED && (!TAIL || d + D < left)) {
                    load(d, !TAIL || d + D < left - 1);
                }
                const GvAngles g = gv_angles<DT, K, FAST, TURN>(L, th);
                const float y1 = gv_rotate1<K>(L, g, hp);
                const float u = gv_rotate2<K>(L, g, y1);
                const float G = dhv + carry;
                gv_st<DT, true>(dx, eS, G, L.on);
                gv_st<DT, true>(dsigma, eS, G * u, L.on);
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
                gv_st<DT, true>(dtheta, aS + L.i2, d2, L.st2);
                gv_st<DT, true>(dtheta, aS + L.i1, d1, L.st1);
                eS -= es;
                aS -= as;
            }
        }
    }
};

// givens_bwd is the unchunked backward; TURN: theta lies within pi (the
// _turn kernels: no round tests its angles first).
template <int DT, int K, bool TURN = false>
__device__ __forceinline__ void givens_bwd(const void* __restrict__ theta, const void* __restrict__ sigma,
                                           const void* __restrict__ h0, const void* __restrict__ h,
                                           const void* __restrict__ dh, void* __restrict__ dtheta,
                                           void* __restrict__ dsigma, void* __restrict__ dx,
                                           void* __restrict__ dh0, i64 T, i64 N) {
    constexpr int D = GV_BWD_D(DT);
    GvBwd<DT, K, TURN> b(theta, sigma, h0, h, dh, dtheta, dsigma, dx, T, N);
    i64 r0 = 0;
    for (; T - r0 >= 2 * D + 1; r0 += D) {
        b.round(2 * D + 1);  // every step of the next round exists
        if (TURN || gv_all_fast<DT>(b.rth)) {
            b.template steps<false, true>(0);
        } else {
            b.template steps<false, false>(0);
        }
    }
    for (; r0 < T; r0 += D) {
        b.round((int)(T - r0));
        b.template steps<true, false>((int)(T - r0));
    }
    if (dh0 != nullptr && b.L.on) {
        st<DT>(dh0, b.L.lane * K + b.L.j, b.carry);
    }
}

// ---------------------------------------------------------------------------
// Chunked T (blockDim.y = C > 1), for shapes with few lanes: the block's
// threads (x, y) are channel j = x % K of lane n0 + x / K and chunk
// c = y, which covers the steps [t0, t0 + n) of the lane, with
// Lc = ceil(T / C), t0 = min(T, c*Lc) and n = min(Lc, T - t0). Every
// chunk runs Lc steps (those past its n change nothing and touch no
// memory), so the exchanges between the K threads of a lane stay in step
// across the block.
//
// The step map of the forward is affine, h -> A_t h + x_t with
// A_t = diag(sigma_t) R(theta_t); a chunk's aggregate is the composition
// of its steps, h -> M h + m. Thread j carries row j of M and m_j: the
// columns of M and m are K+1 vectors that each step maps as it maps h
// (M starts as the identity, m as zero), so a thread's row follows from
// the same rotations and shuffles as its channel of h. Pass 1 computes
// the aggregate from the chunk's inputs and publishes it in shared
// memory (C * W * K * (K+1) floats, dynamic), chunk c folds the
// aggregates of chunks 0..c-1 into its carry-in (h0, or zero), and
// pass 2 re-scans the chunk from there and stores h; the second read of
// the inputs mostly hits L2. The backward's step map on the carry is
// affine too, g -> A_t^T (g + dh_t), and its chunks fold the aggregates
// of the chunks after them, from the end of T.
//
// Folding aggregates is exact algebra but not IEEE-identical to the
// recurrence once a value is infinite or NaN (0 * Inf and Inf - Inf come
// in another order). A fold's multiply-adds with a non-finite operand are
// not finite, and each fold step mixes every channel of the carry, so a
// finite carry-in means that every aggregate and initial state folded
// into it was finite. Where a carry-in of the block is not finite, the
// block instead walks the steps before its chunks (after them, for the
// backward) one by one from memory, with the sequential kernel's
// arithmetic, and each chunk takes its carry-in from that walk: NaN and
// Inf come out as in the sequential recurrence.

// GvChunk is a thread's chunk: its index c of C, the steps of every
// chunk Lc, and its own first step t0 and steps n.
struct GvChunk {
    int c, C, Lc, n;
    i64 t0;

    __device__ __forceinline__ GvChunk(i64 T) {
        c = (int)threadIdx.y;
        C = (int)blockDim.y;
        Lc = (int)((T + C - 1) / C);
        const i64 s = (i64)c * Lc;
        t0 = s < T ? s : T;
        n = (int)(T - t0 < Lc ? T - t0 : Lc);
    }
};

// gv_back is A_t^T applied to the thread's channel of gs = sigma_t * g:
// the second layer's rotation transposed, then the first's.
template <int K>
__device__ __forceinline__ float gv_back(const GvLane<K>& L, const GvAngles& g, float gv) {
    if (K > 2) {
        const float gp = gv_shfl(gv, L.p2);
        const float g2 = L.lo2 ? g.c2 * gv + g.s2 * gp : -g.s2 * gp + g.c2 * gv;
        gv = L.has2 ? g2 : gv;
    }
    const float gp = gv_shfl(gv, L.p1);
    return L.lo1 ? g.c1 * gv + g.s1 * gp : -g.s1 * gp + g.c1 * gv;
}

// gv_fold applies the aggregate in agg (row j of M, then m_j) to the
// lane's vector of which the thread holds channel y.
template <int K>
__device__ __forceinline__ float gv_fold(const GvLane<K>& L, const float* agg, float y) {
    float hk[K];
    gv_gather<K>(y, L.base, hk);
    float s = agg[K];
#pragma unroll
    for (int k = 0; k < K; k++) {
        s = fmaf(agg[k], hk[k], s);
    }
    return s;
}

// gv_agg_layer applies one rotation layer to the M vectors of a chunk's
// aggregate, of which the thread holds channel j in v and its partner's
// in p: v = c v + s p, with the sign of the sine folded into s by the
// caller and, where the layer does not touch channel j, c = 1 and s = 0
// (v itself where it is finite; a non-finite aggregate sends the block to
// the sequential walk either way). One form for both channels of a pair:
// with a select of two expressions per vector, the compiler branched on
// the pair's side, and the warp ran both sides of every layer in turn.
template <int M>
__device__ __forceinline__ void gv_agg_layer(float (&v)[M], const float (&p)[M], float c, float s) {
#pragma unroll
    for (int i = 0; i < M; i++) {
        v[i] = fmaf(s, p[i], c * v[i]);
    }
}

// gv_agg is the thread's aggregate slot in the dynamic shared memory:
// chunk c, the block's lane w = threadIdx.x / K, channel j.
template <int K>
__device__ __forceinline__ float* gv_agg(float* sh, int c, int j) {
    const int W = (int)blockDim.x / K, w = (int)threadIdx.x / K;
    return sh + ((c * W + w) * K + j) * (K + 1);
}

// GvFwdChunk walks a forward chunk: with AGG, pass 1 (the aggregate in
// m, mb, from the inputs theta, sigma, x), else pass 2 (the scan from y,
// storing h). Its ring is GvFwd's, with loads only for the chunk's own
// steps (nl counts the steps loaded).
// gv_walk runs a chunk walker w (GvFwdChunk, GvBwdChunk) over its Lc
// steps in rounds of D, each on the fast angle path when every angle of
// the round allows it. The last round may reach past the chunk's n steps
// (and Lc): those steps load nothing and change nothing, so no round needs
// a test per step, and the code a warp runs is the D steps of one round
// body, twice (fast or not) per pass.
template <int DT, class W>
__device__ __forceinline__ void gv_walk(W& w, int Lc) {
    for (int s0 = 0; s0 < Lc; s0 += W::D) {
        if (gv_all_fast<DT>(w.rth)) {
            w.template steps<true>(s0);
        } else {
            w.template steps<false>(s0);
        }
    }
}

template <int DT, int K, bool AGG>
struct GvFwdChunk {
    static constexpr int D = GIVENS_PREFETCH_CHUNKED;
    const void* __restrict__ theta;
    const void* __restrict__ sigma;
    const void* __restrict__ x;
    void* __restrict__ h;
    GvLane<K> L;
    bool hasth;
    int n, nl;
    i64 es, as, eL, aL, eS;
    typedef typename GvRaw<DT>::type R;
    R rth[D], rsg[D], rx[D];
    float y;
    float m[K], mb;

    __device__ __forceinline__ GvFwdChunk(const GvLane<K>& L_, const void* th_, const void* sg_, const void* x_,
                                          void* h_, i64 T, i64 N, const GvChunk& ch, float y0)
        : theta(th_), sigma(sg_), x(x_), h(h_), L(L_) {
        hasth = L.j < K - 1;
        n = ch.n;
        nl = 0;
        const i64 blk0 = (L.b * T + ch.t0) * N + L.n;
        es = N * K;
        as = N * (K - 1);
        eL = eS = blk0 * K + L.j;
        aL = blk0 * (K - 1) + L.j;
        y = y0;
#pragma unroll
        for (int k = 0; k < K; k++) {
            m[k] = k == L.j ? 1.0f : 0.0f;
        }
        mb = 0.0f;
#pragma unroll
        for (int d = 0; d < D; d++) {
            load(d);
        }
    }

    __device__ __forceinline__ void load(int d) {
        const bool in = nl < n;
        rth[d] = in && hasth ? gv_ld<DT>(theta, aL) : R(0);
        rsg[d] = in ? gv_ld<DT>(sigma, eL) : R(0);
        rx[d] = in ? gv_ld<DT>(x, eL) : R(0);
        nl++;
        eL += es;
        aL += as;
    }

    // steps runs the ring's D steps from s0 (those past the chunk's n
    // steps change nothing) and loads the D after them.
    template <bool FAST>
    __device__ __forceinline__ void steps(int s0) {
#pragma unroll
        for (int d = 0; d < D; d++) {
            const float th = gv_wide<DT>(rth[d]), sg = gv_wide<DT>(rsg[d]), xv = gv_wide<DT>(rx[d]);
            load(d);
            const bool act = s0 + d < n;
            const GvAngles g = gv_angles<DT, K, FAST>(L, th);
            if (AGG) {
                // gv_rotate1 and gv_rotate2 on the K+1 vectors at once,
                // in the form of gv_agg_layer.
                float v[K + 1], p[K + 1];
#pragma unroll
                for (int i = 0; i <= K; i++) {
                    v[i] = p[i] = i < K ? m[i] : mb;
                }
                gv_shfl_n<K + 1>(p, L.p1);
                gv_agg_layer<K + 1>(v, p, g.c1, L.lo1 ? -g.s1 : g.s1);
                if (K > 2) {
#pragma unroll
                    for (int i = 0; i <= K; i++) {
                        p[i] = v[i];
                    }
                    gv_shfl_n<K + 1>(p, L.p2);
                    gv_agg_layer<K + 1>(v, p, L.has2 ? g.c2 : 1.0f, !L.has2 ? 0.0f : L.lo2 ? -g.s2 : g.s2);
                }
#pragma unroll
                for (int k = 0; k < K; k++) {
                    m[k] = act ? sg * v[k] : m[k];
                }
                mb = act ? sg * v[K] + xv : mb;
            } else {
                const float v = sg * gv_rotate2<K>(L, g, gv_rotate1<K>(L, g, y)) + xv;
                y = act ? v : y;
                gv_st<DT>(h, eS, y, L.on && act);
                eS += es;
            }
        }
    }

    __device__ __forceinline__ void walk(int Lc) { gv_walk<DT>(*this, Lc); }
};

template <int DT, int K>
__device__ __forceinline__ void givens_fwd_chunked(const void* __restrict__ theta, const void* __restrict__ sigma,
                                                   const void* __restrict__ x, const void* __restrict__ h0,
                                                   void* __restrict__ h, i64 T, i64 N) {
    DYNAMIC_SHARED(gv_sh);
    const GvLane<K> L(N);
    const GvChunk ch(T);
    float y;
    {
        GvFwdChunk<DT, K, true> a(L, theta, sigma, x, h, T, N, ch, 0.0f);
        a.walk(ch.Lc);
        float* slot = gv_agg<K>(gv_sh, ch.c, L.j);
#pragma unroll
        for (int k = 0; k < K; k++) {
            slot[k] = a.m[k];
        }
        slot[K] = a.mb;
    }
    __syncthreads();
    const float y0 = h0 != nullptr ? ld<DT>(h0, L.lane * K + L.j) : 0.0f;
    y = y0;
    for (int cp = 0; cp < ch.C - 1; cp++) {
        const float f = gv_fold<K>(L, gv_agg<K>(gv_sh, cp, L.j), y);
        y = cp < ch.c ? f : y;
    }
    if (__syncthreads_or(!(fabsf(y) < INFINITY))) {
        // The sequential walk of steps 0..t0-1 of the block's last chunk.
        const i64 tw = (i64)(ch.C - 1) * ch.Lc < T ? (i64)(ch.C - 1) * ch.Lc : T;
        const i64 blk0 = L.b * T * N + L.n;
        float z = y0, cap = y0;
        for (i64 t = 0; t < tw; t++) {
            const i64 e = (blk0 + t * N) * K + L.j, a = (blk0 + t * N) * (K - 1) + L.j;
            const float th = L.j < K - 1 ? ld<DT>(theta, a) : 0.0f;
            const float sg = ld<DT>(sigma, e), xv = ld<DT>(x, e);
            const GvAngles g = gv_angles<DT, K, false>(L, th);
            z = gv_rotate2<K>(L, g, gv_rotate1<K>(L, g, z));
            z = sg * z + xv;
            cap = t + 1 == ch.t0 ? z : cap;
        }
        y = cap;
    }
    GvFwdChunk<DT, K, false> s(L, theta, sigma, x, h, T, N, ch, y);
    s.walk(ch.Lc);
}

// GvBwdChunk walks a backward chunk from its last step down: with AGG,
// pass 1 (the aggregate of the carry's map, from theta, sigma, dh),
// else pass 2 (GvBwd's steps from the carry-in, storing the gradients).
template <int DT, int K, bool AGG>
struct GvBwdChunk {
    static constexpr int D = GIVENS_PREFETCH_CHUNKED;
    const void* __restrict__ theta;
    const void* __restrict__ sigma;
    const void* __restrict__ h;
    const void* __restrict__ dh;
    void* __restrict__ dtheta;
    void* __restrict__ dsigma;
    void* __restrict__ dx;
    GvLane<K> L;
    bool hasth;
    int n, nl;
    i64 tL;  // the step the next load reads
    i64 es, as, eL, aL, eS, aS;
    typedef typename GvRaw<DT>::type R;
    R hinit;
    R rth[D], rsg[D], rhp[AGG ? 1 : D], rdh[D];
    float carry;
    float m[K], mb;

    __device__ __forceinline__ GvBwdChunk(const GvLane<K>& L_, const void* th_, const void* sg_, const void* h0,
                                          const void* h_, const void* dh_, void* dth_, void* dsg_, void* dx_, i64 T,
                                          i64 N, const GvChunk& ch, float c0)
        : theta(th_), sigma(sg_), h(h_), dh(dh_), dtheta(dth_), dsigma(dsg_), dx(dx_), L(L_) {
        hasth = L.j < K - 1;
        n = ch.n;
        nl = 0;
        tL = ch.t0 + ch.n - 1;
        const i64 blk0 = (L.b * T + tL) * N + L.n;
        es = N * K;
        as = N * (K - 1);
        eL = eS = blk0 * K + L.j;
        aS = blk0 * (K - 1);
        aL = aS + L.j;
        hinit = !AGG && h0 != nullptr ? gv_ld<DT>(h0, L.lane * K + L.j) : R(0);
        carry = c0;
#pragma unroll
        for (int k = 0; k < K; k++) {
            m[k] = k == L.j ? 1.0f : 0.0f;
        }
        mb = 0.0f;
#pragma unroll
        for (int d = 0; d < D; d++) {
            load(d);
        }
    }

    __device__ __forceinline__ void load(int d) {
        const bool in = nl < n;
        rth[d] = in && hasth ? gv_ld<DT>(theta, aL) : R(0);
        rsg[d] = in ? gv_ld<DT>(sigma, eL) : R(0);
        rdh[d] = in ? gv_ld<DT>(dh, eL) : R(0);
        if (!AGG) {
            rhp[d] = !in ? R(0) : tL > 0 ? gv_ld<DT>(h, eL - es) : hinit;
        }
        nl++;
        tL--;
        eL -= es;
        aL -= as;
    }

    // steps runs the ring's D steps from s0 (those past the chunk's n
    // steps change nothing) and loads the D after them.
    template <bool FAST>
    __device__ __forceinline__ void steps(int s0) {
#pragma unroll
        for (int d = 0; d < D; d++) {
            const float th = gv_wide<DT>(rth[d]), sg = gv_wide<DT>(rsg[d]), dhv = gv_wide<DT>(rdh[d]);
            const float hp = AGG ? 0.0f : gv_wide<DT>(rhp[AGG ? 0 : d]);
            load(d);
            const bool act = s0 + d < n;
            const GvAngles g = gv_angles<DT, K, FAST>(L, th);
            if (AGG) {
                // gv_back on the K+1 vectors at once.
                float v[K + 1], p[K + 1];
#pragma unroll
                for (int i = 0; i <= K; i++) {
                    v[i] = p[i] = i < K ? sg * m[i] : sg * (dhv + mb);
                }
                if (K > 2) {
                    gv_shfl_n<K + 1>(p, L.p2);
                    gv_agg_layer<K + 1>(v, p, L.has2 ? g.c2 : 1.0f, !L.has2 ? 0.0f : L.lo2 ? g.s2 : -g.s2);
#pragma unroll
                    for (int i = 0; i <= K; i++) {
                        p[i] = v[i];
                    }
                }
                gv_shfl_n<K + 1>(p, L.p1);
                gv_agg_layer<K + 1>(v, p, g.c1, L.lo1 ? g.s1 : -g.s1);
#pragma unroll
                for (int i = 0; i < K; i++) {
                    m[i] = act ? v[i] : m[i];
                }
                mb = act ? v[K] : mb;
            } else {
                // GvBwd's step.
                const float y1 = gv_rotate1<K>(L, g, hp);
                const float u = gv_rotate2<K>(L, g, y1);
                const float G = dhv + carry;
                gv_st<DT>(dx, eS, G, L.on && act);
                gv_st<DT>(dsigma, eS, G * u, L.on && act);
                float gv = sg * G;
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
                const float c = L.lo1 ? g.c1 * gv + g.s1 * gp : -g.s1 * gp + g.c1 * gv;
                carry = act ? c : carry;
                gv_st<DT>(dtheta, aS + L.i2, d2, L.st2 && act);
                gv_st<DT>(dtheta, aS + L.i1, d1, L.st1 && act);
                eS -= es;
                aS -= as;
            }
        }
    }

    __device__ __forceinline__ void walk(int Lc) { gv_walk<DT>(*this, Lc); }
};

template <int DT, int K>
__device__ __forceinline__ void givens_bwd_chunked(const void* __restrict__ theta, const void* __restrict__ sigma,
                                                   const void* __restrict__ h0, const void* __restrict__ h,
                                                   const void* __restrict__ dh, void* __restrict__ dtheta,
                                                   void* __restrict__ dsigma, void* __restrict__ dx,
                                                   void* __restrict__ dh0, i64 T, i64 N) {
    DYNAMIC_SHARED(gv_sh);
    const GvLane<K> L(N);
    const GvChunk ch(T);
    {
        GvBwdChunk<DT, K, true> a(L, theta, sigma, h0, h, dh, dtheta, dsigma, dx, T, N, ch, 0.0f);
        a.walk(ch.Lc);
        float* slot = gv_agg<K>(gv_sh, ch.c, L.j);
#pragma unroll
        for (int k = 0; k < K; k++) {
            slot[k] = a.m[k];
        }
        slot[K] = a.mb;
    }
    __syncthreads();
    // The carry into the chunk's last step: zero past T, then the chunks
    // after this one folded from the last.
    float cr = 0.0f;
    for (int cp = ch.C - 1; cp > 0; cp--) {
        const float f = gv_fold<K>(L, gv_agg<K>(gv_sh, cp, L.j), cr);
        cr = cp > ch.c ? f : cr;
    }
    if (__syncthreads_or(!(fabsf(cr) < INFINITY))) {
        // The sequential walk of steps T-1 down to the end of the block's
        // first chunk.
        const i64 tw = ch.Lc < T ? (i64)ch.Lc : T, t1 = ch.t0 + ch.n;
        const i64 blk0 = L.b * T * N + L.n;
        float z = 0.0f, cap = 0.0f;
        for (i64 t = T - 1; t >= tw; t--) {
            const i64 e = (blk0 + t * N) * K + L.j, a = (blk0 + t * N) * (K - 1) + L.j;
            const float th = L.j < K - 1 ? ld<DT>(theta, a) : 0.0f;
            const float sg = ld<DT>(sigma, e), dhv = ld<DT>(dh, e);
            const GvAngles g = gv_angles<DT, K, false>(L, th);
            z = gv_back<K>(L, g, sg * (dhv + z));
            cap = t == t1 ? z : cap;
        }
        cr = cap;
    }
    GvBwdChunk<DT, K, false> s(L, theta, sigma, h0, h, dh, dtheta, dsigma, dx, T, N, ch, cr);
    s.walk(ch.Lc);
    if (dh0 != nullptr && L.on && ch.c == 0) {
        st<DT>(dh0, L.lane * K + L.j, s.carry);
    }
}

#define GIVENS_K(NAME, DT, K)                                                                     \
    extern "C" __global__ void __launch_bounds__(GIVENS_MAX_THREADS)                              \
        givens_scan_fwd_##NAME##_k##K(const void* theta, const void* sigma, const void* x,        \
                                      const void* h0, void* h, i64 T, i64 N) {                    \
        givens_fwd<DT, K>(theta, sigma, x, h0, h, T, N);                                          \
    }                                                                                             \
    extern "C" __global__ void __launch_bounds__(GIVENS_MAX_THREADS)                              \
        givens_scan_fwd_##NAME##_k##K##_turn(const void* theta, const void* sigma, const void* x, \
                                             const void* h0, void* h, i64 T, i64 N) {             \
        givens_fwd<DT, K, true>(theta, sigma, x, h0, h, T, N);                                    \
    }                                                                                             \
    extern "C" __global__ void __launch_bounds__(GIVENS_MAX_THREADS)                              \
        givens_scan_bwd_##NAME##_k##K(const void* theta, const void* sigma, const void* h0,       \
                                      const void* h, const void* dh, void* dtheta,                \
                                      void* dsigma, void* dx, void* dh0, i64 T, i64 N) {          \
        givens_bwd<DT, K>(theta, sigma, h0, h, dh, dtheta, dsigma, dx, dh0, T, N);                \
    }                                                                                             \
    extern "C" __global__ void __launch_bounds__(GIVENS_MAX_THREADS)                              \
        givens_scan_bwd_##NAME##_k##K##_turn(const void* theta, const void* sigma, const void* h0, \
                                             const void* h, const void* dh, void* dtheta,         \
                                             void* dsigma, void* dx, void* dh0, i64 T, i64 N) {   \
        givens_bwd<DT, K, true>(theta, sigma, h0, h, dh, dtheta, dsigma, dx, dh0, T, N);          \
    }                                                                                             \
    extern "C" __global__ void __launch_bounds__(GIVENS_CHUNKED_MAX_THREADS, 1)                   \
        givens_scan_fwd_##NAME##_k##K##_chunked(const void* theta, const void* sigma,             \
                                                const void* x, const void* h0, void* h, i64 T,    \
                                                i64 N) {                                          \
        givens_fwd_chunked<DT, K>(theta, sigma, x, h0, h, T, N);                                  \
    }                                                                                             \
    extern "C" __global__ void __launch_bounds__(GIVENS_CHUNKED_MAX_THREADS, 1)                   \
        givens_scan_bwd_##NAME##_k##K##_chunked(const void* theta, const void* sigma,             \
                                                const void* h0, const void* h, const void* dh,    \
                                                void* dtheta, void* dsigma, void* dx, void* dh0,  \
                                                i64 T, i64 N) {                                   \
        givens_bwd_chunked<DT, K>(theta, sigma, h0, h, dh, dtheta, dsigma, dx, dh0, T, N);        \
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
