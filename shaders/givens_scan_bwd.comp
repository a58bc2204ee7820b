#version 450
#extension GL_GOOGLE_include_directive : require
// givens_scan backward, a reverse scan per block (see givens.glsl):
//   G_t = dh_t + A_{t+1}^T G_{t+1},  dx_t = G_t,
//   y = R(theta_t) h_{t-1} rebuilt in registers from the stored forward
//   output (never by dividing by sigma), dsigma_t = G_t * y,
//   dtheta_t by walking the rotations backwards with gradient sigma_t * G_t,
//   dh0 = A_0^T G_0.
// For a rotation with outputs (y_i, y_j) and output gradients (g_i, g_j):
//   dth = y_i g_j - y_j g_i,  input gradients (c g_i + s g_j, c g_j - s g_i).
// The carry of the reverse scan is u = A_{t+1}^T G_{t+1}. Chunked, pass 1
// walks a chunk [t0, t1) backwards from u = 0, which gives its aggregate
// map u(t1) -> u(t0) = P u(t1) + S (P = A_{t0}^T ... A_{t1-1}^T, applied
// to the columns of the identity alongside S; only theta, sigma and dh are
// read), and each invocation folds the aggregates of the chunks after its
// own into its carry before the rescan. The rescan loads the inputs of P
// steps into registers before it uses them, so that P steps' loads are in
// flight at once.
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

// Steps loaded ahead by the rescan: about 128 registers of inputs
// unchunked, half that chunked (2 steps at k = 8).
const uint P = (32u / K) >> CHUNKED;
// Steps loaded ahead by pass 1 (4 at k = 8), besides the 72 registers of
// P and S.
const uint P1 = 32u / K;

