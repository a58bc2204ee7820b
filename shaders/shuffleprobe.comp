#version 450
// The subgroup probe (see probeSubgroups in package vk). Each invocation
// writes its gl_SubgroupSize, gl_SubgroupID, gl_NumSubgroups and
// gl_SubgroupInvocationID, then what subgroupShuffle returns from the
// invocations i+1, i-1 and i^1 of its subgroup (modulo its size), where
// each invocation offers its own number gl_SubgroupID * gl_SubgroupSize +
// gl_SubgroupInvocationID, the numbering the subgroup Givens kernels use;
// then a marker. The host runs the subgroup kernels only where every
// record is what a device with the subgroups it reports writes.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;

layout(push_constant) uniform PushConstants {
    uint n; // invocations in the dispatch
} pc;

layout(std430, set = 0, binding = 0) writeonly buffer Dst { uint dst[]; };

void main() {
    uint g = gl_GlobalInvocationID.x;
    uint s = gl_SubgroupSize;
    uint i = gl_SubgroupInvocationID;
    uint self = gl_SubgroupID * s + i;
    uint up = subgroupShuffle(self, (i + 1u) % s);
    uint dn = subgroupShuffle(self, (i + s - 1u) % s);
    uint x1 = subgroupShuffle(self, (i ^ 1u) % s);
    if (g >= pc.n) {
        return;
    }
    uint o = 8u * g;
    dst[o + 0u] = s;
    dst[o + 1u] = gl_SubgroupID;
    dst[o + 2u] = gl_NumSubgroups;
    dst[o + 3u] = i;
    dst[o + 4u] = up;
    dst[o + 5u] = dn;
    dst[o + 6u] = x1;
    dst[o + 7u] = 0x5eedu;
}
