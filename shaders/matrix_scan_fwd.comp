#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// matrix_scan forward: h_t = A_t h_{t-1} + b_t per 2x2 block, h_{-1} = h0
// or 0. The layout is the elementwise kernels' (chunks.glsl) with a block
// for a channel: a workgroup owns a batch entry and a tile of TILE
// contiguous blocks, so neighbouring invocations read neighbouring blocks,
// and each invocation holds the steps of its block (A and b) raw in
// registers: 8 steps of 6 floats for f32, 16 steps of 3 words for 16-bit
// types (same registers and bytes in flight). A chunk's map is h -> P h + S
// (P 2x2, S a 2-vector).
#if defined(DT_F32)
#define STEPS 8u
#else
#define STEPS 16u
#endif
#define BLOCK_UNITS
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
    return abs(x) < POS_INF;
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
        RAW ra[AW * L];
        RAW rx[VW * L];
        [[unroll]] for (uint s = 0u; s < L; s++) {
            SET_I(ra, AW * s);
            SET_0(rx, VW * s);
            if (l.live && t0 + s < pc.T) {
                uint blk = bn + (t0 + s) * pc.N;
                LD_A(ra, AW * s, A_, pc.off[0] + blk * 4u);
                LD_V(rx, VW * s, X_, pc.off[1] + blk * 2u);
            }
        }
        float h0 = c0, h1 = c1;
        bool seq = false;
        if (CHUNKS > 1u) {
            // The chunk's map from a zero carry: P = A_last ... A_first.
            float p00 = 1.0, p01 = 0.0, p10 = 0.0, p11 = 1.0, s0 = 0.0, s1 = 0.0;
            [[unroll]] for (uint s = 0u; s < L; s++) {
                vec4 a = A_OF(ra, AW * s);
                vec2 x = V_OF(rx, VW * s);
                float a00 = a.x, a01 = a.y, a10 = a.z, a11 = a.w;
                float n00 = a00 * p00 + a01 * p10, n01 = a00 * p01 + a01 * p11;
                float n10 = a10 * p00 + a11 * p10, n11 = a10 * p01 + a11 * p11;
                p00 = n00; p01 = n01; p10 = n10; p11 = n11;
                float m0 = a00 * s0 + a01 * s1 + x.x;
                float m1 = a10 * s0 + a11 * s1 + x.y;
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
                ok = ok && finite(q00) && finite(q01) && finite(q10) && finite(q11) && finite(q0) && finite(q1)
                    && finite(x0) && finite(x1);
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
            vec4 a = A_OF(ra, AW * s);
            vec2 x = V_OF(rx, VW * s);
            float n0 = a.x * h0 + a.y * h1 + x.x;
            float n1 = a.z * h0 + a.w * h1 + x.y;
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
