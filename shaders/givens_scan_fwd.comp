#version 450
#extension GL_GOOGLE_include_directive : require
// givens_scan forward: h_t = sigma_t * R(theta_t) h_{t-1} + x_t,
// h_{-1} = h0 or 0 (see givens.glsl).
#include "common.glsl"
#include "givens.glsl"

IN_BUFFER(0, theta_)
IN_BUFFER(1, sigma_)
IN_BUFFER(2, x_)
IN_BUFFER(3, h0_)
OUT_BUFFER(4, h_)

void main() {
    Blk r = block_of_invocation();
    if (!r.live) {
        return;
    }
    float h[K];
    for (uint i = 0u; i < K; i++) {
        h[i] = HAS_INIT ? LD(h0_, pc.off[3] + (r.b * pc.N + r.n) * K + i) : 0.0;
    }
    for (uint t = 0u; t < pc.T; t++) {
        uint s = step_index(r, t);
        uint ti = pc.off[0] + s * (K - 1u);
        for (uint q = 0u; q < K / 2u; q++) {
            float th = LD(theta_, ti + q);
            float c = cos(th), sn = sin(th);
            uint i = 2u * q;
            float xi = h[i], xj = h[i + 1u];
            h[i] = c * xi - sn * xj;
            h[i + 1u] = sn * xi + c * xj;
        }
        for (uint q = 0u; q < (K - 1u) / 2u; q++) {
            float th = LD(theta_, ti + K / 2u + q);
            float c = cos(th), sn = sin(th);
            uint i = 2u * q + 1u;
            float xi = h[i], xj = h[i + 1u];
            h[i] = c * xi - sn * xj;
            h[i + 1u] = sn * xi + c * xj;
        }
        for (uint i = 0u; i < K; i++) {
            uint e = s * K + i;
            h[i] = LD(sigma_, pc.off[1] + e) * h[i] + LD(x_, pc.off[2] + e);
            ST(h_, pc.off[4] + e, h[i]);
        }
    }
}
