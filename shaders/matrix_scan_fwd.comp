#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// matrix_scan forward: h_t = A_t h_{t-1} + b_t per 2x2 block, h_{-1} = h0
// or 0. The layout is the elementwise kernels' (chunks.glsl) with a block
// for a channel: a workgroup owns a batch entry and a tile of TILE
// contiguous blocks, so neighbouring invocations read neighbouring blocks,
// and each invocation holds 8 steps of its block (A and b) in registers.
// A chunk's map is h -> P h + S (P 2x2, S a 2-vector).
#define STEPS 8u
#define CUSTOM_AGGREGATES
#include "common.glsl"
#include "chunks.glsl"

IN_BUFFER(0, A_)
IN_BUFFER(1, X_)
IN_BUFFER(2, H0_)
OUT_BUFFER(3, H_)

// Chunk aggregates: P row-major, then S.
shared float sh_agg[6u * WG];

bool finite(float x) {
    return !isnan(x) && !isinf(x);
}

void main() {
    Lane l = lane_of_invocation();
    uint bn = l.b * pc.T * pc.N + l.d; // block (b, 0, n)
    float c0 = 0.0, c1 = 0.0;          // h before the segment
    if (l.live && HAS_INIT) {
        c0 = LD(H0_, pc.off[2] + (l.b * pc.N + l.d) * 2u);
        c1 = LD(H0_, pc.off[2] + (l.b * pc.N + l.d) * 2u + 1u);
    }
    uint nseg = segments();
    for (uint sg = 0u; sg < nseg; sg++) {
        uint t0 = (sg * CHUNKS + l.j) * L;
        float ra[4u * L];
        float rx[2u * L];
        [[unroll]] for (uint s = 0u; s < L; s++) {
            ra[4u * s] = 1.0;
            ra[4u * s + 1u] = 0.0;
            ra[4u * s + 2u] = 0.0;
            ra[4u * s + 3u] = 1.0;
            rx[2u * s] = 0.0;
            rx[2u * s + 1u] = 0.0;
            if (l.live && t0 + s < pc.T) {
                uint blk = bn + (t0 + s) * pc.N;
                uint ai = pc.off[0] + blk * 4u;
                ra[4u * s] = LD(A_, ai);
                ra[4u * s + 1u] = LD(A_, ai + 1u);
                ra[4u * s + 2u] = LD(A_, ai + 2u);
                ra[4u * s + 3u] = LD(A_, ai + 3u);
                rx[2u * s] = LD(X_, pc.off[1] + blk * 2u);
                rx[2u * s + 1u] = LD(X_, pc.off[1] + blk * 2u + 1u);
            }
        }
        float h0 = c0, h1 = c1;
        bool seq = false;
        if (CHUNKS > 1u) {
            // The chunk's map from a zero carry: P = A_last ... A_first.
            float p00 = 1.0, p01 = 0.0, p10 = 0.0, p11 = 1.0, s0 = 0.0, s1 = 0.0;
            [[unroll]] for (uint s = 0u; s < L; s++) {
                float a00 = ra[4u * s], a01 = ra[4u * s + 1u], a10 = ra[4u * s + 2u], a11 = ra[4u * s + 3u];
                float n00 = a00 * p00 + a01 * p10, n01 = a00 * p01 + a01 * p11;
                float n10 = a10 * p00 + a11 * p10, n11 = a10 * p01 + a11 * p11;
                p00 = n00; p01 = n01; p10 = n10; p11 = n11;
                float m0 = a00 * s0 + a01 * s1 + rx[2u * s];
                float m1 = a10 * s0 + a11 * s1 + rx[2u * s + 1u];
                s0 = m0; s1 = m1;
            }
            uint me = 6u * gl_LocalInvocationID.x;
            sh_agg[me] = p00;
            sh_agg[me + 1u] = p01;
            sh_agg[me + 2u] = p10;
            sh_agg[me + 3u] = p11;
            sh_agg[me + 4u] = s0;
            sh_agg[me + 5u] = s1;
            barrier();
            float x0 = c0, x1 = c1;
            bool ok = true;
            for (uint k = 0u; k < CHUNKS; k++) {
                uint o = 6u * (k * TILE + l.c);
                float q00 = sh_agg[o], q01 = sh_agg[o + 1u], q10 = sh_agg[o + 2u], q11 = sh_agg[o + 3u];
                float q0 = sh_agg[o + 4u], q1 = sh_agg[o + 5u];
                ok = ok && finite(q00) && finite(q01) && finite(q10) && finite(q11) && finite(q0) && finite(q1);
                if (k == l.j) {
                    h0 = x0;
                    h1 = x1;
                }
                float y0 = q00 * x0 + q01 * x1 + q0;
                float y1 = q10 * x0 + q11 * x1 + q1;
                x0 = y0;
                x1 = y1;
            }
            barrier();
            if (ok) {
                c0 = x0;
                c1 = x1;
            } else {
                seq = true;
            }
        }
        if (seq) {
            // Sequential walk of the whole segment from its carry.
            uint s0 = sg * CHUNKS * L;
            uint s1 = min(s0 + CHUNKS * L, pc.T);
            float y0 = c0, y1 = c1;
            for (uint t = s0; l.live && t < s1; t++) {
                uint blk = bn + t * pc.N;
                uint ai = pc.off[0] + blk * 4u;
                uint xi = pc.off[1] + blk * 2u;
                float n0 = LD(A_, ai) * y0 + LD(A_, ai + 1u) * y1 + LD(X_, xi);
                float n1 = LD(A_, ai + 2u) * y0 + LD(A_, ai + 3u) * y1 + LD(X_, xi + 1u);
                y0 = n0;
                y1 = n1;
                if (t >= t0 && t < t0 + L) {
                    ST2(H_, pc.off[3] + blk * 2u, y0, y1);
                }
            }
            c0 = y0;
            c1 = y1;
            continue;
        }
        [[unroll]] for (uint s = 0u; s < L; s++) {
            float n0 = ra[4u * s] * h0 + ra[4u * s + 1u] * h1 + rx[2u * s];
            float n1 = ra[4u * s + 2u] * h0 + ra[4u * s + 3u] * h1 + rx[2u * s + 1u];
            h0 = n0;
            h1 = n1;
            if (l.live && t0 + s < pc.T) {
                uint blk = bn + (t0 + s) * pc.N;
                ST2(H_, pc.off[3] + blk * 2u, h0, h1);
            }
        }
        if (CHUNKS == 1u) {
            c0 = h0;
            c1 = h1;
        }
    }
}
