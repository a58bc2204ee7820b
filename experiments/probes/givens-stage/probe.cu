// A timing probe of the unchunked Givens forward (k = 8, angles within pi),
// to take its time apart on a GPU: the library's _turn kernel at several
// tiles; the same kernel's memory traffic alone (probe_ring_mem); and a
// second design whose warps stage their inputs and outputs in shared
// memory (GvStage), whole, as its memory traffic alone, and as its
// arithmetic alone (no global memory). None of these is a library kernel.
// Built three times (f32, f16, bf16) as the library's modules are
// (build.sh): nvcc -ptx -arch=compute_80 -O3 -DSCAN_DT_NAME=f16
// -DSCAN_DT=DT_F16 -DSCAN_K=8.
#include "../../../cuda/kernels/givens_scan.cu"

// pack2 rounds lo and hi to DT (neither NaN) and packs them, lo in the
// low half.
template <int DT>
__device__ __forceinline__ unsigned int pack2(float lo, float hi) {
#ifdef __CUDA_ARCH__
    unsigned int w;
    if constexpr (DT == DT_F16) {
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
    } else {
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
    }
    return w;
#else
    return narrow<DT>(lo) | narrow<DT>(hi) << 16;
#endif
}

// GvStage is a warp's forward over rounds of R = 32 steps. Each round
// starts the copies of the round NB - 1 ahead: the rows of theta, sigma
// and x of the warp's 32/K lanes (contiguous in memory), into shared
// memory with 16- or 8-byte cp.async, chunk c = l + 32 q of the round on
// thread l (so that one instruction copies whole rows side by side). The
// steps read their inputs from shared memory at fixed offsets and write h
// there; at the round's end the warp writes the round's h rows with
// 16-byte stores. MODE 0: the forward; 1: the same memory traffic, y =
// sigma*y + x and h = y + theta (no angles, no shuffles); 2: the
// arithmetic of mode 0 over round 0's inputs, no global memory after the
// first round (h of the last step only). OUT32: the steps write h to
// shared memory as f32, and the round's end rounds it to DT eight values
// at a time (packed conversions; the NaN patch only for a chunk whose sum
// is NaN).
template <int DT, int K, int MODE, bool OUT32 = false, int NB = 2>
struct GvStage {
    static constexpr int R = 32;
    static constexpr int ES = DT == DT_F32 ? 4 : 2;
    static constexpr int LW = 32 / K;
    static constexpr int ROW_TH = LW * (K - 1) * ES;
    static constexpr int ROW_E = 32 * ES;
    static constexpr int CH_TH = ROW_TH % 16 == 0 ? 16 : (ROW_TH % 8 == 0 ? 8 : 4);
    static constexpr int OFF_SG = R * ROW_TH;
    static constexpr int OFF_X = OFF_SG + R * ROW_E;
    static constexpr int BUF = OFF_X + R * ROW_E;
    static constexpr int OUT = NB * BUF;
    static constexpr int OES = OUT32 ? 4 : ES;  // bytes of a staged output
    static constexpr int WARP_BYTES = OUT + R * 32 * OES;
    static_assert(BUF % 16 == 0, "rows stay 16-byte aligned");

    GvLane<K> L;
    int l;
    char* sh;           // the warp's shared memory
    // The copies: a round's rows of each input, in chunks of CH_TH
    // (theta) or 16 bytes (sigma, x), chunk c = l + 32 q of the round for
    // q = 0, 1, ... (so that one instruction copies whole rows, 32 chunks
    // side by side); the round's sources at cth, csg, cx, and each chunk's
    // offset from them.
    static constexpr int CPR_TH = ROW_TH / CH_TH, CPR = ROW_E / 16;
    const char* cth;
    const char* csg;
    const char* cx;
    i64 oth[CPR_TH], oe[CPR];
    char* hp;  // this thread's first write-out address of a round
    i64 es, as, T;
    int thoff;
    float y;

