#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// linear_scan forward: h_t = a_t * h_{t-1} + b_t elementwise, h_{-1} = h0 or 0.
// A chunk's map is h -> p*h + q (see chunks.glsl for the segments).
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
    float carry = 0.0;                   // h before the segment
    if (l.live && HAS_INIT) {
        carry = LD(h0_, pc.off[2] + l.b * pc.N + l.d);
    }
    uint nseg = segments();
    for (uint sg = 0u; sg < nseg; sg++) {
        uint t0 = (sg * CHUNKS + l.j) * L;
        float ra[L];
        float rb[L];
        [[unroll]] for (uint s = 0u; s < L; s++) {
            ra[s] = 1.0;
            rb[s] = 0.0;
            if (l.live && t0 + s < pc.T) {
                uint i = base + (t0 + s) * pc.N;
                ra[s] = LD(a_, pc.off[0] + i);
                rb[s] = LD(b_, pc.off[1] + i);
            }
        }
        float h = carry;
        bool seq = false;
        if (CHUNKS > 1u) {
            float p = 1.0, q = 0.0;
            [[unroll]] for (uint s = 0u; s < L; s++) {
                p *= ra[s];
                q = ra[s] * q + rb[s];
            }
            sh_p[gl_LocalInvocationID.x] = p;
            sh_q[gl_LocalInvocationID.x] = q;
            barrier();
            float x = carry;
            bool ok = true;
            for (uint k = 0u; k < CHUNKS; k++) {
                float pk = sh_p[k * TILE + l.c];
                float qk = sh_q[k * TILE + l.c];
                ok = ok && agg_ok(pk, qk);
                if (k == l.j) {
                    h = x;
                }
                x = pk * x + qk;
            }
            barrier();
            if (ok) {
                carry = x;
            } else {
                seq = true;
            }
        }
        if (seq) {
            // Sequential walk of the whole segment from its carry.
            uint s0 = sg * CHUNKS * L;
            uint s1 = min(s0 + CHUNKS * L, pc.T);
            float y = carry;
            for (uint t = s0; l.live && t < s1; t++) {
                uint i = base + t * pc.N;
                y = LD(a_, pc.off[0] + i) * y + LD(b_, pc.off[1] + i);
                if (t >= t0 && t < t0 + L) {
                    ST(h_, pc.off[3] + i, y);
                }
            }
            carry = y;
            continue;
        }
        [[unroll]] for (uint s = 0u; s < L; s++) {
            h = ra[s] * h + rb[s];
            if (l.live && t0 + s < pc.T) {
                ST(h_, pc.off[3] + base + (t0 + s) * pc.N, h);
            }
        }
        if (CHUNKS == 1u) {
            carry = h;
        }
    }
}
