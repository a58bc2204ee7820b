#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// matrix_scan backward, one reverse scan per 2x2 block:
//   G_t = dh_t + A_{t+1}^T G_{t+1},  db_t = G_t,  dA_t = G_t h_{t-1}^T,
//   dh0 = A_0^T G_0   (h_{-1} = h0 or 0).
// u_t = A_{t+1}^T G_{t+1} is the carry into step t from the right; a
// chunk's map, walking right to left, is u -> P u + q. The layout is the
// forward's (chunks.glsl with a block for a channel, the steps of A and dh
// held raw in registers: 8 for f32, 16 for 16-bit types), segments walked
// from the last; a step past T is (A = I, dh = 0): the identity.
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
IN_BUFFER(1, H0_)
IN_BUFFER(2, H_)
IN_BUFFER(3, dH_)
OUT_BUFFER(4, dA_)
OUT_BUFFER(5, dX_)
OUT_BUFFER(6, dH0_)

// Chunk aggregates: P row-major, then q.
shared float sh_agg[6u * WG];

bool finite(float x) {
    return abs(x) < POS_INF;
}

// Loads h_{t-1} of block blk = (b, t, n) into r[o...] (zero if t = 0
// without an initial state).
#define LD_HPREV(r, o, l, blk, t)                                       \
    {                                                                   \
        SET_0(r, o);                                                    \
        if ((t) > 0u) {                                                 \
            LD_V(r, o, H_, pc.off[2] + ((blk) - pc.N) * 2u);            \
        } else if (HAS_INIT) {                                          \
            LD_V(r, o, H0_, pc.off[1] + ((l).b * pc.N + (l).d) * 2u);   \
        }                                                               \
    }

// Writes step t's gradients (g = G_t, hp = h_{t-1}) of a live block.
void store_step(uint blk, float g0, float g1, vec2 hp) {
    float hp0 = hp.x, hp1 = hp.y;
    ST2(dX_, pc.off[5] + blk * 2u, g0, g1);
    ST2(dA_, pc.off[4] + blk * 4u, g0 * hp0, g0 * hp1);
    ST2(dA_, pc.off[4] + blk * 4u + 2u, g1 * hp0, g1 * hp1);
}

void main() {
    Lane l = lane_of_invocation();
    uint bn = l.b * pc.T * pc.N + l.d; // block (b, 0, n)
    float c0 = 0.0, c1 = 0.0;          // u flowing into the segment's last step
    uint nseg = segments();
    for (uint sg = nseg; sg > 0u; sg--) {
        uint t0 = ((sg - 1u) * CHUNKS + l.j) * L;
        // h_{t-1} is loaded with the inputs, not at its store: a load after a
        // store that may alias it waits for it, which would cost a memory
        // round trip per step.
        RAW ra[AW * L];
        RAW rd[VW * L];
        RAW rh[VW * L];
        [[unroll]] for (uint s = 0u; s < L; s++) {
            SET_I(ra, AW * s);
            SET_0(rd, VW * s);
            SET_0(rh, VW * s);
            if (l.live && t0 + s < pc.T) {
                uint blk = bn + (t0 + s) * pc.N;
                LD_A(ra, AW * s, A_, pc.off[0] + blk * 4u);
                LD_V(rd, VW * s, dH_, pc.off[3] + blk * 2u);
                LD_HPREV(rh, VW * s, l, blk, t0 + s);
            }
        }
        float u0 = c0, u1 = c1;
        bool seq = false;
        if (CHUNKS > 1u) {
            // The chunk's map from a zero carry: P = A_first^T ... A_last^T.
            float p00 = 1.0, p01 = 0.0, p10 = 0.0, p11 = 1.0, q0 = 0.0, q1 = 0.0;
            [[unroll]] for (uint s = L; s > 0u; s--) {
                vec4 a = A_OF(ra, AW * (s - 1u));
                vec2 d = V_OF(rd, VW * (s - 1u));
                float a00 = a.x, a01 = a.y, a10 = a.z, a11 = a.w;
                float n00 = a00 * p00 + a10 * p10, n01 = a00 * p01 + a10 * p11;
                float n10 = a01 * p00 + a11 * p10, n11 = a01 * p01 + a11 * p11;
                p00 = n00; p01 = n01; p10 = n10; p11 = n11;
                float g0 = d.x + q0, g1 = d.y + q1;
                q0 = a00 * g0 + a10 * g1;
                q1 = a01 * g0 + a11 * g1;
            }
            uint me = 6u * gl_LocalInvocationID.x;
            sh_agg[me] = p00;
            sh_agg[me + 1u] = p01;
            sh_agg[me + 2u] = p10;
            sh_agg[me + 3u] = p11;
            sh_agg[me + 4u] = q0;
            sh_agg[me + 5u] = q1;
            barrier();
            float x0 = c0, x1 = c1;
            bool ok = true;
            for (uint k = CHUNKS; k > 0u; k--) {
                uint o = 6u * ((k - 1u) * TILE + l.c);
                float m00 = sh_agg[o], m01 = sh_agg[o + 1u], m10 = sh_agg[o + 2u], m11 = sh_agg[o + 3u];
                float r0 = sh_agg[o + 4u], r1 = sh_agg[o + 5u];
                ok = ok && finite(m00) && finite(m01) && finite(m10) && finite(m11) && finite(r0) && finite(r1)
                    && finite(x0) && finite(x1);
                if (k - 1u == l.j) {
                    u0 = x0;
                    u1 = x1;
                }
                float y0 = m00 * x0 + m01 * x1 + r0;
                float y1 = m10 * x0 + m11 * x1 + r1;
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
            uint s0 = (sg - 1u) * CHUNKS * L;
            uint s1 = min(s0 + CHUNKS * L, pc.T);
            float y0 = c0, y1 = c1;
            for (uint t = s1; l.live && t > s0; t--) {
                uint blk = bn + (t - 1u) * pc.N;
                uint ai = pc.off[0] + blk * 4u;
                float g0 = LD(dH_, pc.off[3] + blk * 2u) + y0;
                float g1 = LD(dH_, pc.off[3] + blk * 2u + 1u) + y1;
                if (t - 1u >= t0 && t - 1u < t0 + L) {
                    RAW wh[VW];
                    LD_HPREV(wh, 0u, l, blk, t - 1u);
                    store_step(blk, g0, g1, V_OF(wh, 0u));
                }
                y0 = LD(A_, ai) * g0 + LD(A_, ai + 2u) * g1;
                y1 = LD(A_, ai + 1u) * g0 + LD(A_, ai + 3u) * g1;
            }
            c0 = y0;
            c1 = y1;
            continue;
        }
        [[unroll]] for (uint s = L; s > 0u; s--) {
            vec4 a = A_OF(ra, AW * (s - 1u));
            vec2 d = V_OF(rd, VW * (s - 1u));
            float g0 = d.x + u0, g1 = d.y + u1;
            uint t = t0 + s - 1u;
            if (l.live && t < pc.T) {
                store_step(bn + t * pc.N, g0, g1, V_OF(rh, VW * (s - 1u)));
            }
            u0 = a.x * g0 + a.z * g1;
            u1 = a.y * g0 + a.w * g1;
        }
        if (CHUNKS == 1u) {
            c0 = u0;
            c1 = u1;
        }
    }
    // c is now A_0^T G_0, alike in every invocation of the block.
    if (l.live && l.j == 0u && HAS_INIT) {
        ST2(dH0_, pc.off[6] + (l.b * pc.N + l.d) * 2u, c0, c1);
    }
}