    __device__ __forceinline__ GvStage(const void* th_, const void* sg_, const void* x_, const void* h0, void* h_,
                                       i64 T_, i64 N)
        : L(N), T(T_) {
        DYNAMIC_SHARED(smem);
        l = (int)threadIdx.x & 31;
        sh = (char*)smem + ((int)threadIdx.x >> 5) * WARP_BYTES;
        const i64 n0 = L.n - (l / K);
        const i64 blk0 = L.b * T * N + n0;
        es = N * K * ES;
        as = N * (K - 1) * ES;
        cth = (const char*)th_ + blk0 * (K - 1) * ES;
        csg = (const char*)sg_ + blk0 * K * ES;
        cx = (const char*)x_ + blk0 * K * ES;
#pragma unroll
        for (int q = 0; q < CPR_TH; q++) {
            const int c = l + 32 * q;
            oth[q] = (c / CPR_TH) * as + (c % CPR_TH) * CH_TH;
        }
#pragma unroll
        for (int q = 0; q < CPR; q++) {
            const int c = l + 32 * q;
            oe[q] = (c / CPR) * es + (c % CPR) * 16;
        }
        hp = (char*)h_ + blk0 * K * ES + (l / CPR) * es + (l % CPR) * 16;
        thoff = ((l / K) * (K - 1) + (L.j < K - 1 ? L.j : K - 2)) * ES;
        y = h0 != nullptr ? ld<DT>(h0, L.lane * K + L.j) : 0.0f;
#pragma unroll
        for (int q = 0; q < NB - 1; q++) {
            stage(q, q * R);
            cp_commit();
        }
    }

    // stage copies the rows of steps r0 .. r0 + R - 1 (those before T)
    // into buffer b.
    __device__ __forceinline__ void stage(int b, i64 r0) {
        char* d = sh + b * BUF;
        const i64 left = T - r0;
#pragma unroll
        for (int q = 0; q < CPR_TH; q++) {
            const int c = l + 32 * q;
            if (c / CPR_TH < left) {
#ifdef __CUDA_ARCH__
                const unsigned int a = (unsigned int)__cvta_generic_to_shared(d + c * CH_TH);
                if constexpr (CH_TH == 16) {
                    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(a), "l"(cth + oth[q]) : "memory");
                } else {
                    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(a), "l"(cth + oth[q]), "n"(CH_TH)
                                 : "memory");
                }
#endif
            }
        }
