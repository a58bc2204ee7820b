// Shared helpers of the scan kernels: element loads and stores for f32, f16
// and bf16, and the numeric helpers the log-space scan needs.
//
// 16-bit elements are read and written as unsigned short, so the kernels
// depend on no half-precision header. Widening is exact; narrowing rounds
// to nearest, ties to even; NaN stays a (quiet) NaN with its sign; values
// beyond the f16 range become +-Inf. On the GPU the conversions are the
// hardware's (one cvt each, PTX ISA 7.0 / sm_80 for bf16) with the NaN case
// of the narrowings patched by a select so that a NaN keeps its sign and
// payload bits as below; the host build (the emulation test) runs the
// bit-exact software versions, which define the results.
#pragma once

// Element types, the template parameter DT of every kernel.
#define DT_F32 0
#define DT_F16 1
#define DT_BF16 2

typedef long long i64;

// DYNAMIC_SHARED declares the block's dynamic shared memory as a float
// array. It is a macro so that the kernels also compile as host C++ for
// the emulation test (kernels/emu), which supplies its own definition.
#ifndef DYNAMIC_SHARED
#define DYNAMIC_SHARED(name) extern __shared__ float name[]
#endif

// f16_nan and bf16_nan are the 16-bit NaNs the narrowings give for a NaN
// f (sign, quiet bit set, the top of the payload kept).
__device__ __forceinline__ unsigned short f16_nan(float f) {
    unsigned int b = __float_as_uint(f);
    return (unsigned short)(((b >> 16) & 0x8000u) | 0x7e00u | ((b & 0x7fffffu) >> 13));
}

__device__ __forceinline__ unsigned short bf16_nan(float f) {
    return (unsigned short)((__float_as_uint(f) >> 16) | 0x0040u);
}

__device__ __forceinline__ float f16_to_f32_sw(unsigned short h) {
    unsigned int sign = (unsigned int)(h & 0x8000u) << 16;
    unsigned int exp = (h >> 10) & 0x1fu;
    unsigned int man = h & 0x3ffu;
    if (exp == 0x1fu) {
        return __uint_as_float(sign | 0x7f800000u | (man << 13));
    }
    if (exp == 0) {
        // Zero or subnormal: man * 2^-24, exact in f32.
        float f = (float)man * 5.9604644775390625e-8f;
        return sign ? -f : f;
    }
    return __uint_as_float(sign | ((exp + 112u) << 23) | (man << 13));
}

__device__ __forceinline__ unsigned short f32_to_f16_sw(float f) {
    unsigned int b = __float_as_uint(f);
    unsigned int sign = (b >> 16) & 0x8000u;
    int exp = (int)((b >> 23) & 0xffu);
    unsigned int man = b & 0x7fffffu;
    if (exp == 0xff) {  // Inf or NaN
        if (man != 0) {
            return f16_nan(f);
        }
        return (unsigned short)(sign | 0x7c00u);
    }
    int e = exp - 127 + 15;
    if (e >= 0x1f) {
        return (unsigned short)(sign | 0x7c00u);  // overflow to Inf
    }
    if (e <= 0) {
        // Subnormal half or zero.
        if (e < -10) {
            return (unsigned short)sign;
        }
        unsigned int m = man | 0x800000u;
        unsigned int shift = (unsigned int)(14 - e);
        unsigned int half = m >> shift;
        unsigned int rem = m & ((1u << shift) - 1u);
        unsigned int mid = 1u << (shift - 1u);
        if (rem > mid || (rem == mid && (half & 1u))) {
            half++;
        }
        return (unsigned short)(sign | half);
    }
    unsigned int half = ((unsigned int)e << 10) | (man >> 13);
    unsigned int rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) {
        half++;  // may carry into the exponent, up to Inf: correct
    }
    return (unsigned short)(sign | half);
}

__device__ __forceinline__ float bf16_to_f32(unsigned short h) {
    return __uint_as_float((unsigned int)h << 16);
}

__device__ __forceinline__ unsigned short f32_to_bf16_sw(float f) {
    unsigned int b = __float_as_uint(f);
    if ((b & 0x7fffffffu) > 0x7f800000u) {  // NaN: keep it NaN after truncation
        return bf16_nan(f);
    }
    b += 0x7fffu + ((b >> 16) & 1u);
    return (unsigned short)(b >> 16);
}

