#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// mingru_scan forward: parallel_scan_log's forward (logscan_fwd.glsl) with
// its gates formed from the pre-activations as they are loaded
// (mingru.glsl): log_coeffs_t = -softplus(k_t), log_values_{t+1} =
// -softplus(-k_t) + log g(x_t), log h_{-1} = log h0 (-inf without h0). A
// step past T is (k = -inf, x = 0): log_coeffs 0, log_values -inf, the
// identity.
#include "common.glsl"
#include "chunks.glsl"
#include "logspace.glsl"
#include "mingru.glsl"

IN_BUFFER(0, k_)
IN_BUFFER(1, x_)
IN_BUFFER(2, h0_)
OUT_BUFFER(3, h_)

#define H_OFF 3

#define LD_STEP(rc, rv, l, i, vbase, t)                \
    {                                                  \
        LDV(rc, k_, pc.off[0] + i, (l).two);           \
        LDV(rv, x_, pc.off[1] + i, (l).two);           \
    }
#define C_IDENTITY RAW_OF(NEG_INF)
#define V_IDENTITY RAW_OF(0.0)
#define LOG_COEFF(rc, rv) log_keep(WIDENV(rc))
#define LOG_VALUE(rc, rv) log_take(WIDENV(rc), WIDENV(rv))

#define INIT_LOG_STATE(carry, l, vbase)                                  \
    {                                                                    \
        carry = VAL(NEG_INF);                                            \
        if ((l).live && HAS_INIT) {                                      \
            RAW r;                                                       \
            LDV(r, h0_, pc.off[2] + (l).b * pc.N + (l).d, (l).two);      \
            carry = log_state(WIDENV(r));                                \
        }                                                                \
    }

#include "logscan_fwd.glsl"
