#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// linear_scan backward. One reverse scan:
//   G_t = dh_t + a_{t+1} G_{t+1},  db_t = G_t,  da_t = G_t h_{t-1},
//   dh0 = a_0 G_0   (h_{-1} = h0 or 0).
// u_t = a_{t+1} G_{t+1} is the carry flowing into step t from the right; a
// chunk's map, walking right to left, is u -> p*u + q. Segments are walked
// from the last (see chunks.glsl); a step past T is (a 1, dh 0): the
// identity. VAL arithmetic is per channel of the unit (see chunks.glsl).
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
    return abs(p) < POS_INF && abs(q) < POS_INF;
}

// h_{t-1} for step t of a live channel.
VAL h_prev(Lane l, uint base, uint t) {
    RAW r = RAW_OF(0.0);
    if (t > 0u) {
        LDV(r, h_, pc.off[2] + base + (t - 1u) * pc.N, l.two);
    } else if (HAS_INIT) {
        LDV(r, h0_, pc.off[1] + l.b * pc.N + l.d, l.two);
    }
    return WIDENV(r);
}

void main() {
    Lane l = lane_of_invocation();
    uint base = l.b * pc.T * pc.N + l.d;
    VAL carry = VAL(0.0); // u flowing into the segment's last step
    uint nseg = segments();
    for (uint sg = nseg; sg > 0u; sg--) {
        uint t0 = ((sg - 1u) * CHUNKS + l.j) * L;
        // h_{t-1} is loaded with the inputs, not at its store: a load after a
        // store that may alias it waits for it, which would cost a memory
        // round trip per step.
        // A whole chunk (all L steps inside T, past step 0, the unit live:
        // every chunk but the first and those of the last segment) loads
        // and stores without a test per step.
        bool whole = l.live && t0 > 0u && t0 + L <= pc.T;
        RAW ra[L];
        RAW rd[L];
        RAW rh[L];
        if (whole) {
            [[unroll]] for (uint s = 0u; s < L; s++) {
                uint i = base + (t0 + s) * pc.N;
                LDV(ra[s], a_, pc.off[0] + i, l.two);
                LDV(rd[s], dh_, pc.off[3] + i, l.two);
                LDV(rh[s], h_, pc.off[2] + i - pc.N, l.two);
            }
        } else {
            [[unroll]] for (uint s = 0u; s < L; s++) {
                ra[s] = RAW_OF(1.0);
                rd[s] = RAW_OF(0.0);
                rh[s] = RAW_OF(0.0);
                if (l.live && t0 + s < pc.T) {
                    uint i = base + (t0 + s) * pc.N;
                    LDV(ra[s], a_, pc.off[0] + i, l.two);
                    LDV(rd[s], dh_, pc.off[3] + i, l.two);
                    if (t0 + s > 0u) {
                        LDV(rh[s], h_, pc.off[2] + i - pc.N, l.two);
                    } else if (HAS_INIT) {
                        LDV(rh[s], h0_, pc.off[1] + l.b * pc.N + l.d, l.two);
                    }
                }
            }
        }
        VAL u = carry;
        bool seq = false;
        if (CHUNKS > 1u) {
            VAL p = VAL(1.0), q = VAL(0.0);
            [[unroll]] for (uint s = L; s > 0u; s--) {
                VAL a = WIDENV(ra[s - 1u]);
                q = a * (WIDENV(rd[s - 1u]) + q);
                p *= a;
            }
            sh_p[gl_LocalInvocationID.x] = p;
            sh_q[gl_LocalInvocationID.x] = q;
            barrier();
            VAL x = carry;
            bool ok = true;
            for (uint k = CHUNKS; k > 0u; k--) {
                VAL pk = sh_p[(k - 1u) * TILE + l.c];
                VAL qk = sh_q[(k - 1u) * TILE + l.c];
                ok = ok && agg_okv(pk, qk) && agg_okv(x, x);
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
            VAL y = carry;
            for (uint t = s1; l.live && t > s0; t--) {
                uint i = base + (t - 1u) * pc.N;
                RAW wd, wa;
                LDV(wd, dh_, pc.off[3] + i, l.two);
                LDV(wa, a_, pc.off[0] + i, l.two);
                VAL g = WIDENV(wd) + y;
                if (t - 1u >= t0 && t - 1u < t0 + L) {
                    STV(db_, pc.off[5] + i, g, l.two);
                    STV(da_, pc.off[4] + i, g * h_prev(l, base, t - 1u), l.two);
                }
                y = WIDENV(wa) * g;
            }
            carry = y;
            continue;
        }
        if (whole) {
            [[unroll]] for (uint s = L; s > 0u; s--) {
                VAL g = WIDENV(rd[s - 1u]) + u;
                uint i = base + (t0 + s - 1u) * pc.N;
                STV(db_, pc.off[5] + i, g, l.two);
                STV(da_, pc.off[4] + i, g * WIDENV(rh[s - 1u]), l.two);
                u = WIDENV(ra[s - 1u]) * g;
            }
        } else {
            [[unroll]] for (uint s = L; s > 0u; s--) {
                VAL g = WIDENV(rd[s - 1u]) + u;
                uint t = t0 + s - 1u;
                if (l.live && t < pc.T) {
                    uint i = base + t * pc.N;
                    STV(db_, pc.off[5] + i, g, l.two);
                    STV(da_, pc.off[4] + i, g * WIDENV(rh[s - 1u]), l.two);
                }
                u = WIDENV(ra[s - 1u]) * g;
            }
        }
        if (CHUNKS == 1u) {
            carry = u;
        }
    }
    // carry is now a_0 G_0, alike in every invocation of the channel.
    if (l.live && l.j == 0u && HAS_INIT) {
        STV(dh0_, pc.off[6] + l.b * pc.N + l.d, carry, l.two);
    }
}