#ifdef __CUDA_ARCH__
// The hardware conversions. cvt.f32.f16 is exact (a NaN widens to a NaN,
// and every use of a widened value is arithmetic, which yields the GPU's
// canonical NaN either way); cvt.rn.f16.f32 and cvt.rn.bf16.f32 round to
// nearest even, overflow to +-Inf and keep subnormals, but give the
// canonical NaN 0x7fff for any NaN, hence the select.
__device__ __forceinline__ float f16_to_f32(unsigned short h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

__device__ __forceinline__ unsigned short f32_to_f16(float f) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return f != f ? f16_nan(f) : h;
}

__device__ __forceinline__ unsigned short f32_to_bf16(float f) {
    unsigned short h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return f != f ? bf16_nan(f) : h;
}
#else
__device__ __forceinline__ float f16_to_f32(unsigned short h) { return f16_to_f32_sw(h); }
__device__ __forceinline__ unsigned short f32_to_f16(float f) { return f32_to_f16_sw(f); }
__device__ __forceinline__ unsigned short f32_to_bf16(float f) { return f32_to_bf16_sw(f); }
#endif

// widen turns the 16-bit pattern h of DT (f16 or bf16) into its f32
// value, exactly; narrow rounds v to the pattern of DT as st does (in the
// low half of the result); narrow_sw is the software rounding, for
// constants (it folds at compile time).
template <int DT>
__device__ __forceinline__ float widen(unsigned short h) {
    return DT == DT_F16 ? f16_to_f32(h) : bf16_to_f32(h);
}

template <int DT>
__device__ __forceinline__ unsigned int narrow(float v) {
    return DT == DT_F16 ? f32_to_f16(v) : f32_to_bf16(v);
}

template <int DT>
__device__ __forceinline__ unsigned short narrow_sw(float v) {
    return DT == DT_F16 ? f32_to_f16_sw(v) : f32_to_bf16_sw(v);
}

// ld reads element i of p (of element type DT) as f32.
template <int DT>
__device__ __forceinline__ float ld(const void* __restrict__ p, i64 i) {
    if (DT == DT_F32) {
        return __ldg((const float*)p + i);
    } else if (DT == DT_F16) {
        return f16_to_f32(__ldg((const unsigned short*)p + i));
    } else {
        return bf16_to_f32(__ldg((const unsigned short*)p + i));
    }
}

// st stores v at element i of p (of element type DT), rounded to DT.
template <int DT>
__device__ __forceinline__ void st(void* __restrict__ p, i64 i, float v) {
    if (DT == DT_F32) {
        ((float*)p)[i] = v;
    } else if (DT == DT_F16) {
        ((unsigned short*)p)[i] = f32_to_f16(v);
    } else {
        ((unsigned short*)p)[i] = f32_to_bf16(v);
    }
}

// Words<DT, M> holds M consecutive elements as they are stored: f32 as
// floats, 16-bit types two to a 32-bit word (element e in bits
// 16 (e & 1) .. 16 (e & 1) + 15 of word e / 2). Kernels that keep the
// loads of coming steps in registers hold them as Words and widen each
// element where a step uses it (words_at): a widening right after its
// load makes the thread wait there for the load, so the loads issued
// after it are no longer in flight together with it. In 16-bit types a
// Words also takes half the registers of the widened floats.
template <int DT, int M>
struct Words {
    static constexpr int n = (M + 1) / 2;
    unsigned int w[n];
};
template <int M>
struct Words<DT_F32, M> {  // f32: the floats themselves
    static constexpr int n = M;
    float w[M];
};

// put4 spreads a loaded 4-vector over w[0..3].
template <class E, class V>
__device__ __forceinline__ void put4(E* w, const V& v) {
    w[0] = v.x;
    w[1] = v.y;
    w[2] = v.z;
    w[3] = v.w;
}

