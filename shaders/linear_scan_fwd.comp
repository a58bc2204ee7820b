#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// linear_scan forward: h_t = a_t * h_{t-1} + b_t elementwise, h_{-1} = h0 or 0.
// A chunk's map is h -> p*h + q (see chunks.glsl for the segments and the
// units of channels; VAL arithmetic is per channel).
#include "common.glsl"
#include "chunks.glsl"

IN_BUFFER(0, a_)
IN_BUFFER(1, b_)
IN_BUFFER(2, h0_)
OUT_BUFFER(3, h_)

bool agg_ok(float p, float q) {
    return abs(p) < POS_INF && abs(q) < POS_INF;
}

void main() {
    Lane l = lane_of_invocation();
    uint base = l.b * pc.T * pc.N + l.d; // element (b, 0, d)
    VAL carry = VAL(0.0);                // h before the segment
    if (l.live && HAS_INIT) {
        RAW r;
        LDV(r, h0_, pc.off[2] + l.b * pc.N + l.d, l.two);
        carry = WIDENV(r);
    }
    uint nseg = segments();
    for (uint sg = 0u; sg < nseg; sg++) {
        uint t0 = (sg * CHUNKS + l.j) * L;
        // A whole chunk (all L steps inside T, the unit live: every chunk
        // but those of the last segment) loads and stores without a test
        // per step.
        bool whole = l.live && t0 + L <= pc.T;
        RAW ra[L];
        RAW rb[L];
        if (whole) {
            [[unroll]] for (uint s = 0u; s < L; s++) {
                uint i = base + (t0 + s) * pc.N;
                LDV(ra[s], a_, pc.off[0] + i, l.two);
                LDV(rb[s], b_, pc.off[1] + i, l.two);
            }
        } else {
            [[unroll]] for (uint s = 0u; s < L; s++) {
                ra[s] = RAW_OF(1.0);
                rb[s] = RAW_OF(0.0);
                if (l.live && t0 + s < pc.T) {
                    uint i = base + (t0 + s) * pc.N;
                    LDV(ra[s], a_, pc.off[0] + i, l.two);
                    LDV(rb[s], b_, pc.off[1] + i, l.two);
                }
            }
        }
        VAL h = carry;
        bool seq = false;
        if (CHUNKS > 1u) {
            VAL p = VAL(1.0), q = VAL(0.0);
            [[unroll]] for (uint s = 0u; s < L; s++) {
                VAL a = WIDENV(ra[s]);
                p *= a;
                q = a * q + WIDENV(rb[s]);
            }
            sh_p[gl_LocalInvocationID.x] = p;
            sh_q[gl_LocalInvocationID.x] = q;
            barrier();
            VAL x = carry;
            bool ok = true;
            for (uint k = 0u; k < CHUNKS; k++) {
                VAL pk = sh_p[k * TILE + l.c];
                VAL qk = sh_q[k * TILE + l.c];
                ok = ok && agg_okv(pk, qk) && agg_okv(x, x);
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
            VAL y = carry;
            for (uint t = s0; l.live && t < s1; t++) {
                uint i = base + t * pc.N;
                RAW wa, wb;
                LDV(wa, a_, pc.off[0] + i, l.two);
                LDV(wb, b_, pc.off[1] + i, l.two);
                y = WIDENV(wa) * y + WIDENV(wb);
                if (t >= t0 && t < t0 + L) {
                    STV(h_, pc.off[3] + i, y, l.two);
                }
            }
            carry = y;
            continue;
        }
        if (whole) {
            [[unroll]] for (uint s = 0u; s < L; s++) {
                h = WIDENV(ra[s]) * h + WIDENV(rb[s]);
                STV(h_, pc.off[3] + base + (t0 + s) * pc.N, h, l.two);
            }
        } else {
            [[unroll]] for (uint s = 0u; s < L; s++) {
                h = WIDENV(ra[s]) * h + WIDENV(rb[s]);
                if (l.live && t0 + s < pc.T) {
                    STV(h_, pc.off[3] + base + (t0 + s) * pc.N, h, l.two);
                }
            }
        }
        if (CHUNKS == 1u) {
            carry = h;
        }
    }
}
