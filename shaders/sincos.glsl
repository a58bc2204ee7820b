// Sine and cosine of the Givens angles. GLSL's sin and cos need be
// accurate only within [-pi, pi], and on NVIDIA GPUs they are the special
// function unit's, whose argument is scaled to turns in f32: beyond one
// turn that loses about |a| 2^-24 of the angle. So the angle is first
// reduced by its nearest multiple of 2 pi.
//
// Up to HUGE_ANGLE, Cody and Waite's reduction without fused
// multiply-adds (Vulkan does not promise that fma() fuses, and Mesa's
// lavapipe does not): 2 pi = C1 + C2 + C3 with C1 and C2 of at most 8
// significant bits, so that q C1 and q C2 are exact for |q| < 2^16, and
// a - q C1 is exact (its operands are within a factor of two). r is then
// a - 2 pi q to within about 2^-23, below the unit's own error of
// 2^-21.4 (an f16 angle is at most 65504). `precise` keeps the order of
// the operations. Inf and NaN give NaN, as sin and cos do.
//
// From HUGE_ANGLE on, Payne and Hanek's reduction (reduce_huge): |a| =
// m 2^e with m an integer of 24 bits, and the fraction of a / (2 pi) is
// that of m times the 96 bits of 1/(2 pi) that start at bit e + 1 (the
// bits before give whole turns), an exact product of integers of which
// the 64 bits below the point are kept.
//
// Which of these a pipeline has is the host's choice, by what Upload
// found in theta (vk/tensor.go): ANGLES. Payne and Hanek's reduction is
// a branch at each angle that costs the f32 and bf16 kernels up to 2.1x
// on an H200 where no angle takes it, so only a theta with a finite
// angle of HUGE_ANGLE or more (or one an operation wrote, whose values
// the host does not know) gets it; and a theta whose every angle lies
// within pi rounded to f32, for which q is 0 and the reduction gives the
// angle itself, gets none.
const uint ANGLES_REDUCE = 0u;  // Cody and Waite's: every |a| < HUGE_ANGLE
const uint ANGLES_TURN = 1u;    // none: every |a| <= pi rounded to f32
const uint ANGLES_ANY = 2u;     // both, as |a| needs: any angle
layout(constant_id = 12) const uint ANGLES = ANGLES_REDUCE;

// HUGE_ANGLE is where the exact reduction starts: 2^18, within the 2^16
// turns (about 411774) up to which Cody and Waite's is exact.
const float HUGE_ANGLE = 262144.0;

// INV2PI is 1/(2 pi) as a binary fraction, a zero word (bits -31 to 0)
// then its first 224 bits, 32 a word, most significant first
// (TestInvTwoPi recomputes them).
const uint INV2PI[8] = uint[8](0x00000000u, 0x28be60dbu, 0x9391054au, 0x7f09d5f4u, 0x7d4d3770u, 0x36d8a566u,
                               0x4f10e410u, 0x7f9458eau);

// inv2pi_bits is the 32 bits of INV2PI from bit b (bit 0: the first
// word's most significant), 0 <= b <= 192.
uint inv2pi_bits(int b) {
    int w = b >> 5, s = b & 31;
    return s == 0 ? INV2PI[w] : (INV2PI[w] << s) | (INV2PI[w + 1] >> (32 - s));
}

// reduce_huge is a - 2 pi n for the integer n nearest a / (2 pi), in
// [-pi, pi], for finite |a| >= HUGE_ANGLE.
float reduce_huge(float a) {
    uint b = floatBitsToUint(a);
    uint m = (b & 0x7fffffu) | 0x800000u;
    int e = int((b >> 23) & 0xffu) - 150;  // |a| = m 2^e, -5 <= e <= 104
    // The window of 1/(2 pi) from bit e + 1: INV2PI bit e + 32.
    uint v2 = inv2pi_bits(e + 32), v1 = inv2pi_bits(e + 64), v0 = inv2pi_bits(e + 96);
    uint h0, l0, h1, l1, h2, l2, c;
    umulExtended(m, v0, h0, l0);
    umulExtended(m, v1, h1, l1);
    umulExtended(m, v2, h2, l2);
    // The product's bits 2^-1 to 2^-64 (those above are whole turns).
    uint w1 = uaddCarry(l1, h0, c);
    uint w2 = l2 + h1 + c;
    // As a signed fraction, the remainder to the nearest turn, in [-1/2,
    // 1/2): w2 (as int, its bit pattern kept) 2^-32 + w1 2^-64.
    float f = float(int(w2)) * 2.3283064365386963e-10 + float(w1) * 5.4210108624275222e-20;
    float r = f * 6.2831853071795865;
    return (b >> 31) != 0u ? -r : r;
}

// cody_waite is a - 2 pi q for q the integer nearest a / (2 pi), exact
// for |a| below HUGE_ANGLE.
float cody_waite(float a) {
    precise float q = roundEven(a * 0.159154943);
    precise float r = ((a - q * 6.28125) - q * 0.0019378662109375) - q * -2.5590313725842861e-06;
    return r;
}

// sincos_reduced is (sin a, cos a) for the angles ANGLES admits, and NaN
// for Inf and NaN.
vec2 sincos_reduced(float a) {
    if (ANGLES == ANGLES_TURN) {
        return vec2(sin(a), cos(a));
    }
    float r = cody_waite(a);
#if !defined(DT_F16)
    if (ANGLES == ANGLES_ANY && abs(a) >= HUGE_ANGLE && !isinf(a)) {
        r = reduce_huge(a);
    }
#endif
    return vec2(sin(r), cos(r));
}
