#version 450
#extension GL_GOOGLE_include_directive : require
// parallel_scan_log forward, in log space:
//   log h_t = logaddexp(log_coeffs_t + log h_{t-1}, log_values_{t+1}),
//   log h_{-1} = log_values_0;  h_t = exp(log h_t).
// A chunk's map is lh -> logaddexp(s + lh, q) with s the sum of its
// log_coeffs and q its result from lh = -inf.
#include "common.glsl"
#include "chunks.glsl"
#include "logspace.glsl"

IN_BUFFER(0, lc_)
IN_BUFFER(1, lv_)
OUT_BUFFER(2, h_)

// -inf is an ordinary value in log space (a zero); NaN and +inf are not.
bool agg_ok(float s, float q) {
    return !isnan(s) && !isnan(q) && !(isinf(s) && s > 0.0) && !(isinf(q) && q > 0.0);
}

void main() {
    Lane l = lane_of_invocation();
    uint base = l.b * pc.T * pc.N + l.d;          // (b, 0, d) of log_coeffs and h
    uint vbase = l.b * (pc.T + 1u) * pc.N + l.d;  // (b, 0, d) of log_values
    if (CHUNKS > 1u) {
        float s = 0.0, q = NEG_INF;
        if (l.live) {
            for (uint t = l.t0; t < l.t1; t++) {
                float c = LD(lc_, pc.off[0] + base + t * pc.N);
                s += c;
                q = logaddexp(c + q, LD(lv_, pc.off[1] + vbase + (t + 1u) * pc.N));
            }
        }
        sh_p[gl_LocalInvocationID.x] = s;
        sh_q[gl_LocalInvocationID.x] = q;
        barrier();
    }
    bool seq = sequential_fallback(l);
    if (!l.live) {
        return;
    }
    float lh = LD(lv_, pc.off[1] + vbase);
    if (CHUNKS > 1u && !seq) {
        for (uint k = 0u; k < l.j; k++) {
            lh = logaddexp(sh_p[k * TILE + l.c] + lh, sh_q[k * TILE + l.c]);
        }
    }
    for (uint t = l.t0; t < l.t1; t++) {
        uint i = base + t * pc.N;
        lh = logaddexp(LD(lc_, pc.off[0] + i) + lh, LD(lv_, pc.off[1] + vbase + (t + 1u) * pc.N));
        ST(h_, pc.off[2] + i, exp(lh));
    }
}
