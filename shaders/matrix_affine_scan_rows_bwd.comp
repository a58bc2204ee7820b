#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// matrix_affine_scan backward in the row layout (see affine_rows.glsl), one
// reverse walk over T:
//   G_t = dH_t + A_{t+1}^T G_{t+1},  dX_t = G_t,  dH0 = A_0^T G_0,
//   dA_t = G_t H_{t-1}^T (H_{-1} = H0 or 0).
// Invocation (r, i) owns row i of G_t and of the carry u = A_{t+1}^T G_{t+1}
// (v floats each). Each step it reads row i of A_t (k elements), of dH_t
// and of H_{t-1} (v each), publishes its rows of G_t and A_t in shared
// memory and, after one barrier, forms row i of the next carry,
//   u[i][:] = sum over m of A_t[m][i] G_t[m][:],
// reading the whole of G_t, one row m at a time. With f32 elements the
// same rows of G_t give column i of dA_t against the invocation's own row
// of H_{t-1}:
//   dA_t[m][i] = sum over j of G_t[m][j] H_{t-1}[i][j],
// so dA costs no shared-memory reads of its own (and H_{t-1} is not
// published). A 16-bit column would split 32-bit words between
// invocations, so there the invocation publishes its row of H_{t-1} too
// and forms row i of dA_t from the lane's H_{t-1},
//   dA_t[i][l] = sum over j of G_t[i][j] H_{t-1}[l][j],
// storing whole words. Every sum runs from 0 in ascending index order, as
// in the column layout, so both forms give the same values. dA is formed
// in the same pass (no second dispatch, no f32 copy of G).
#include "common.glsl"
#include "affine_rows.glsl"

IN_BUFFER(0, A_)
IN_BUFFER(1, H0_)
IN_BUFFER(2, H_)
IN_BUFFER(3, dH_)
OUT_BUFFER(4, dA_)
OUT_BUFFER(5, dX_)
OUT_BUFFER(6, dH0_)
IN_BUFFER4(0, A4_)
IN_BUFFER4(1, H04_)
IN_BUFFER4(2, H4_)
IN_BUFFER4(3, dH4_)
OUT_BUFFER4(4, dA4_)
OUT_BUFFER4(5, dX4_)
OUT_BUFFER4(6, dH04_)

// DA_COLUMN: dA_t by columns, from G_t's rows and the invocation's own row
// of H_{t-1} (f32); otherwise by rows, from the lane's H_{t-1} in sh_P.
#if defined(DT_F32)
#define DA_COLUMN 1
#else
#define DA_COLUMN 0
#endif

// Per buffer (t & 1), in column planes (affine_rows.glsl): G_t (and, for
// rows of dA, H_{t-1}) as [V][R*K], A_t as [K][R*K] with planes of AP
// words.
shared float sh_G[2u * WG * V];
#if !DA_COLUMN
shared float sh_P[2u * WG * V];
#endif
shared float sh_A[2u * K * AP];

