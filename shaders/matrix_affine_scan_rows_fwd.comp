#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// matrix_affine_scan forward in the row layout (see affine_rows.glsl):
// H_t = A_t H_{t-1} + X_t, H_{-1} = H0 or 0. Invocation (r, i) reads row
// i of A_t (k elements) and of X_t (v), takes the rows of H_{t-1} from
// shared memory and forms row i of H_t,
//   H_t[i][j] = X_t[i][j] + sum over l = 0..k-1 of A_t[i][l] H_{t-1}[l][j],
// summed in that order (the column layout's).
#include "common.glsl"
#include "affine_rows.glsl"

IN_BUFFER(0, A_)
IN_BUFFER(1, X_)
IN_BUFFER(2, H0_)
OUT_BUFFER(3, H_)
IN_BUFFER4(0, A4_)
IN_BUFFER4(1, X4_)
IN_BUFFER4(2, H04_)
OUT_BUFFER4(3, H4_)

// H_{t-1} of the workgroup's lanes in column planes (affine_rows.glsl):
// [2][V][R*K], buffer t & 1.
shared float sh_H[2u * WG * V];

void main() {
    Row w = row_of_invocation();
    uint lid = gl_LocalInvocationID.x;

    float h[V];
    if (HAS_INIT) {
        WORD h0[WX];
        LD_ROW(h0, 0u, H0_, H04_, pc.off[2] + (w.lane * K + w.i) * V, WX);
        WIDEN_ROW(h, h0, 0u, WX);
    } else {
        [[unroll]] for (uint j = 0u; j < V; j++) {
            h[j] = 0.0;
        }
    }

    // The ring: row i of A_t and X_t for the next RING steps, step t in
    // slot t % RING.
    WORD pa[RING * WA];
    WORD px[RING * WX];
    [[unroll]] for (uint u = 0u; u < RING; u++) {
        if (u < pc.T) {
            uint blk = w.blk0 + u * pc.N;
            LD_ROW(pa, u * WA, A_, A4_, pc.off[0] + (blk * K + w.i) * K, WA);
            LD_ROW(px, u * WX, X_, X4_, pc.off[1] + (blk * K + w.i) * V, WX);
        }
    }

    uint lane = w.r * K;  // row 0 of the lane in a plane
    for (uint t0 = 0u; t0 < pc.T; t0 += RING) {
        [[unroll]] for (uint u = 0u; u < RING; u++) {
            uint t = t0 + u;
            if (t < pc.T) {  // uniform: T is the same for every invocation
                uint buf = (t & 1u) * WG * V;
                [[unroll]] for (uint j = 0u; j < V; j++) {
                    sh_H[buf + j * WG + lid] = h[j];
                }
                barrier();
                float a[K];
                WIDEN_ROW(a, pa, u * WA, WA);
                WIDEN_ROW(h, px, u * WX, WX);
                [[unroll]] for (uint l = 0u; l < K; l++) {
                    [[unroll]] for (uint j = 0u; j < V; j++) {
                        h[j] += a[l] * sh_H[buf + j * WG + lane + l];
                    }
                }
                uint blk = w.blk0 + t * pc.N;
                if (w.live) {
                    ST_ROW(H_, H4_, pc.off[3] + (blk * K + w.i) * V, h, WX);
                }
                if (t + RING < pc.T) {
                    uint nb = blk + RING * pc.N;
                    LD_ROW(pa, u * WA, A_, A4_, pc.off[0] + (nb * K + w.i) * K, WA);
                    LD_ROW(px, u * WX, X_, X4_, pc.off[1] + (nb * K + w.i) * V, WX);
                }
            }
        }
    }
}
