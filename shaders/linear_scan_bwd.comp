#version 450
#extension GL_GOOGLE_include_directive : require
// linear_scan backward. One reverse scan:
//   G_t = dh_t + a_{t+1} G_{t+1},  db_t = G_t,  da_t = G_t h_{t-1},
//   dh0 = a_0 G_0   (h_{-1} = h0 or 0).
// u_t = a_{t+1} G_{t+1} is the carry flowing into step t from the right.
#include "common.glsl"
#include "chunks.glsl"

IN_BUFFER(0, a_)
IN_BUFFER(1, h0_)
IN_BUFFER(2, h_)
IN_BUFFER(3, dh_)
OUT_BUFFER(4, da_)
OUT_BUFFER(5, db_)
OUT_BUFFER(6, dh0_)

bool agg_ok(float p, float q) {
    return !isnan(p) && !isinf(p) && !isnan(q) && !isinf(q);
}

void main() {
    Lane l = lane_of_invocation();
    uint base = l.b * pc.T * pc.N + l.d;
    if (CHUNKS > 1u) {
        // Pass 1: the chunk's map u_out = p*u_in + q, walking right to left.
        float p = 1.0, q = 0.0;
        if (l.live) {
            for (uint t = l.t1; t > l.t0; t--) {
                uint i = base + (t - 1u) * pc.N;
                float at = LD(a_, pc.off[0] + i);
                q = at * (LD(dh_, pc.off[3] + i) + q);
                p *= at;
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
    float u = 0.0;
    if (CHUNKS > 1u && !seq) {
        for (uint k = CHUNKS - 1u; k > l.j; k--) {
            u = sh_p[k * TILE + l.c] * u + sh_q[k * TILE + l.c];
        }
    }
    for (uint t = l.t1; t > l.t0; t--) {
        uint s = t - 1u;
        uint i = base + s * pc.N;
        float g = LD(dh_, pc.off[3] + i) + u;
        float hp = 0.0;
        if (s > 0u) {
            hp = LD(h_, pc.off[2] + i - pc.N);
        } else if (HAS_INIT) {
            hp = LD(h0_, pc.off[1] + l.b * pc.N + l.d);
        }
        ST(db_, pc.off[5] + i, g);
        ST(da_, pc.off[4] + i, g * hp);
        u = LD(a_, pc.off[0] + i) * g;
    }
    if (l.j == 0u && HAS_INIT) {
        ST(dh0_, pc.off[6] + l.b * pc.N + l.d, u);
    }
}
