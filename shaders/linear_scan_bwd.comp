#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// linear_scan backward. One reverse scan:
//   G_t = dh_t + a_{t+1} G_{t+1},  db_t = G_t,  da_t = G_t h_{t-1},
//   dh0 = a_0 G_0   (h_{-1} = h0 or 0).
// u_t = a_{t+1} G_{t+1} is the carry flowing into step t from the right; a
// chunk's map, walking right to left, is u -> p*u + q. Segments are walked
// from the last (see chunks.glsl); a step past T is (a 1, dh 0): the
// identity.
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

// h_{t-1} for step t of a live channel.
float h_prev(Lane l, uint base, uint t) {
    if (t > 0u) {
        return LD(h_, pc.off[2] + base + (t - 1u) * pc.N);
    }
    return HAS_INIT ? LD(h0_, pc.off[1] + l.b * pc.N + l.d) : 0.0;
}

void main() {
    Lane l = lane_of_invocation();
    uint base = l.b * pc.T * pc.N + l.d;
    float carry = 0.0; // u flowing into the segment's last step
    uint nseg = segments();
    for (uint sg = nseg; sg > 0u; sg--) {
        uint t0 = ((sg - 1u) * CHUNKS + l.j) * L;
        float ra[L];
        float rd[L];
        [[unroll]] for (uint s = 0u; s < L; s++) {
            ra[s] = 1.0;
            rd[s] = 0.0;
            if (l.live && t0 + s < pc.T) {
                uint i = base + (t0 + s) * pc.N;
                ra[s] = LD(a_, pc.off[0] + i);
                rd[s] = LD(dh_, pc.off[3] + i);
            }
        }
        float u = carry;
        bool seq = false;
        if (CHUNKS > 1u) {
            float p = 1.0, q = 0.0;
            [[unroll]] for (uint s = L; s > 0u; s--) {
                q = ra[s - 1u] * (rd[s - 1u] + q);
                p *= ra[s - 1u];
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
                uint i = base + (t - 1u) * pc.N;
                float g = LD(dh_, pc.off[3] + i) + y;
                if (t - 1u >= t0 && t - 1u < t0 + L) {
                    ST(db_, pc.off[5] + i, g);
                    ST(da_, pc.off[4] + i, g * h_prev(l, base, t - 1u));
                }
                y = LD(a_, pc.off[0] + i) * g;
            }
            carry = y;
            continue;
        }
        [[unroll]] for (uint s = L; s > 0u; s--) {
            float g = rd[s - 1u] + u;
            uint t = t0 + s - 1u;
            if (l.live && t < pc.T) {
                uint i = base + t * pc.N;
                ST(db_, pc.off[5] + i, g);
                ST(da_, pc.off[4] + i, g * h_prev(l, base, t));
            }
            u = ra[s - 1u] * g;
        }
        if (CHUNKS == 1u) {
            carry = u;
        }
    }
    // carry is now a_0 G_0, alike in every invocation of the channel.
    if (l.live && l.j == 0u && HAS_INIT) {
        ST(dh0_, pc.off[6] + l.b * pc.N + l.d, carry);
    }
}
