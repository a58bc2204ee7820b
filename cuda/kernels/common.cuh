// Shared helpers of the scan kernels: element loads and stores for f32, f16
// and bf16, and the numeric helpers the log-space scan needs.
//
// 16-bit elements are read and written as unsigned short and converted by
// hand, so the kernels depend on no half-precision header or intrinsic.
// Widening is exact; narrowing rounds to nearest, ties to even; NaN stays a
// (quiet) NaN with its sign; values beyond the f16 range become +-Inf.
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

__device__ __forceinline__ float f16_to_f32(unsigned short h) {
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

__device__ __forceinline__ unsigned short f32_to_f16(float f) {
    unsigned int b = __float_as_uint(f);
    unsigned int sign = (b >> 16) & 0x8000u;
    int exp = (int)((b >> 23) & 0xffu);
    unsigned int man = b & 0x7fffffu;
    if (exp == 0xff) {  // Inf or NaN
        if (man != 0) {
            return (unsigned short)(sign | 0x7e00u | (man >> 13));
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

__device__ __forceinline__ unsigned short f32_to_bf16(float f) {
    unsigned int b = __float_as_uint(f);
    if ((b & 0x7fffffffu) > 0x7f800000u) {  // NaN: keep it NaN after truncation
        return (unsigned short)((b >> 16) | 0x0040u);
    }
    b += 0x7fffu + ((b >> 16) & 1u);
    return (unsigned short)(b >> 16);
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

// logaddexp returns log(exp(x) + exp(y)) without overflow: -Inf when both
// are -Inf, +Inf when either is +Inf, NaN when either is NaN.
__device__ __forceinline__ float logaddexp(float x, float y) {
    if (x != x || y != y) {
        return x + y;
    }
    float m = x > y ? x : y;
    if (m == -INFINITY || m == INFINITY) {
        return m;
    }
    float d = x > y ? y - x : x - y;  // <= 0
    return m + log1pf(expf(d));
}