#pragma unroll
        for (int q = 0; q < CPR; q++) {
            const int c = l + 32 * q;
            if (c / CPR < left) {
#ifdef __CUDA_ARCH__
                const unsigned int a = (unsigned int)__cvta_generic_to_shared(d + OFF_SG + c * 16);
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(a), "l"(csg + oe[q]) : "memory");
                const unsigned int a2 = (unsigned int)__cvta_generic_to_shared(d + OFF_X + c * 16);
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(a2), "l"(cx + oe[q]) : "memory");
#endif
            }
        }
        cth = gv_adv(cth, R * as);
        csg = gv_adv(csg, R * es);
        cx = gv_adv(cx, R * es);
    }

    __device__ __forceinline__ float in(const char* p) const {
        if constexpr (DT == DT_F32) {
            return *(const float*)p;
        } else {
            return gv_wide<DT>((unsigned int)*(const unsigned short*)p);
        }
    }

    __device__ __forceinline__ void out(int d, float v) {
        char* p = sh + OUT + d * 32 * OES + l * OES;
        if constexpr (DT == DT_F32 || OUT32) {
            *(float*)p = v;
        } else {
            *(unsigned short*)p = gv_narrow<DT>(v);
        }
    }

    // steps runs the round's steps (the first left of them when TAIL).
    template <bool TAIL>
    __device__ __forceinline__ void steps(const char* b, int left) {
#pragma unroll
        for (int d = 0; d < R; d++) {
            if (!TAIL || d < left) {
                const float th = in(b + d * ROW_TH + thoff);
                const float sg = in(b + OFF_SG + d * ROW_E + l * ES);
                const float xv = in(b + OFF_X + d * ROW_E + l * ES);
                if constexpr (MODE == 1) {
                    y = sg * y + xv;
                    out(d, y + th);
                } else {
                    const GvAngles g = gv_angles<DT, K, true, true>(L, th);
                    y = gv_rotate2<K>(L, g, gv_rotate1<K>(L, g, y));
                    y = sg * y + xv;
                    if constexpr (MODE == 0) {
                        out(d, y);
                    }
                }
            }
        }
    }

    // write writes the round's rows (those before left) of h.
    __device__ __forceinline__ void write(int left) {
        constexpr int RPP = 32 / CPR;  // rows a pass
#pragma unroll
        for (int q = 0; q < R / RPP; q++) {
            const int d = l / CPR + q * RPP;
            if (d < left) {
                uint4 v;
                if constexpr (OUT32 && DT != DT_F32) {
                    const float* f = (const float*)(sh + OUT + d * 128 + (l % CPR) * 32);
                    const float4 a = *(const float4*)f, b = *(const float4*)(f + 4);
                    const float sum = ((a.x + a.y) + (a.z + a.w)) + ((b.x + b.y) + (b.z + b.w));
                    if (sum != sum) {
                        v.x = gv_narrow<DT>(a.x) | (unsigned int)gv_narrow<DT>(a.y) << 16;
                        v.y = gv_narrow<DT>(a.z) | (unsigned int)gv_narrow<DT>(a.w) << 16;
                        v.z = gv_narrow<DT>(b.x) | (unsigned int)gv_narrow<DT>(b.y) << 16;
                        v.w = gv_narrow<DT>(b.z) | (unsigned int)gv_narrow<DT>(b.w) << 16;
                    } else {
                        v.x = pack2<DT>(a.x, a.y);
                        v.y = pack2<DT>(a.z, a.w);
                        v.z = pack2<DT>(b.x, b.y);
                        v.w = pack2<DT>(b.z, b.w);
                    }
                } else {
                    v = *(const uint4*)(sh + OUT + d * ROW_E + (l % CPR) * 16);
                }
                *(uint4*)(hp + q * RPP * es) = v;
            }
        }
        hp = gv_adv(hp, R * es);
    }

    __device__ __forceinline__ void run(void* h_) {
        int b = 0;  // the buffer of this round
        for (i64 r0 = 0; r0 < T; r0 += R) {
            if (MODE == 2) {
                cp_wait<0>();
            } else {
                cp_wait<NB - 2>();
            }
            __syncwarp();
            if (MODE != 2) {
                const int bn = b + NB - 1 >= NB ? b - 1 : b + NB - 1;
                stage(bn, r0 + (NB - 1) * R);
                cp_commit();
            }
            const char* buf = sh + (MODE == 2 ? 0 : b * BUF);
            const i64 left = T - r0;
            if (left >= R) {
                steps<false>(buf, R);
            } else {
                steps<true>(buf, (int)left);
            }
            if (MODE != 2) {
                __syncwarp();
                write(left < R ? (int)left : R);
            }
            b = b + 1 == NB ? 0 : b + 1;
        }
        if (MODE == 2 && L.on) {
            st<DT>(h_, L.lane * K + L.j, y);
        }
    }
};

template <int MODE, bool OUT32, int NB>
__device__ __forceinline__ void probe_stage(const void* theta, const void* sigma, const void* x, const void* h0,
                                            void* h, i64 T, i64 N) {
    GvStage<SCAN_DT, SCAN_K, MODE, OUT32, NB> s(theta, sigma, x, h0, h, T, N);
    s.run(h);
}

#define PROBE(NAME, MODE, OUT32, NB)                                                                          \
    extern "C" __global__ void __launch_bounds__(512)                                                      \
        NAME(const void* theta, const void* sigma, const void* x, const void* h0, void* h, i64 T, i64 N) { \
        probe_stage<MODE, OUT32, NB>(theta, sigma, x, h0, h, T, N);                                        \
    }
