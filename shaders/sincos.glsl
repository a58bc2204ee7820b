// Sine and cosine of the Givens angles. GLSL's sin and cos need be
// accurate only within [-pi, pi], and on NVIDIA GPUs they are the special
// function unit's, whose argument is scaled to turns in f32: beyond one
// turn that loses about |a| 2^-24 of the angle. So the angle is first
// reduced by its nearest multiple q of 2 pi, Cody and Waite's way without
// fused multiply-adds (Vulkan does not promise that fma() fuses, and
// Mesa's lavapipe does not): 2 pi = C1 + C2 + C3 with C1 and C2 of at most
// 8 significant bits, so that q C1 and q C2 are exact for |q| < 2^16, and
// a - q C1 is exact (its operands are within a factor of two). r is then a
// - 2 pi q to within about 2^-23, below the unit's own error of 2^-21.4,
// for |a| up to 2^16 turns (about 411000; an f16 angle is at most 65504);
// beyond, the reduction loses accuracy as sin and cos would. Inf and NaN
// give NaN, as they do. `precise` keeps the order of the operations.
vec2 sincos_reduced(float a) {
    precise float q = roundEven(a * 0.159154943);
    precise float r = ((a - q * 6.28125) - q * 0.0019378662109375) - q * -2.5590313725842861e-06;
    return vec2(sin(r), cos(r));
}
