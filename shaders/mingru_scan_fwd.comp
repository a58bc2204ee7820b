#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// mingru_scan forward: h_t = (1 - z_t) h_{t-1} + z_t g(x_t), h_{-1} = h0
// (0 without h0), z_t = sigmoid(k_t).
//
// Where every gate of a chunk is a normal float (mingru.glsl's lin_ok:
// |k| <= LIN_RANGE or k = -inf, x in [-LIN_RANGE, +inf)), its steps are
// taken in the linear form h -> a h + b, a = 1 - z, b = z g(x), as in
// linear_scan: a convex combination of the last state and g(x), so it
// neither overflows nor underflows, with no exponential or logarithm per
// step but the gates' own. A chunk whose map h -> p h + q has a product p
// of its decays that is no longer a normal float, or any step outside
// that range, publishes p = NaN; the fold then fails and the segment
// walks the log-space recurrence of SPEC's formula from memory
// (logaddexp of log(1 - z) + log h and log z + log g(x)), so that it
// neither overflows nor underflows where the linear form would, and NaN
// and Inf come out as in the sequential reference. A step past T is the
// identity (a = 1, b = 0). A negative or NaN h0 entry makes its lane NaN.
#include "common.glsl"
#include "chunks.glsl"
#include "logspace.glsl"
#include "mingru.glsl"

IN_BUFFER(0, k_)
IN_BUFFER(1, x_)
IN_BUFFER(2, h0_)
OUT_BUFFER(3, h_)

bool agg_ok(float p, float q) {
    return abs(p) < POS_INF && abs(q) < POS_INF;
}

void main() {
    Lane l = lane_of_invocation();
    uint base = l.b * pc.T * pc.N + l.d;  // element (b, 0, d)
    VAL carry = VAL(0.0);                 // h before the segment
    if (l.live && HAS_INIT) {
        RAW r;
        LDV(r, h0_, pc.off[2] + l.b * pc.N + l.d, l.two);
        carry = lin_state(WIDENV(r));
    }
    uint nseg = segments();
    for (uint sg = 0u; sg < nseg; sg++) {
        uint t0 = (sg * CHUNKS + l.j) * L;
        bool whole = l.live && t0 + L <= pc.T;
        // The chunk's steps as maps h -> av h + bv.
        VAL av[L];
        VAL bv[L];
        bool lin = true;
        [[unroll]] for (uint s = 0u; s < L; s++) {
            av[s] = VAL(1.0);
            bv[s] = VAL(0.0);
            if (whole || (l.live && t0 + s < pc.T)) {
                uint i = base + (t0 + s) * pc.N;
                RAW rk, rx;
                LDV(rk, k_, pc.off[0] + i, l.two);
                LDV(rx, x_, pc.off[1] + i, l.two);
                VAL k = WIDENV(rk), x = WIDENV(rx);
                lin = lin && lin_ok(k, x);
                lin_gates(k, x, av[s], bv[s]);
            }
        }
        VAL h = carry;
        bool seq = !lin;
        if (CHUNKS > 1u) {
            VAL p = VAL(1.0), q = VAL(0.0);
            [[unroll]] for (uint s = 0u; s < L; s++) {
                p *= av[s];
                q = av[s] * q + bv[s];
            }
            if (!lin || !all_normal(p)) {
                p = VAL(uintBitsToFloat(0x7fc00000u));
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
            seq = !ok;
            if (ok) {
                carry = x;
            }
        }
        if (seq) {
            // The log-space recurrence over the whole segment from its
            // carry, from memory; the invocation stores its own steps.
            uint s0 = sg * CHUNKS * L;
            uint s1 = min(s0 + CHUNKS * L, pc.T);
            VAL y = log_state(carry);
            for (uint t = s0; l.live && t < s1; t++) {
                uint i = base + t * pc.N;
                RAW rk, rx;
                LDV(rk, k_, pc.off[0] + i, l.two);
                LDV(rx, x_, pc.off[1] + i, l.two);
                VAL k = WIDENV(rk);
                y = logaddexp(log_keep(k) + y, log_take(k, WIDENV(rx)));
                if (t >= t0 && t < t0 + L) {
                    STV(h_, pc.off[3] + i, exp(y), l.two);
                }
            }
            carry = exp(y);
            continue;
        }
        [[unroll]] for (uint s = 0u; s < L; s++) {
            h = av[s] * h + bv[s];
            if (whole || (l.live && t0 + s < pc.T)) {
                STV(h_, pc.off[3] + base + (t0 + s) * pc.N, h, l.two);
            }
        }
        if (CHUNKS == 1u) {
            carry = h;
        }
    }
}
