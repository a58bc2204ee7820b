#version 450
#extension GL_GOOGLE_include_directive : require
// linear_scan forward: h_t = a_t * h_{t-1} + b_t elementwise, h_{-1} = h0 or 0.
#include "common.glsl"
#include "chunks.glsl"

IN_BUFFER(0, a_)
IN_BUFFER(1, b_)
IN_BUFFER(2, h0_)
OUT_BUFFER(3, h_)

bool agg_ok(float p, float q) {
    return !isnan(p) && !isinf(p) && !isnan(q) && !isinf(q);
}

void main() {
    Lane l = lane_of_invocation();
    uint base = l.b * pc.T * pc.N + l.d; // element (b, 0, d)
    if (CHUNKS > 1u) {
        // Pass 1: the chunk's map h -> p*h + q.
        float p = 1.0, q = 0.0;
        if (l.live) {
            for (uint t = l.t0; t < l.t1; t++) {
                uint i = base + t * pc.N;
                float at = LD(a_, pc.off[0] + i);
                p *= at;
                q = at * q + LD(b_, pc.off[1] + i);
            }
        }
        sh_p[gl_LocalInvocationID.x] = p;
        sh_q[gl_LocalInvocationID.x] = q;
        barrier();
    }
    bool seq = sequential_fallback(l);
    if (!l.live) {
        return;
    }
    float h = 0.0;
    if (HAS_INIT) {
        h = LD(h0_, pc.off[2] + l.b * pc.N + l.d);
    }
    if (CHUNKS > 1u && !seq) {
        for (uint k = 0u; k < l.j; k++) {
            h = sh_p[k * TILE + l.c] * h + sh_q[k * TILE + l.c];
        }
    }
    for (uint t = l.t0; t < l.t1; t++) {
        uint i = base + t * pc.N;
        h = LD(a_, pc.off[0] + i) * h + LD(b_, pc.off[1] + i);
        ST(h_, pc.off[3] + i, h);
    }
}
