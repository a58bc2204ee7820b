#version 450
// A device copy: dst = src, 16 bytes at a time. It is the bandwidth ceiling
// the scan kernels are compared with (a compute-shader copy, not the DMA
// engines behind vkCmdCopyBuffer). Each invocation copies UNROLL uvec4
// words WG apart inside its workgroup's block of WG*UNROLL words: it issues
// all its loads before its stores, and neighbouring invocations touch
// neighbouring words.
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;

const uint UNROLL = 4u;

layout(push_constant) uniform PushConstants {
    uint n; // uvec4 words to copy
} pc;

layout(std430, set = 0, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Dst { uvec4 dst[]; };

void main() {
    uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    uint i0 = group * (WG * UNROLL) + gl_LocalInvocationID.x;
    uvec4 w[UNROLL];
    for (uint u = 0u; u < UNROLL; u++) {
        uint i = i0 + u * WG;
        if (i < pc.n) {
            w[u] = src[i];
        }
    }
    for (uint u = 0u; u < UNROLL; u++) {
        uint i = i0 + u * WG;
        if (i < pc.n) {
            dst[i] = w[u];
        }
    }
}