// words_ld reads the M elements at element offset off of p into r with
// the widest loads that the size allows: off must be a multiple of M
// (and the allocation 16-byte aligned), so that a run of 16, 8 or 4
// bytes starts on a boundary of its size.
template <int DT, int M>
__device__ __forceinline__ void words_ld(const void* __restrict__ p, i64 off, Words<DT, M>& r) {
    if constexpr (DT == DT_F32) {
        const float* q = (const float*)p + off;
        if constexpr (M % 4 == 0) {
#pragma unroll
            for (int e = 0; e < M / 4; e++) {
                put4(r.w + 4 * e, __ldg((const float4*)q + e));
            }
        } else {
#pragma unroll
            for (int e = 0; e < M; e++) {
                r.w[e] = __ldg(q + e);
            }
        }
    } else if constexpr (M % 2 == 0) {
        // Whole words: runs of 16, 8 or 4 bytes.
        const unsigned int* q = (const unsigned int*)((const unsigned short*)p + off);
        if constexpr (M % 8 == 0) {
#pragma unroll
            for (int e = 0; e < M / 8; e++) {
                put4(r.w + 4 * e, __ldg((const uint4*)q + e));
            }
        } else if constexpr (M % 4 == 0) {
#pragma unroll
            for (int e = 0; e < M / 4; e++) {
                const uint2 v = __ldg((const uint2*)q + e);
                r.w[2 * e] = v.x;
                r.w[2 * e + 1] = v.y;
            }
        } else {
#pragma unroll
            for (int e = 0; e < M / 2; e++) {
                r.w[e] = __ldg(q + e);
            }
        }
    } else {  // 16-bit, M odd: element by element
        const unsigned short* q = (const unsigned short*)p + off;
#pragma unroll
        for (int e = 0; e < Words<DT, M>::n; e++) {
            r.w[e] = 0;
        }
#pragma unroll
        for (int e = 0; e < M; e++) {
            r.w[e / 2] |= (unsigned int)__ldg(q + e) << (16 * (e & 1));
        }
    }
}

// words_at widens element e of r to f32 (exactly).
template <int DT, int M>
__device__ __forceinline__ float words_at(const Words<DT, M>& r, int e) {
    if constexpr (DT == DT_F32) {
        return r.w[e];
    } else {
        return widen<DT>((unsigned short)(r.w[e / 2] >> (16 * (e & 1))));
    }
}

// Asynchronous copies into shared memory (cp.async, sm_80). A thread that
// keeps the loads of coming steps in registers cannot keep them in flight
// one step apart: the compiler tracks all of them with one of the warp's
// few dependency counters, so the first use of the oldest waits for the
// youngest too. Copied to shared memory instead, each step's loads are a
// group of their own (cp_commit), and cp_wait<N> waits only until at most
// N of the thread's most recent groups are pending: a ring of U steps
// then always has U - 1 steps of loads in flight. Each thread reads back
// only what it copied itself, so no barrier is needed between the copy
// and the use; a slot is refilled only after the values read from it
// have been used (program order on one thread). The host build copies at
// once and waits for nothing.
//
// cp_row copies the M elements of p at element offset off (a multiple of
// M; M elements are 4, 8, 16 or more bytes) to dst, 16-byte aligned where
// they are 16 bytes or more, else aligned to their size.
template <int DT, int M>
__device__ __forceinline__ void cp_row(void* dst, const void* __restrict__ p, i64 off) {
    constexpr int BYTES = M * (DT == DT_F32 ? 4 : 2);
    constexpr int CH = BYTES < 16 ? BYTES : 16;
    static_assert(CH == 4 || CH == 8 || CH == 16, "cp.async copies 4, 8 or 16 bytes");
    const char* src = (const char*)p + off * (DT == DT_F32 ? 4 : 2);
#pragma unroll
    for (int e = 0; e < BYTES / CH; e++) {
#ifdef __CUDA_ARCH__
        const unsigned int d = (unsigned int)__cvta_generic_to_shared((char*)dst + e * CH);
        if constexpr (CH == 16) {
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src + e * CH) : "memory");
        } else {
            asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(d), "l"(src + e * CH), "n"(CH)
                         : "memory");
        }
#else
        memcpy((char*)dst + e * CH, src + e * CH, CH);
#endif
    }
}

