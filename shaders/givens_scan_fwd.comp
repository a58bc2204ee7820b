#version 450
#extension GL_GOOGLE_include_directive : require
// givens_scan forward: h_t = sigma_t * R(theta_t) h_{t-1} + x_t,
// h_{-1} = h0 or 0 (see givens.glsl). The inputs of P steps are loaded into
// registers before they are applied, so that P steps' loads are in flight
// at once and the rotations' cos and sin are off the state's dependency
// chain.
#include "common.glsl"
#include "givens.glsl"

IN_BUFFER(0, theta_)
IN_BUFFER(1, sigma_)
IN_BUFFER(2, x_)
IN_BUFFER(3, h0_)
OUT_BUFFER(4, h_)

// Steps loaded ahead: about 64 registers of inputs whatever K.
const uint P = 64u / K;

void main() {
    Blk r = block_of_invocation();
    if (!r.live) {
        return;
    }
    float h[K];
    for (uint i = 0u; i < K; i++) {
        h[i] = HAS_INIT ? LD(h0_, pc.off[3] + (r.b * pc.N + r.n) * K + i) : 0.0;
    }
    for (uint t0 = 0u; t0 < pc.T; t0 += P) {
        float th[P * K]; // K - 1 used per step
        float sg[P * K];
        float xx[P * K];
        for (uint p = 0u; p < P; p++) {
            if (t0 + p < pc.T) {
                uint s = step_index(r, t0 + p);
                for (uint q = 0u; q < K - 1u; q++) {
                    th[p * (K - 1u) + q] = LD(theta_, pc.off[0] + s * (K - 1u) + q);
                }
                for (uint i = 0u; i < K; i++) {
                    sg[p * K + i] = LD(sigma_, pc.off[1] + s * K + i);
                    xx[p * K + i] = LD(x_, pc.off[2] + s * K + i);
                }
            }
        }
        for (uint p = 0u; p < P; p++) {
            if (t0 + p >= pc.T) {
                break;
            }
            for (uint q = 0u; q < K / 2u; q++) {
                float a = th[p * (K - 1u) + q];
                float c = cos(a), sn = sin(a);
                uint i = 2u * q;
                float xi = h[i], xj = h[i + 1u];
                h[i] = c * xi - sn * xj;
                h[i + 1u] = sn * xi + c * xj;
            }
            for (uint q = 0u; q < (K - 1u) / 2u; q++) {
                float a = th[p * (K - 1u) + K / 2u + q];
                float c = cos(a), sn = sin(a);
                uint i = 2u * q + 1u;
                float xi = h[i], xj = h[i + 1u];
                h[i] = c * xi - sn * xj;
                h[i + 1u] = sn * xi + c * xj;
            }
            uint s = step_index(r, t0 + p);
            for (uint i = 0u; i < K; i++) {
                h[i] = sg[p * K + i] * h[i] + xx[p * K + i];
            }
            // K is even: pairs of adjacent elements, whole words for 16-bit.
            for (uint i = 0u; i < K; i += 2u) {
                ST2(h_, pc.off[4] + s * K + i, h[i], h[i + 1u]);
            }
        }
    }
}