void main() {
    Blk r = block_of_invocation();
    float u[K];     // A_{t+1}^T G_{t+1}
    for (uint i = 0u; i < K; i++) {
        u[i] = 0.0;
    }
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
            // Groups of P1 steps from the end: group [te - P1, te).
            for (uint te = r.t1; te > r.t0; te = (te - r.t0 > P1) ? te - P1 : r.t0) {
                float th[P1 * K]; // K - 1 used per step
                float sg[P1 * K];
                float dd[P1 * K];
                for (uint p = 0u; p < P1; p++) {
                    if (p < te - r.t0) {
                        uint s = step_index(r, te - 1u - p);
                        for (uint q = 0u; q < K - 1u; q++) {
                            th[p * K + q] = LD(theta_, pc.off[0] + s * (K - 1u) + q);
                        }
                        for (uint i = 0u; i < K; i++) {
                            sg[p * K + i] = LD(sigma_, pc.off[1] + s * K + i);
                            dd[p * K + i] = LD(dh_, pc.off[4] + s * K + i);
                        }
                    }
                }
                for (uint p = 0u; p < P1; p++) {
                    if (p >= te - r.t0) {
                        break;
                    }
                    for (uint i = 0u; i < K; i++) {
                        for (uint m = 0u; m < K; m++) {
                            v[m * K + i] *= sg[p * K + i];
                        }
                        v[K * K + i] = sg[p * K + i] * (v[K * K + i] + dd[p * K + i]);
                    }
                    // R^T: the second layer's rotations transposed, then
                    // the first layer's.
                    for (uint q = 0u; q < (K - 1u) / 2u; q++) {
                        float a = th[p * K + K / 2u + q];
                        vec2 sc = sincos_reduced(a);
                        float c = sc.y, sn = sc.x;
                        uint i = 2u * q + 1u;
                        for (uint m = 0u; m <= K; m++) {
                            float gi = v[m * K + i], gj = v[m * K + i + 1u];
                            v[m * K + i] = c * gi + sn * gj;
                            v[m * K + i + 1u] = c * gj - sn * gi;
                        }
                    }
                    for (uint q = 0u; q < K / 2u; q++) {
                        float a = th[p * K + q];
                        vec2 sc = sincos_reduced(a);
                        float c = sc.y, sn = sc.x;
                        uint i = 2u * q;
                        for (uint m = 0u; m <= K; m++) {
                            float gi = v[m * K + i], gj = v[m * K + i + 1u];
                            v[m * K + i] = c * gi + sn * gj;
                            v[m * K + i + 1u] = c * gj - sn * gi;
                        }
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
        if (!aggregates_finite(r)) {
            // The sequential walk by the chunk-0 invocation.
            r.live = r.live && r.j == 0u;
            r.t0 = 0u;
            r.t1 = pc.T;
        } else {
            float un[K];
            for (uint k = CHUNKS - 1u; k > r.j; k--) {
                uint sl = agg_slot(r, k);
                for (uint i = 0u; i < K; i++) {
                    float acc = sh_S[sl * SSTRIDE + i];
                    for (uint m = 0u; m < K; m++) {
                        acc += sh_P[sl * PSTRIDE + i * K + m] * u[m];
                    }
                    un[i] = acc;
                }
                for (uint i = 0u; i < K; i++) {
                    u[i] = un[i];
                }
            }
        }
    }
    if (!r.live) {
        return;
    }
    float y[K];     // rotated state
    float gy[K];    // gradient flowing back through the rotations
    float cs[K];    // cos of each angle (K-1 used)
    float sn[K];    // sin of each angle
    float ymid[K];  // state after the first layer
    float dth[K];   // dtheta of the step (K-1 used)
    // Steps are walked in groups of P from the end: group [te - P, te).
    for (uint te = r.t1; te > r.t0; te = (te - r.t0 > P) ? te - P : r.t0) {
        float th[P * K]; // K - 1 used per step
        float sg[P * K];
        float dd[P * K];
        float hp[P * K];
        for (uint p = 0u; p < P; p++) {
            if (p < te - r.t0) {
                uint t = te - 1u - p;
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
                        hp[p * K + i] = LD(h0_, pc.off[2] + init_index(r) + i);
                    } else {
                        hp[p * K + i] = 0.0;
                    }
                }
            }
        }
        for (uint p = 0u; p < P; p++) {
            if (p >= te - r.t0) {
                break;
            }
            uint t = te - 1u - p;
            uint s = step_index(r, t);
            // Rebuild y = R(theta_t) h_{t-1}.
            for (uint i = 0u; i < K; i++) {
                y[i] = hp[p * K + i];
            }
            for (uint q = 0u; q < K / 2u; q++) {
                float a = th[p * K + q];
                vec2 sc = sincos_reduced(a);
                cs[q] = sc.y;
                sn[q] = sc.x;
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
                vec2 sc = sincos_reduced(a);
                cs[pq] = sc.y;
                sn[pq] = sc.x;
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
                dth[pq] = y[i] * gj - y[i + 1u] * gi;
                gy[i] = cs[pq] * gi + sn[pq] * gj;
                gy[i + 1u] = cs[pq] * gj - sn[pq] * gi;
            }
            for (uint q = 0u; q < K / 2u; q++) {
                uint i = 2u * q;
                float gi = gy[i], gj = gy[i + 1u];
                dth[q] = ymid[i] * gj - ymid[i + 1u] * gi;
                gy[i] = cs[q] * gi + sn[q] * gj;
                gy[i + 1u] = cs[q] * gj - sn[q] * gi;
            }
            // The K - 1 angles of a step start at an even or odd element:
            // the aligned pairs go out as whole words (16-bit), the one
            // element sharing a word with the neighbouring block by ST.
            uint e = pc.off[5] + s * (K - 1u);
            uint q0 = e & 1u;
            if (q0 != 0u) {
                ST(dtheta_, e, dth[0]);
            }
            for (uint q = q0; q + 1u < K - 1u; q += 2u) {
                ST2(dtheta_, e + q, dth[q], dth[q + 1u]);
            }
            if (q0 == 0u) {
                ST(dtheta_, e + K - 2u, dth[K - 2u]);
            }
            for (uint i = 0u; i < K; i++) {
                u[i] = gy[i];
            }
        }
    }
    if (HAS_INIT && r.j == 0u) {
        for (uint i = 0u; i < K; i += 2u) {
            ST2(dh0_, pc.off[8] + init_index(r) + i, u[i], u[i + 1u]);
        }
    }
}
