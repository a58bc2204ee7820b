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
//
// A chunk is not applied one logaddexp after another (a chain of an exp
// and a log a step, each waiting for the last): with S_r = c_0 + ... +
// c_r, w_r = v_r - S_r and lh the log state entering the chunk,
//   h_r = exp(S_r + R) (exp(lh - R) + exp(M - R) sum_{i<=r} exp(w_i - M)),
// M = max w_i, R = max(lh, M), and q = s + M + log sum_r exp(w_r - M):
// an exp a step for q and two for the outputs, chained only by sums
// (logspace.glsl: where this form is trusted; elsewhere the chunk walks
// the recurrence from memory).
#include "common.glsl"
#include "chunks.glsl"
#include "logspace.glsl"

IN_BUFFER(0, lc_)
IN_BUFFER(1, lv_)
OUT_BUFFER(2, h_)

#define H_OFF 2

// Step t (element i of log_coeffs): log_coeffs_t and log_values_{t+1},
// taken as they are.
#define LD_STEP(rc, rv, l, i, vbase, t)                                      \
    {                                                                        \
        LDV(rc, lc_, pc.off[0] + i, (l).two);                                \
        LDV(rv, lv_, pc.off[1] + (vbase) + ((t) + 1u) * pc.N, (l).two);      \
    }
#define C_IDENTITY RAW_OF(0.0)
#define V_IDENTITY RAW_OF(NEG_INF)
#define LOG_COEFF(rc, rv) WIDENV(rc)
#define LOG_VALUE(rc, rv) WIDENV(rv)

// log h_{-1} = log_values_0.
#define INIT_LOG_STATE(carry, l, vbase)               \
    {                                                 \
        carry = VAL(NEG_INF);                         \
        if ((l).live) {                               \
            RAW r;                                    \
            LDV(r, lv_, pc.off[1] + (vbase), (l).two); \
            carry = WIDENV(r);                        \
        }                                             \
    }

#include "logscan_fwd.glsl"
