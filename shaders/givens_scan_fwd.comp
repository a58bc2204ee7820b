#version 450
#extension GL_GOOGLE_include_directive : require
// givens_scan forward: h_t = sigma_t * R(theta_t) h_{t-1} + x_t,
// h_{-1} = h0 or 0 (see givens.glsl for the layout and the chunks). The
// rescan loads the inputs of P steps into registers before applying them,
// so that P steps' loads are in flight at once and the rotations' cos and
// sin are off the state's dependency chain.
#include "common.glsl"
#include "givens.glsl"

IN_BUFFER(0, theta_)
IN_BUFFER(1, sigma_)
IN_BUFFER(2, x_)
IN_BUFFER(3, h0_)
OUT_BUFFER(4, h_)

// Steps loaded ahead by the rescan, about 64 registers of inputs unchunked
// (few invocations, long walks) and half that chunked (many invocations
// hide the latency instead): 4 steps chunked at k = 8.
const uint P = (64u / K) >> CHUNKED;
// Steps loaded ahead by pass 1 (4 at k = 8), besides the 72 registers of
// P and S.
const uint P1 = 32u / K;

void main() {
    Blk r = block_of_invocation();
    float h[K];
    bool seq = false;
    if (CHUNKS > 1u) {
        // Pass 1: columns m < K of v are the columns of P (from the
        // identity), column K is S (from zero).
        float v[(K + 1u) * K];
        for (uint m = 0u; m <= K; m++) {
            for (uint i = 0u; i < K; i++) {
                v[m * K + i] = (i == m) ? 1.0 : 0.0;
            }
        }
        if (r.live) {
            for (uint t0 = r.t0; t0 < r.t1; t0 += P1) {
                float th[P1 * K]; // K - 1 used per step
                float sg[P1 * K];
                float xx[P1 * K];
                for (uint p = 0u; p < P1; p++) {
                    if (t0 + p < r.t1) {
                        uint s = step_index(r, t0 + p);
                        for (uint q = 0u; q < K - 1u; q++) {
                            th[p * K + q] = LD(theta_, pc.off[0] + s * (K - 1u) + q);
                        }
                        for (uint i = 0u; i < K; i++) {
                            sg[p * K + i] = LD(sigma_, pc.off[1] + s * K + i);
                            xx[p * K + i] = LD(x_, pc.off[2] + s * K + i);
                        }
                    }
                }
                for (uint p = 0u; p < P1; p++) {
                    if (t0 + p >= r.t1) {
                        break;
                    }
                    for (uint q = 0u; q < K / 2u; q++) {
                        float a = th[p * K + q];
                        vec2 sc = sincos_reduced(a);
                        float c = sc.y, sn = sc.x;
                        uint i = 2u * q;
                        for (uint m = 0u; m <= K; m++) {
                            float xi = v[m * K + i], xj = v[m * K + i + 1u];
                            v[m * K + i] = c * xi - sn * xj;
                            v[m * K + i + 1u] = sn * xi + c * xj;
                        }
                    }
                    for (uint q = 0u; q < (K - 1u) / 2u; q++) {
                        float a = th[p * K + K / 2u + q];
                        vec2 sc = sincos_reduced(a);
                        float c = sc.y, sn = sc.x;
                        uint i = 2u * q + 1u;
                        for (uint m = 0u; m <= K; m++) {
                            float xi = v[m * K + i], xj = v[m * K + i + 1u];
                            v[m * K + i] = c * xi - sn * xj;
                            v[m * K + i + 1u] = sn * xi + c * xj;
                        }
                    }
                    for (uint i = 0u; i < K; i++) {
                        for (uint m = 0u; m < K; m++) {
                            v[m * K + i] *= sg[p * K + i];
                        }
                        v[K * K + i] = sg[p * K + i] * v[K * K + i] + xx[p * K + i];
                    }
                }
            }
        }
        uint sl = agg_slot(r, r.j);
        bool fin = true;
        for (uint i = 0u; i < K; i++) {
            for (uint m = 0u; m < K; m++) {
                sh_P[sl * PSTRIDE + i * K + m] = v[m * K + i];
                fin = fin && finite(v[m * K + i]);
            }
            sh_S[sl * SSTRIDE + i] = v[K * K + i];
            fin = fin && finite(v[K * K + i]);
        }
        sh_F[sl] = fin ? 1u : 0u;
        barrier();
        seq = !aggregates_finite(r);
    }
    if (!r.live) {
        return;
    }
    bool h0_finite = true;
    for (uint i = 0u; i < K; i++) {
        h[i] = HAS_INIT ? LD(h0_, pc.off[3] + init_index(r) + i) : 0.0;
        h0_finite = h0_finite && finite(h[i]);
    }
    if (CHUNKS > 1u) {
        // A non-finite h0 takes the sequential walk too (P h0 is not the
        // sequential recurrence's arithmetic on inf). Every invocation of
        // the lane reads the same h0 and aggregates, so all agree.
        seq = seq || !h0_finite;
        if (seq) {
            if (r.j != 0u) {
                return;
            }
            r.t0 = 0u;
            r.t1 = pc.T;
        } else {
            float hn[K];
            for (uint k = 0u; k < r.j; k++) {
                uint sl = agg_slot(r, k);
                for (uint i = 0u; i < K; i++) {
                    float acc = sh_S[sl * SSTRIDE + i];
                    for (uint m = 0u; m < K; m++) {
                        acc += sh_P[sl * PSTRIDE + i * K + m] * h[m];
                    }
                    hn[i] = acc;
                }
                for (uint i = 0u; i < K; i++) {
                    h[i] = hn[i];
                }
            }
        }
    }
    for (uint t0 = r.t0; t0 < r.t1; t0 += P) {
        float th[P * K]; // K - 1 used per step
        float sg[P * K];
        float xx[P * K];
        for (uint p = 0u; p < P; p++) {
            if (t0 + p < r.t1) {
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
            if (t0 + p >= r.t1) {
                break;
            }
            for (uint q = 0u; q < K / 2u; q++) {
                float a = th[p * (K - 1u) + q];
                vec2 sc = sincos_reduced(a);
                float c = sc.y, sn = sc.x;
                uint i = 2u * q;
                float xi = h[i], xj = h[i + 1u];
                h[i] = c * xi - sn * xj;
                h[i + 1u] = sn * xi + c * xj;
            }
            for (uint q = 0u; q < (K - 1u) / 2u; q++) {
                float a = th[p * (K - 1u) + K / 2u + q];
                vec2 sc = sincos_reduced(a);
                float c = sc.y, sn = sc.x;
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
