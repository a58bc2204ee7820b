#version 450
// The exactness probe of the device's f16 widening. Each invocation widens
// one word of two f16 values with unpackHalf2x16 and writes the two f32
// bit patterns. The host runs it once over all 65536 f16 values when it
// opens the device and compares every result with the exact widening
// (scans.F16ToFloat32): only where every one agrees (a NaN to any NaN) do
// the f16 kernels widen with unpackHalf2x16 alone (HW_F16 in common.glsl);
// elsewhere they take the exact software path for zeros, subnormals, Inf
// and NaN, because Vulkan lets an implementation flush 16-bit subnormals.
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;

layout(push_constant) uniform PushConstants {
    uint n; // words to widen
} pc;

layout(std430, set = 0, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Dst { uint dst[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) {
        vec2 v = unpackHalf2x16(src[i]);
        dst[2u * i] = floatBitsToUint(v.x);
        dst[2u * i + 1u] = floatBitsToUint(v.y);
    }
}
