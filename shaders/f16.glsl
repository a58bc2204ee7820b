// The exact f16 conversions, in integer arithmetic: the f16 kernels' path
// wherever the device's unpackHalf2x16 and packHalf2x16 are not known to be
// exact, and the reference the probe of packHalf2x16 compares with
// (f16narrowprobe.comp). Included by common.glsl; needs nothing from it.
#ifndef F16_GLSL
#define F16_GLSL

// The conversions are branch-free bit arithmetic (selects, no divergent
// branches), so a warp holding special values costs what any other does.

// Exact. Zero and subnormals go through an exact integer-to-float
// conversion (m * 2^-24); Inf and NaN keep their payload.
float f16_to_f32(uint h) {
    uint sign = (h & 0x8000u) << 16;
    uint em = h & 0x7fffu;
    uint bits = (em << 13) + (112u << 23);                // rebias a normal
    bits = (em >= 0x7c00u) ? bits + (112u << 23) : bits;  // Inf, NaN: exponent 255
    float f = uintBitsToFloat(bits);
    f = (em < 0x400u) ? float(em) * (1.0 / 16777216.0) : f; // zero, subnormal
    return uintBitsToFloat(floatBitsToUint(f) | sign);
}

// Round to nearest even; overflow goes to Inf, NaN stays a quiet NaN. (Not
// packHalf2x16: Vulkan leaves its rounding mode open, so the kernels use
// that instruction only where the host's probe found it to agree with this
// function on every f32 value; see f16narrowprobe.comp.) Both candidate
// results are computed with the same integer rounding: add half an ulp of
// the result less one, plus the kept lowest bit, and truncate.
uint f32_to_f16_any(float f) {
    uint b = floatBitsToUint(f);
    uint sign = (b >> 16) & 0x8000u;
    uint a = b & 0x7fffffffu;
    // A normal result: rebias and drop 13 bits. A carry out of the
    // significand bumps the exponent, up to Inf (65520 and above).
    uint n = (a - (112u << 23) + 0xfffu + ((a >> 13) & 1u)) >> 13;
    // A subnormal or zero result (|f| < 2^-14, exponent e <= 112): the
    // significand with its implicit bit, shifted right by 126 - e (at least
    // 14; 25 and more give 0, and f32 subnormals land there too).
    uint e = a >> 23;
    uint s = min(126u - min(e, 112u), 31u);
    uint m = (a & 0x7fffffu) | 0x800000u;
    uint sub = (m + ((1u << (s - 1u)) - 1u) + ((m >> s) & 1u)) >> s;
    uint h = (a < (113u << 23)) ? sub : n;
    h = (a >= 0x47800000u) ? 0x7c00u : h;                          // |f| >= 65536, Inf
    h = (a > 0x7f800000u) ? (0x7e00u | ((a >> 13) & 0x3ffu)) : h;  // NaN
    return sign | h;
}

// The rounding of an ordinary f32 (2^-14 <= |f| < 65536, its bits less
// the sign in a) to f16 bits less the sign: rebias, round 13 bits to
// nearest even (a carry may reach Inf); f32_to_f16_any's result there.
#define F16_ORDINARY(a) ((a) - (113u << 23) < 0x47800000u - (113u << 23))
#define F16_ROUND(a) (((a) - (112u << 23) + 0xfffu + (((a) >> 13) & 1u)) >> 13)

// f32_to_f16_any with the ordinary case first: about a third of the
// integer work, so the narrowing stays off the critical issue rate of a
// bandwidth-bound kernel. The other path is taken by zeros, subnormal
// results, overflow and NaN, uniformly unless a warp mixes them with
// ordinary values.
uint f32_to_f16(float f) {
    uint b = floatBitsToUint(f);
    uint a = b & 0x7fffffffu;
    if (F16_ORDINARY(a)) {
        return ((b >> 16) & 0x8000u) | F16_ROUND(a);
    }
    return f32_to_f16_any(f);
}

#endif
