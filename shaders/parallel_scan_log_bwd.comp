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
// identity. VAL arithmetic is per channel of the unit (see chunks.glsl).
#include "common.glsl"
#include "chunks.glsl"

IN_BUFFER(0, lc_)
IN_BUFFER(1, lv_)
IN_BUFFER(2, h_)
IN_BUFFER(3, dh_)
OUT_BUFFER(4, dlc_)
OUT_BUFFER(5, dlv_)

bool agg_ok(float p, float q) {
    return abs(p) < POS_INF && abs(q) < POS_INF;
}

// Loads h_{st-1} (wh; unused for st = 0) and log_values_{st+1} (wv) of
// step st, element i of log_coeffs.
#define LD_STEP(wh, wv, l, i, vbase, st)                                \
    {                                                                   \
        if ((st) > 0u) {                                                \
            LDV(wh, h_, pc.off[2] + (i) - pc.N, (l).two);               \
        }                                                               \
        LDV(wv, lv_, pc.off[1] + (vbase) + ((st) + 1u) * pc.N, (l).two); \
    }

// The outputs of step st (element i of log_coeffs, G = g, log_coeffs c,
// wh and wv from LD_STEP).
void store_step(Lane l, uint i, uint vbase, uint st, VAL g, VAL c, VAL lv0, RAW wh, RAW wv) {
    VAL lhp = (st > 0u) ? log(WIDENV(wh)) : lv0;
    uint vi = vbase + (st + 1u) * pc.N;
    STV(dlv_, pc.off[5] + vi, g * exp(WIDENV(wv)), l.two);
    STV(dlc_, pc.off[4] + i, g * exp(c + lhp), l.two);
}

void main() {
    Lane l = lane_of_invocation();
    uint base = l.b * pc.T * pc.N + l.d;
    uint vbase = l.b * (pc.T + 1u) * pc.N + l.d;
    VAL lv0 = VAL(0.0);
    if (l.live) {
        RAW r;
        LDV(r, lv_, pc.off[1] + vbase, l.two);
        lv0 = WIDENV(r);
    }
    VAL carry = VAL(0.0); // u flowing into the segment's last step
    uint nseg = segments();
    for (uint sg = nseg; sg > 0u; sg--) {
        uint t0 = ((sg - 1u) * CHUNKS + l.j) * L;
        // h_{t-1} and log_values_{t+1} are loaded with the inputs, not at
        // their stores: a load after a store that may alias it waits for it,
        // which would cost a memory round trip per step.
        // A whole chunk (all L steps inside T, past step 0, the unit live:
        // every chunk but the first and those of the last segment) loads
        // and stores without a test per step: in the 16-bit types only. On
        // an H200 at the large shape it took 2% (f16) and 10% (bf16) off
        // the backward, and made the f32 one 6% slower (0.90 to 0.95 ms),
        // whose step is bound by its arithmetic, not its instruction count.
#if defined(DT_F32)
        bool whole = false;
#else
        bool whole = l.live && t0 > 0u && t0 + L <= pc.T;
#endif
        RAW rc[L];
        RAW rd[L];
        RAW rh[L];
        RAW rv[L];
        if (whole) {
            [[unroll]] for (uint s = 0u; s < L; s++) {
                uint i = base + (t0 + s) * pc.N;
                LDV(rc[s], lc_, pc.off[0] + i, l.two);
                LDV(rd[s], dh_, pc.off[3] + i, l.two);
                LDV(rh[s], h_, pc.off[2] + i - pc.N, l.two);
                LDV(rv[s], lv_, pc.off[1] + vbase + (t0 + s + 1u) * pc.N, l.two);
            }
        } else {
            [[unroll]] for (uint s = 0u; s < L; s++) {
                rc[s] = RAW_OF(0.0);
                rd[s] = RAW_OF(0.0);
                rh[s] = RAW_OF(1.0);
                rv[s] = RAW_OF(0.0);
                if (l.live && t0 + s < pc.T) {
                    uint i = base + (t0 + s) * pc.N;
                    LDV(rc[s], lc_, pc.off[0] + i, l.two);
                    LDV(rd[s], dh_, pc.off[3] + i, l.two);
                    LD_STEP(rh[s], rv[s], l, i, vbase, t0 + s);
                }
            }
        }
        VAL u = carry;
        bool seq = false;
        if (CHUNKS > 1u) {
            VAL p = VAL(1.0), q = VAL(0.0);
            [[unroll]] for (uint s = L; s > 0u; s--) {
                VAL at = exp(WIDENV(rc[s - 1u]));
                q = at * (WIDENV(rd[s - 1u]) + q);
                p *= at;
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
                uint st = t - 1u;
                uint i = base + st * pc.N;
                RAW wd, wc;
                LDV(wd, dh_, pc.off[3] + i, l.two);
                LDV(wc, lc_, pc.off[0] + i, l.two);
                VAL g = WIDENV(wd) + y;
                VAL c = WIDENV(wc);
                if (st >= t0 && st < t0 + L) {
                    RAW wh = RAW_OF(1.0), wv;
                    LD_STEP(wh, wv, l, i, vbase, st);
                    store_step(l, i, vbase, st, g, c, lv0, wh, wv);
                }
                y = exp(c) * g;
            }
            carry = y;
            continue;
        }
        if (whole) {
            [[unroll]] for (uint s = L; s > 0u; s--) {
                VAL g = WIDENV(rd[s - 1u]) + u;
                uint st = t0 + s - 1u;
                VAL c = WIDENV(rc[s - 1u]);
                store_step(l, base + st * pc.N, vbase, st, g, c, lv0, rh[s - 1u], rv[s - 1u]);
                u = exp(c) * g;
            }
        } else {
            [[unroll]] for (uint s = L; s > 0u; s--) {
                VAL g = WIDENV(rd[s - 1u]) + u;
                uint st = t0 + s - 1u;
                VAL c = WIDENV(rc[s - 1u]);
                if (l.live && st < pc.T) {
                    store_step(l, base + st * pc.N, vbase, st, g, c, lv0, rh[s - 1u], rv[s - 1u]);
                }
                u = exp(c) * g;
            }
        }
        if (CHUNKS == 1u) {
            carry = u;
        }
    }
    // carry is now a_0 G_0, alike in every invocation of the channel.
    if (l.live && l.j == 0u) {
        STV(dlv_, pc.off[5] + vbase, carry * exp(lv0), l.two);
    }
}