// probe_<what><buffers>: fwd the forward (h staged in DT), fwd32 (h staged
// as f32), mem its memory traffic alone, alu its arithmetic alone.
PROBE(probe_fwd2, 0, false, 2)
PROBE(probe_fwd3, 0, false, 3)
PROBE(probe_fwd32_2, 0, true, 2)
PROBE(probe_fwd32_3, 0, true, 3)
PROBE(probe_mem2, 1, false, 2)
PROBE(probe_mem3, 1, false, 3)
PROBE(probe_alu, 2, true, 2)

// probe_turn256 is the library's _turn forward with room for blocks of
// 256 threads (tiles of 32 lanes).
extern "C" __global__ void __launch_bounds__(256)
    probe_turn256(const void* theta, const void* sigma, const void* x, const void* h0, void* h, i64 T, i64 N) {
    givens_fwd<SCAN_DT, SCAN_K, true>(theta, sigma, x, h0, h, T, N);
}

// probe_ring_mem is the library's forward with its ring of loads and its
// stores as they are, and y = sigma*y + x in place of the rotations (h
// written as y + theta): its memory traffic alone.
extern "C" __global__ void __launch_bounds__(512)
    probe_ring_mem(const void* theta, const void* sigma, const void* x, const void* h0, void* h, i64 T, i64 N) {
    constexpr int DT = SCAN_DT, D = GV_FWD_D(DT);
    GvFwd<DT, SCAN_K, true> f(theta, sigma, x, h0, h, T, N);
    i64 t0 = 0;
    // Whole rounds with no test (as the library's forward runs them), then
    // the steps left.
    for (; T - t0 >= 2 * D; t0 += D) {
#pragma unroll
        for (int d = 0; d < D; d++) {
            const float th = gv_wide<DT>(f.rth[d]), sg = gv_wide<DT>(f.rsg[d]), xv = gv_wide<DT>(f.rx[d]);
            f.load(d);
            f.y = sg * f.y + xv;
            gv_stp<DT>(f.ph, f.y + th, f.L.on);
            f.ph = gv_adv(f.ph, f.es);
        }
    }
    for (; t0 < T; t0 += D) {
        const i64 left = T - t0;
#pragma unroll
        for (int d = 0; d < D; d++) {
            if (d < left) {
                const float th = gv_wide<DT>(f.rth[d]), sg = gv_wide<DT>(f.rsg[d]), xv = gv_wide<DT>(f.rx[d]);
                if (d + D < left) {
                    f.load(d);
                }
                f.y = sg * f.y + xv;
                gv_stp<DT>(f.ph, f.y + th, f.L.on);
                f.ph = gv_adv(f.ph, f.es);
            }
        }
    }
}

// probe_from_f32 rounds n f32 values to the module's element type.
extern "C" __global__ void probe_from_f32(const float* in, void* out, i64 n) {
    const i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        st<SCAN_DT>(out, i, in[i]);
    }
}

// probe_stage_bytes writes the shared memory a warp of each probe kernel
// takes, in the order above.
extern "C" __global__ void probe_stage_bytes(int* out) {
    out[0] = GvStage<SCAN_DT, SCAN_K, 0, false, 2>::WARP_BYTES;
    out[1] = GvStage<SCAN_DT, SCAN_K, 0, false, 3>::WARP_BYTES;
    out[2] = GvStage<SCAN_DT, SCAN_K, 0, true, 2>::WARP_BYTES;
    out[3] = GvStage<SCAN_DT, SCAN_K, 0, true, 3>::WARP_BYTES;
    out[4] = GvStage<SCAN_DT, SCAN_K, 1, false, 2>::WARP_BYTES;
    out[5] = GvStage<SCAN_DT, SCAN_K, 1, false, 3>::WARP_BYTES;
    out[6] = GvStage<SCAN_DT, SCAN_K, 2, true, 2>::WARP_BYTES;
}
