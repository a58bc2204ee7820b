#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// parallel_scan_log forward, in log space:
//   log h_t = logaddexp(log_coeffs_t + log h_{t-1}, log_values_{t+1}),
//   log h_{-1} = log_values_0;  h_t = exp(log h_t).
// A chunk's map is lh -> logaddexp(s + lh, q) with s the sum of its
// log_coeffs and q its result from lh = -inf (see chunks.glsl for the
// segments and the units of channels). A step past T is (log_coeffs 0,
// log_values -inf): the identity.
#include "common.glsl"
#include "chunks.glsl"
#include "logspace.glsl"

IN_BUFFER(0, lc_)
IN_BUFFER(1, lv_)
OUT_BUFFER(2, h_)

// -inf is an ordinary value in log space (a zero); NaN and +inf are not.
bool agg_ok(float s, float q) {
    return s < POS_INF && q < POS_INF;
}

void main() {
    Lane l = lane_of_invocation();
    uint base = l.b * pc.T * pc.N + l.d;          // (b, 0, d) of log_coeffs and h
    uint vbase = l.b * (pc.T + 1u) * pc.N + l.d;  // (b, 0, d) of log_values
    VAL carry = VAL(NEG_INF);                     // log h before the segment
    if (l.live) {
        RAW r;
        LDV(r, lv_, pc.off[1] + vbase, l.two);
        carry = WIDENV(r);
    }
    uint nseg = segments();
    for (uint sg = 0u; sg < nseg; sg++) {
        uint t0 = (sg * CHUNKS + l.j) * L;
        // A whole chunk (all L steps inside T, the unit live) loads and
        // stores without a test per step.
        bool whole = l.live && t0 + L <= pc.T;
        RAW rc[L];
        RAW rv[L];
        if (whole) {
            [[unroll]] for (uint s = 0u; s < L; s++) {
                LDV(rc[s], lc_, pc.off[0] + base + (t0 + s) * pc.N, l.two);
                LDV(rv[s], lv_, pc.off[1] + vbase + (t0 + s + 1u) * pc.N, l.two);
            }
        } else {
            [[unroll]] for (uint s = 0u; s < L; s++) {
                rc[s] = RAW_OF(0.0);
                rv[s] = RAW_OF(NEG_INF);
                if (l.live && t0 + s < pc.T) {
                    LDV(rc[s], lc_, pc.off[0] + base + (t0 + s) * pc.N, l.two);
                    LDV(rv[s], lv_, pc.off[1] + vbase + (t0 + s + 1u) * pc.N, l.two);
                }
            }
        }
        VAL lh = carry;
        bool seq = false;
        if (CHUNKS > 1u) {
            VAL sum = VAL(0.0), q = VAL(NEG_INF);
            [[unroll]] for (uint s = 0u; s < L; s++) {
                VAL c = WIDENV(rc[s]);
                sum += c;
                q = logaddexp(c + q, WIDENV(rv[s]));
            }
            sh_p[gl_LocalInvocationID.x] = sum;
            sh_q[gl_LocalInvocationID.x] = q;
            barrier();
            VAL x = carry;
            bool ok = true;
            for (uint k = 0u; k < CHUNKS; k++) {
                VAL sk = sh_p[k * TILE + l.c];
                VAL qk = sh_q[k * TILE + l.c];
                ok = ok && agg_okv(sk, qk) && agg_okv(x, x);
                if (k == l.j) {
                    lh = x;
                }
                x = logaddexp(sk + x, qk);
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
                RAW wc, wv;
                LDV(wc, lc_, pc.off[0] + i, l.two);
                LDV(wv, lv_, pc.off[1] + vbase + (t + 1u) * pc.N, l.two);
                y = logaddexp(WIDENV(wc) + y, WIDENV(wv));
                if (t >= t0 && t < t0 + L) {
                    STV(h_, pc.off[2] + i, exp(y), l.two);
                }
            }
            carry = y;
            continue;
        }
        if (whole) {
            [[unroll]] for (uint s = 0u; s < L; s++) {
                lh = logaddexp(WIDENV(rc[s]) + lh, WIDENV(rv[s]));
                STV(h_, pc.off[2] + base + (t0 + s) * pc.N, exp(lh), l.two);
            }
        } else {
            [[unroll]] for (uint s = 0u; s < L; s++) {
                lh = logaddexp(WIDENV(rc[s]) + lh, WIDENV(rv[s]));
                if (l.live && t0 + s < pc.T) {
                    STV(h_, pc.off[2] + base + (t0 + s) * pc.N, exp(lh), l.two);
                }
            }
        }
        if (CHUNKS == 1u) {
            carry = lh;
        }
    }
}
