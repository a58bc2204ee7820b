#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// mingru_scan backward: with a_t = sigmoid(-k_t), z_t = sigmoid(k_t) and
// h_{-1} = h0 (0 without it),
//   G_t  = dh_t + a_{t+1} G_{t+1}
//   dk_t = G_t a_t z_t (g(x_t) - h_{t-1})
//   dx_t = G_t z_t g'(x_t)
//   dh0  = a_0 G_0
// walked as parallel_scan_log's backward walks it (logscan_bwd.glsl). A
// step past T has k = -inf (a = 1) and dh = 0: the identity. A lane whose
// h0 entry is negative or NaN stores NaN in every gradient, as its forward
// output is NaN.
#include "common.glsl"
#include "chunks.glsl"
#include "logspace.glsl"
#include "mingru.glsl"

IN_BUFFER(0, k_)
IN_BUFFER(1, x_)
IN_BUFFER(2, h0_)
IN_BUFFER(3, h_)
IN_BUFFER(4, dh_)
OUT_BUFFER(5, dk_)
OUT_BUFFER(6, dx_)
OUT_BUFFER(7, dh0_)

#define LD_C(r, l, i) LDV(r, k_, pc.off[0] + i, (l).two)
#define LD_DH(r, l, i) LDV(r, dh_, pc.off[4] + i, (l).two)
#define LD_H(r, l, i) LDV(r, h_, pc.off[3] + i, (l).two)
#define LD_V(r, l, i, vbase, st) LDV(r, x_, pc.off[1] + i, (l).two)
#define C_IDENTITY RAW_OF(NEG_INF)
#define DECAY(c) (VAL(1.0) / (VAL(1.0) + exp(c)))

// Loads h_{st-1} (wh; unused for st = 0) and x_st (wv) of step st,
// element i.
#define LD_STEP(wh, wv, l, i, vbase, st)           \
    {                                              \
        if ((st) > 0u) {                           \
            LD_H(wh, l, (i) - pc.N);               \
        }                                          \
        LD_V(wv, l, i, vbase, st);                 \
    }

// 0, or NaN in a channel whose h0 entry is negative or NaN: added to
// every gradient of the lane.
VAL lane_poison;

#define INIT_STATE(h0v, l, vbase)                                        \
    {                                                                    \
        h0v = VAL(0.0);                                                  \
        lane_poison = VAL(0.0);                                          \
        if ((l).live && HAS_INIT) {                                      \
            RAW r;                                                       \
            LDV(r, h0_, pc.off[2] + (l).b * pc.N + (l).d, (l).two);      \
            h0v = WIDENV(r);                                             \
            lane_poison = poison_of(h0v);                                \
        }                                                                \
    }
#define STORE_INIT_GRAD(l, vbase, u, h0v)                                        \
    {                                                                            \
        if (HAS_INIT) {                                                          \
            STV(dh0_, pc.off[7] + (l).b * pc.N + (l).d, u + lane_poison, (l).two); \
        }                                                                        \
    }

float poison_of(float h) {
    return h >= 0.0 ? 0.0 : uintBitsToFloat(0x7fc00000u);
}

vec2 poison_of(vec2 h) {
    return vec2(poison_of(h.x), poison_of(h.y));
}

// The gradients of step st (element i; G = g, k = c, h0 = h0v, wh and wv
// from LD_STEP).
void store_step(Lane l, uint i, uint vbase, uint st, VAL g, VAL c, VAL h0v, RAW wh, RAW wv) {
    VAL hp = (st > 0u) ? WIDENV(wh) : h0v;
    VAL a = sigmoid(-c);
    VAL z = sigmoid(c);
    VAL dg;
    VAL gx = mingru_g(WIDENV(wv), dg);
    STV(dk_, pc.off[5] + i, g * a * z * (gx - hp) + lane_poison, l.two);
    STV(dx_, pc.off[6] + i, g * z * dg + lane_poison, l.two);
}

#include "logscan_bwd.glsl"
