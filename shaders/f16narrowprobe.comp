#version 450
#extension GL_GOOGLE_include_directive : require
// The probe of the device's f16 narrowing. Vulkan leaves the rounding of
// packHalf2x16 open, so before the f16 kernels may store with it (bit 1 of
// constant 10 in common.glsl) the host checks it on every one of the 2^32
// f32 bit patterns against the integer rounding to nearest even that the
// kernels use otherwise (f32_to_f16). A NaN may narrow to any f16 NaN
// (exponent all ones, significand nonzero): the kernels' results are
// compared only as "is a NaN", and arithmetic turns a NaN into the
// device's own NaN anyway. Everything else must match bit for bit, signed
// zeros, subnormal results and overflow to Inf included.
//
// Pattern j of a dispatch (0 <= j < count) is base + j*stride, modulo
// 2^32: stride 1 sweeps a contiguous range, an odd stride samples the
// whole space evenly. Invocation i narrows patterns i*run .. i*run+run-1
// in pairs, with packHalf2x16 on a vec2 as NARROW2 does (the low half
// from the first pattern). An invocation that saw a mismatch adds its
// count to result[2*slot] with one atomic and lowers result[2*slot+1] to
// the smallest mismatching pattern. The host clears the count and sets
// the minimum to 0xffffffff first, and splits the 2^32 patterns into
// dispatches of 2^28, each with its own slot, so that neither a count nor
// a pattern index overflows and no dispatch runs long on a slow GPU.
#include "f16.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;
// Constant 1: nonzero to compare with rounding toward zero instead. For
// tests only: a reference that a device rounding to nearest even misses on
// a known set of patterns, which shows that the probe can fail.
layout(constant_id = 1) const uint TOWARD_ZERO = 0;

layout(push_constant) uniform PushConstants {
    uint base;   // the first pattern
    uint count;  // patterns in this dispatch (even)
    uint stride; // distance between patterns (mod 2^32)
    uint run;    // patterns per invocation (even)
    uint slot;   // this dispatch's pair of result words
} pc;

layout(std430, set = 0, binding = 0) buffer Result { uint result[]; };

// The rounding the probe expects of f, not a NaN.
uint reference(float f) {
    uint h = f32_to_f16(f);
    if (TOWARD_ZERO != 0u) {
        // Where rounding to nearest went away from zero, the f16 value one
        // step toward zero is the truncation (from Inf back to 65504 too).
        uint a = floatBitsToUint(f) & 0x7fffffffu;
        if (floatBitsToUint(f16_to_f32(h & 0x7fffu)) > a) {
            h -= 1u;
        }
    }
    return h;
}

bool agrees(uint got, float f) {
    if ((floatBitsToUint(f) & 0x7fffffffu) > 0x7f800000u) {
        return (got & 0x7c00u) == 0x7c00u && (got & 0x3ffu) != 0u;
    }
    return got == reference(f);
}

void main() {
    uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    uint j0 = (group * WG + gl_LocalInvocationID.x) * pc.run;
    if (j0 >= pc.count) {
        return;
    }
    uint end = min(j0 + pc.run, pc.count);
    uint bad = 0u;
    uint first = 0xffffffffu;
    for (uint j = j0; j < end; j += 2u) {
        uint p0 = pc.base + j * pc.stride;
        uint p1 = p0 + pc.stride;
        vec2 v = vec2(uintBitsToFloat(p0), uintBitsToFloat(p1));
        uint w = packHalf2x16(v);
        if (!agrees(w & 0xffffu, v.x)) {
            bad++;
            first = min(first, p0);
        }
        if (!agrees(w >> 16, v.y)) {
            bad++;
            first = min(first, p1);
        }
    }
    if (bad != 0u) {
        atomicAdd(result[2u * pc.slot], bad);
        atomicMin(result[2u * pc.slot + 1u], first);
    }
}
