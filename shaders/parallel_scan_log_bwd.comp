#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// parallel_scan_log backward. With a_t = exp(log_coeffs_t):
//   G_t = dh_t + a_{t+1} G_{t+1}
//   dlog_values_{t+1} = G_t exp(log_values_{t+1})
//   dlog_coeffs_t     = G_t exp(log_coeffs_t + log h_{t-1}), log h_{-1} = log_values_0
//   dlog_values_0     = a_0 G_0 exp(log_values_0)
// u_t = a_{t+1} G_{t+1} is the carry into step t from the right; a chunk's
// map, walking right to left, is u -> p*u + q. Segments are walked from the
// last (see chunks.glsl); a step past T is (log_coeffs 0, dh 0): the
// identity.
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
    float lv0 = 0.0;
    if (l.live) {
        lv0 = LD(lv_, pc.off[1] + vbase);
    }
    float carry = 0.0; // u flowing into the segment's last step
    uint nseg = segments();
    for (uint sg = nseg; sg > 0u; sg--) {
        uint t0 = ((sg - 1u) * CHUNKS + l.j) * L;
        float rc[L];
        float rd[L];
        [[unroll]] for (uint s = 0u; s < L; s++) {
            rc[s] = 0.0;
            rd[s] = 0.0;
            if (l.live && t0 + s < pc.T) {
                uint i = base + (t0 + s) * pc.N;
                rc[s] = LD(lc_, pc.off[0] + i);
                rd[s] = LD(dh_, pc.off[3] + i);
            }
        }
        float u = carry;
        bool seq = false;
        if (CHUNKS > 1u) {
            float p = 1.0, q = 0.0;
            [[unroll]] for (uint s = L; s > 0u; s--) {
                float at = exp(rc[s - 1u]);
                q = at * (rd[s - 1u] + q);
                p *= at;
            }
            sh_p[gl_LocalInvocationID.x] = p;
            sh_q[gl_LocalInvocationID.x] = q;
            barrier();
            float x = carry;
            bool ok = true;
            for (uint k = CHUNKS; k > 0u; k--) {
                float pk = sh_p[(k - 1u) * TILE + l.c];
                float qk = sh_q[(k - 1u) * TILE + l.c];
                ok = ok && agg_ok(pk, qk);
                if (k - 1u == l.j) {
                    u = x;
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
            uint s0 = (sg - 1u) * CHUNKS * L;
            uint s1 = min(s0 + CHUNKS * L, pc.T);
            float y = carry;
            for (uint t = s1; l.live && t > s0; t--) {
                uint st = t - 1u;
                uint i = base + st * pc.N;
                float g = LD(dh_, pc.off[3] + i) + y;
                float c = LD(lc_, pc.off[0] + i);
                if (st >= t0 && st < t0 + L) {
                    float lhp = (st > 0u) ? log(LD(h_, pc.off[2] + i - pc.N)) : lv0;
                    uint vi = vbase + (st + 1u) * pc.N;
                    ST(dlv_, pc.off[5] + vi, g * exp(LD(lv_, pc.off[1] + vi)));
                    ST(dlc_, pc.off[4] + i, g * exp(c + lhp));
                }
                y = exp(c) * g;
            }
            carry = y;
            continue;
        }
        [[unroll]] for (uint s = L; s > 0u; s--) {
            float g = rd[s - 1u] + u;
            uint st = t0 + s - 1u;
            if (l.live && st < pc.T) {
                uint i = base + st * pc.N;
                float lhp = (st > 0u) ? log(LD(h_, pc.off[2] + i - pc.N)) : lv0;
                uint vi = vbase + (st + 1u) * pc.N;
                ST(dlv_, pc.off[5] + vi, g * exp(LD(lv_, pc.off[1] + vi)));
                ST(dlc_, pc.off[4] + i, g * exp(rc[s - 1u] + lhp));
            }
            u = exp(rc[s - 1u]) * g;
        }
        if (CHUNKS == 1u) {
            carry = u;
        }
    }
    // carry is now a_0 G_0, alike in every invocation of the channel.
    if (l.live && l.j == 0u) {
        ST(dlv_, pc.off[5] + vbase, carry * exp(lv0));
    }
}