// cp_commit closes the thread's current group of copies (possibly empty).
__device__ __forceinline__ void cp_commit() {
#ifdef __CUDA_ARCH__
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// cp_wait returns once at most N of the thread's groups are pending.
template <int N>
__device__ __forceinline__ void cp_wait() {
#ifdef __CUDA_ARCH__
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

// words_lds reads M elements as Words from shared memory at src (aligned
// as cp_row's dst), with the widest loads the size allows.
template <int DT, int M>
__device__ __forceinline__ void words_lds(const void* src, Words<DT, M>& r) {
    constexpr int NW = Words<DT, M>::n;  // 32-bit words
    const unsigned int* q = (const unsigned int*)src;
    unsigned int w[NW];
    if constexpr (NW % 4 == 0) {
#pragma unroll
        for (int e = 0; e < NW / 4; e++) {
            const uint4 v = ((const uint4*)q)[e];
            w[4 * e] = v.x;
            w[4 * e + 1] = v.y;
            w[4 * e + 2] = v.z;
            w[4 * e + 3] = v.w;
        }
    } else if constexpr (NW % 2 == 0) {
#pragma unroll
        for (int e = 0; e < NW / 2; e++) {
            const uint2 v = ((const uint2*)q)[e];
            w[2 * e] = v.x;
            w[2 * e + 1] = v.y;
        }
    } else {
#pragma unroll
        for (int e = 0; e < NW; e++) {
            w[e] = q[e];
        }
    }
#pragma unroll
    for (int e = 0; e < NW; e++) {
        if constexpr (DT == DT_F32) {
            r.w[e] = __uint_as_float(w[e]);
        } else {
            r.w[e] = w[e];
        }
    }
}

// narrow_num is narrow for a v known not to be NaN: on the GPU without
// the NaN patch of the narrowings.
template <int DT>
__device__ __forceinline__ unsigned int narrow_num(float v) {
#ifdef __CUDA_ARCH__
    unsigned short h;
    if (DT == DT_F16) {
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
    } else {
        asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(v));
    }
    return h;
#else
    return narrow<DT>(v);
#endif
}

// st_num is st for a v known not to be NaN (narrow_num).
template <int DT>
__device__ __forceinline__ void st_num(void* __restrict__ p, i64 i, float v) {
    if (DT == DT_F32) {
        st<DT>(p, i, v);
    } else {
        ((unsigned short*)p)[i] = (unsigned short)narrow_num<DT>(v);
    }
}

// Fast transcendentals for the log-space scan. On the GPU they are the
// special function unit's approximations (ex2.approx / lg2.approx, about
// 2 ulp; ex2_fast and lg2_fast flush subnormal arguments and results to
// zero, lg2_full keeps them), which is what makes a logaddexp cost a few
// instructions instead of an accurate expf and log1pf; max_nan and min_nan
// are max.NaN / min.NaN (sm_80), which return NaN when either argument is
// NaN. The host build (the emulation test) uses the C library's exp2f and
// log2f, which are accurate: it checks the kernels' structure and special
// values, not the last bits.
#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f

#ifdef __CUDA_ARCH__
__device__ __forceinline__ float ex2_fast(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ float lg2_fast(float x) {
    float y;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ float lg2_full(float x) {
    float y;
    asm("lg2.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ float max_nan(float x, float y) {
    float z;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(z) : "f"(x), "f"(y));
    return z;
}

__device__ __forceinline__ float min_nan(float x, float y) {
    float z;
    asm("min.NaN.f32 %0, %1, %2;" : "=f"(z) : "f"(x), "f"(y));
    return z;
}
#else
__device__ __forceinline__ float ex2_fast(float x) { return exp2f(x); }
__device__ __forceinline__ float lg2_fast(float x) { return log2f(x); }
__device__ __forceinline__ float lg2_full(float x) { return log2f(x); }
__device__ __forceinline__ float max_nan(float x, float y) { return x != x || y != y ? x + y : fmaxf(x, y); }
__device__ __forceinline__ float min_nan(float x, float y) { return x != x || y != y ? x + y : fminf(x, y); }
#endif

// exp_fast is exp(x) through ex2_fast.
__device__ __forceinline__ float exp_fast(float x) { return ex2_fast(x * LOG2E); }

// logaddexp returns log(exp(x) + exp(y)) = m + log(1 + exp(n - m)) with
// m = max(x, y), n = min(x, y), without overflow: -Inf when both are -Inf
// (-Inf is the identity), +Inf when either is +Inf, NaN when either is
// NaN (through max_nan, min_nan). It works in natural log, like its
// callers' state, and goes through base 2 only inside: exp(n - m) is
// ex2((n - m) log2 e) and the log ln 2 lg2(...).
__device__ __forceinline__ float logaddexp(float x, float y) {
    const float m = max_nan(x, y);
    const float n = min_nan(x, y);
    const float r = fmaf(LN2, lg2_fast(1.0f + ex2_fast((n - m) * LOG2E)), m);
    return fabsf(m) == INFINITY ? m : r;
}
