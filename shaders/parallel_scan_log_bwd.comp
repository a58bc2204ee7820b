#version 450
#extension GL_GOOGLE_include_directive : require
// parallel_scan_log backward. With a_t = exp(log_coeffs_t):
//   G_t = dh_t + a_{t+1} G_{t+1}
//   dlog_values_{t+1} = G_t exp(log_values_{t+1})
//   dlog_coeffs_t     = G_t exp(log_coeffs_t + log h_{t-1}), log h_{-1} = log_values_0
//   dlog_values_0     = a_0 G_0 exp(log_values_0)
// u_t = a_{t+1} G_{t+1} is the carry into step t from the right.
#include "common.glsl"
#include "chunks.glsl"

IN_BUFFER(0, lc_)
IN_BUFFER(1, lv_)
IN_BUFFER(2, h_)
IN_BUFFER(3, dh_)
OUT_BUFFER(4, dlc_)
OUT_BUFFER(5, dlv_)

bool agg_ok(float p, float q) {
    return !isnan(p) && !isinf(p) && !isnan(q) && !isinf(q);
}

void main() {
    Lane l = lane_of_invocation();
    uint base = l.b * pc.T * pc.N + l.d;
    uint vbase = l.b * (pc.T + 1u) * pc.N + l.d;
    if (CHUNKS > 1u) {
        float p = 1.0, q = 0.0;
        if (l.live) {
            for (uint t = l.t1; t > l.t0; t--) {
                uint i = base + (t - 1u) * pc.N;
                float at = exp(LD(lc_, pc.off[0] + i));
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
    float lv0 = LD(lv_, pc.off[1] + vbase);
    for (uint t = l.t1; t > l.t0; t--) {
        uint s = t - 1u;
        uint i = base + s * pc.N;
        float g = LD(dh_, pc.off[3] + i) + u;
        float c = LD(lc_, pc.off[0] + i);
        float lhp = (s > 0u) ? log(LD(h_, pc.off[2] + i - pc.N)) : lv0;
        uint vi = vbase + (s + 1u) * pc.N;
        ST(dlv_, pc.off[5] + vi, g * exp(LD(lv_, pc.off[1] + vi)));
        ST(dlc_, pc.off[4] + i, g * exp(c + lhp));
        u = exp(c) * g;
    }
    if (l.j == 0u) {
        ST(dlv_, pc.off[5] + vbase, u * exp(lv0));
    }
}
