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

// Loads h_{st-1} (wh; unused for st = 0) and log_values_{st+1} (wv) of
// step st, element i of log_coeffs.
#define LD_C(r, l, i) LDV(r, lc_, pc.off[0] + i, (l).two)
#define LD_DH(r, l, i) LDV(r, dh_, pc.off[3] + i, (l).two)
#define LD_H(r, l, i) LDV(r, h_, pc.off[2] + i, (l).two)
#define LD_V(r, l, i, vbase, st) LDV(r, lv_, pc.off[1] + vbase + (st + 1u) * pc.N, (l).two)
#define C_IDENTITY RAW_OF(0.0)
#define DECAY(c) exp(c)

// log_values_0, the log of the initial state.
#define INIT_STATE(lv0, l, vbase)                         \
    {                                                     \
        lv0 = VAL(0.0);                                   \
        if ((l).live) {                                   \
            RAW r;                                        \
            LDV(r, lv_, pc.off[1] + (vbase), (l).two);    \
            lv0 = WIDENV(r);                              \
        }                                                 \
    }
#define STORE_INIT_GRAD(l, vbase, u, lv0) STV(dlv_, pc.off[5] + vbase, u * exp(lv0), (l).two)

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

#include "logscan_bwd.glsl"
