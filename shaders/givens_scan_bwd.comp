#version 450
#extension GL_GOOGLE_include_directive : require
// givens_scan backward, one reverse scan per block (see givens.glsl):
//   G_t = dh_t + A_{t+1}^T G_{t+1},  dx_t = G_t,
//   y = R(theta_t) h_{t-1} rebuilt in registers from the stored forward
//   output (never by dividing by sigma), dsigma_t = G_t * y,
//   dtheta_t by walking the rotations backwards with gradient sigma_t * G_t,
//   dh0 = A_0^T G_0.
// For a rotation with outputs (y_i, y_j) and output gradients (g_i, g_j):
//   dth = y_i g_j - y_j g_i,  input gradients (c g_i + s g_j, c g_j - s g_i).
// The inputs of P steps are loaded into registers before they are used, so
// that P steps' loads are in flight at once.
#include "common.glsl"
#include "givens.glsl"

IN_BUFFER(0, theta_)
IN_BUFFER(1, sigma_)
IN_BUFFER(2, h0_)
IN_BUFFER(3, h_)
IN_BUFFER(4, dh_)
OUT_BUFFER(5, dtheta_)
OUT_BUFFER(6, dsigma_)
OUT_BUFFER(7, dx_)
OUT_BUFFER(8, dh0_)

// Steps loaded ahead: about 128 registers of inputs whatever K.
const uint P = 32u / K;

void main() {
    Blk r = block_of_invocation();
    if (!r.live) {
        return;
    }
    float u[K];     // A_{t+1}^T G_{t+1}
    float y[K];     // rotated state
    float gy[K];    // gradient flowing back through the rotations
    float cs[K];    // cos of each angle (K-1 used)
    float sn[K];    // sin of each angle
    float ymid[K];  // state after the first layer
    for (uint i = 0u; i < K; i++) {
        u[i] = 0.0;
    }
    // Steps are walked in groups of P from the end: group [t1 - P, t1).
    for (uint t1 = pc.T; t1 > 0u; t1 = (t1 > P) ? t1 - P : 0u) {
        float th[P * K]; // K - 1 used per step
        float sg[P * K];
        float dd[P * K];
        float hp[P * K];
        for (uint p = 0u; p < P; p++) {
            if (p < t1) {
                uint t = t1 - 1u - p;
                uint s = step_index(r, t);
                for (uint q = 0u; q < K - 1u; q++) {
                    th[p * K + q] = LD(theta_, pc.off[0] + s * (K - 1u) + q);
                }
                for (uint i = 0u; i < K; i++) {
                    uint e = s * K + i;
                    sg[p * K + i] = LD(sigma_, pc.off[1] + e);
                    dd[p * K + i] = LD(dh_, pc.off[4] + e);
                    if (t > 0u) {
                        hp[p * K + i] = LD(h_, pc.off[3] + (s - pc.N) * K + i);
                    } else if (HAS_INIT) {
                        hp[p * K + i] = LD(h0_, pc.off[2] + (r.b * pc.N + r.n) * K + i);
                    } else {
                        hp[p * K + i] = 0.0;
                    }
                }
            }
        }
        for (uint p = 0u; p < P; p++) {
            if (p >= t1) {
                break;
            }
            uint t = t1 - 1u - p;
            uint s = step_index(r, t);
            uint ti = s * (K - 1u);
            // Rebuild y = R(theta_t) h_{t-1}.
            for (uint i = 0u; i < K; i++) {
                y[i] = hp[p * K + i];
            }
            for (uint q = 0u; q < K / 2u; q++) {
                float a = th[p * K + q];
                cs[q] = cos(a);
                sn[q] = sin(a);
                uint i = 2u * q;
                float xi = y[i], xj = y[i + 1u];
                y[i] = cs[q] * xi - sn[q] * xj;
                y[i + 1u] = sn[q] * xi + cs[q] * xj;
            }
            for (uint i = 0u; i < K; i++) {
                ymid[i] = y[i];
            }
            for (uint q = 0u; q < (K - 1u) / 2u; q++) {
                uint pq = K / 2u + q;
                float a = th[p * K + pq];
                cs[pq] = cos(a);
                sn[pq] = sin(a);
                uint i = 2u * q + 1u;
                float xi = y[i], xj = y[i + 1u];
                y[i] = cs[pq] * xi - sn[pq] * xj;
                y[i + 1u] = sn[pq] * xi + cs[pq] * xj;
            }
            float gg[K];
            for (uint i = 0u; i < K; i++) {
                gg[i] = dd[p * K + i] + u[i];
                gy[i] = sg[p * K + i] * gg[i];
            }
            // K is even: pairs of adjacent elements, whole words for 16-bit.
            for (uint i = 0u; i < K; i += 2u) {
                uint e = s * K + i;
                ST2(dx_, pc.off[7] + e, gg[i], gg[i + 1u]);
                ST2(dsigma_, pc.off[6] + e, gg[i] * y[i], gg[i + 1u] * y[i + 1u]);
            }
            // Walk the rotations backwards: the second layer (outputs y),
            // then the first (outputs ymid). Pairs within a layer are
            // disjoint, so their order inside a layer does not matter.
            for (uint q = 0u; q < (K - 1u) / 2u; q++) {
                uint pq = K / 2u + q;
                uint i = 2u * q + 1u;
                float gi = gy[i], gj = gy[i + 1u];
                ST(dtheta_, pc.off[5] + ti + pq, y[i] * gj - y[i + 1u] * gi);
                gy[i] = cs[pq] * gi + sn[pq] * gj;
                gy[i + 1u] = cs[pq] * gj - sn[pq] * gi;
            }
            for (uint q = 0u; q < K / 2u; q++) {
                uint i = 2u * q;
                float gi = gy[i], gj = gy[i + 1u];
                ST(dtheta_, pc.off[5] + ti + q, ymid[i] * gj - ymid[i + 1u] * gi);
                gy[i] = cs[q] * gi + sn[q] * gj;
                gy[i + 1u] = cs[q] * gj - sn[q] * gi;
            }
            for (uint i = 0u; i < K; i++) {
                u[i] = gy[i];
            }
        }
    }
    if (HAS_INIT) {
        for (uint i = 0u; i < K; i += 2u) {
            ST2(dh0_, pc.off[8] + (r.b * pc.N + r.n) * K + i, u[i], u[i + 1u]);
        }
    }
}