void main() {
    Row w = row_of_invocation();
    uint lid = gl_LocalInvocationID.x;
    uint init = pc.off[1] + (w.lane * K + w.i) * V;  // row i of H0

    float u[V];
    [[unroll]] for (uint j = 0u; j < V; j++) {
        u[j] = 0.0;
    }

    // The ring: row i of A_t, dH_t and H_{t-1} for the next RING steps,
    // the s-th step from the end (t = T-1-s) in slot s % RING.
    WORD pa[RING * WA];
    WORD pd[RING * WX];
    WORD ph[RING * WX];
    [[unroll]] for (uint q = 0u; q < RING; q++) {
        if (q < pc.T) {
            uint t = pc.T - 1u - q;
            uint blk = w.blk0 + t * pc.N;
            LD_ROW(pa, q * WA, A_, A4_, pc.off[0] + (blk * K + w.i) * K, WA);
            LD_ROW(pd, q * WX, dH_, dH4_, pc.off[3] + (blk * K + w.i) * V, WX);
            if (t > 0u) {
                LD_ROW(ph, q * WX, H_, H4_, pc.off[2] + ((blk - pc.N) * K + w.i) * V, WX);
            } else if (HAS_INIT) {
                LD_ROW(ph, q * WX, H0_, H04_, init, WX);
            } else {
                [[unroll]] for (uint j = 0u; j < WX; j++) {
                    ph[q * WX + j] = ZERO_WORD;
                }
            }
        }
    }

    uint lane = w.r * K;  // row 0 of the lane in a plane
    for (uint s0 = 0u; s0 < pc.T; s0 += RING) {
        [[unroll]] for (uint q = 0u; q < RING; q++) {
            uint s = s0 + q;
            if (s < pc.T) {  // uniform: T is the same for every invocation
                uint t = pc.T - 1u - s;
                uint bv = (t & 1u) * WG * V;
                uint bk = (t & 1u) * K * AP;
                float g[V];
                float p[V];
                float a[K];
                WIDEN_ROW(g, pd, q * WX, WX);
                WIDEN_ROW(p, ph, q * WX, WX);
                WIDEN_ROW(a, pa, q * WA, WA);
                [[unroll]] for (uint j = 0u; j < V; j++) {
                    g[j] += u[j];
                    sh_G[bv + j * WG + lid] = g[j];
#if !DA_COLUMN
                    sh_P[bv + j * WG + lid] = p[j];
#endif
                }
                [[unroll]] for (uint l = 0u; l < K; l++) {
                    sh_A[bk + l * AP + lid] = a[l];
                }
                uint blk = w.blk0 + t * pc.N;
                if (w.live) {
                    ST_ROW(dX_, dX4_, pc.off[5] + (blk * K + w.i) * V, g, WX);
                }
                barrier();
#if DA_COLUMN
                // Row m of G_t serves both sums: the carry's and element
                // (m, i) of dA_t.
                float da[K];  // column i of dA_t
                [[unroll]] for (uint j = 0u; j < V; j++) {
                    u[j] = 0.0;
                }
                [[unroll]] for (uint m = 0u; m < K; m++) {
                    float am = sh_A[bk + w.i * AP + lane + m];
                    float acc = 0.0;
                    [[unroll]] for (uint j = 0u; j < V; j++) {
                        float gm = sh_G[bv + j * WG + lane + m];
                        u[j] += am * gm;
                        acc += gm * p[j];
                    }
                    da[m] = acc;
                }
                if (w.live) {
                    uint e = pc.off[4] + blk * K * K + w.i;
                    [[unroll]] for (uint m = 0u; m < K; m++) {
                        dA_[e + m * K] = da[m];
                    }
                }
#else
                float da[K];
                [[unroll]] for (uint l = 0u; l < K; l++) {
                    float acc = 0.0;
                    [[unroll]] for (uint j = 0u; j < V; j++) {
                        acc += g[j] * sh_P[bv + j * WG + lane + l];
                    }
                    da[l] = acc;
                }
                if (w.live) {
                    ST_ROW(dA_, dA4_, pc.off[4] + (blk * K + w.i) * K, da, WA);
                }
                [[unroll]] for (uint j = 0u; j < V; j++) {
                    u[j] = 0.0;
                }
                [[unroll]] for (uint m = 0u; m < K; m++) {
                    float am = sh_A[bk + w.i * AP + lane + m];
                    [[unroll]] for (uint j = 0u; j < V; j++) {
                        u[j] += am * sh_G[bv + j * WG + lane + m];
                    }
                }
#endif
                if (s + RING < pc.T) {
                    uint tn = t - RING;
                    uint nb = w.blk0 + tn * pc.N;
                    LD_ROW(pa, q * WA, A_, A4_, pc.off[0] + (nb * K + w.i) * K, WA);
                    LD_ROW(pd, q * WX, dH_, dH4_, pc.off[3] + (nb * K + w.i) * V, WX);
                    if (tn > 0u) {
                        LD_ROW(ph, q * WX, H_, H4_, pc.off[2] + ((nb - pc.N) * K + w.i) * V, WX);
                    } else if (HAS_INIT) {
                        LD_ROW(ph, q * WX, H0_, H04_, init, WX);
                    } else {
                        [[unroll]] for (uint j = 0u; j < WX; j++) {
                            ph[q * WX + j] = ZERO_WORD;
                        }
                    }
                }
            }
        }
    }
    if (HAS_INIT && w.live) {
        ST_ROW(dH0_, dH04_, pc.off[6] + (w.lane * K + w.i) * V, u, WX);
    }
}
