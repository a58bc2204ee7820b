// Body of the block backward kernel; included by
// matrix_affine_scan_bwd.comp. One reverse scan per column (see affine.glsl):
//   G_t = dH_t + A_{t+1}^T G_{t+1},  dX_t = G_t,  dH0 = A_0^T G_0,
//   dA_t = G_t H_{t-1}^T = sum over columns c of G_t[:,c] H_{t-1}[:,c]^T.
// With V = 1 a column is the whole block and dA is written in the same pass
// (PHASE 0). With V > 1, dA sums over columns held by different
// invocations, so a second dispatch (PHASE 1, one invocation per element of
// dA) computes it from G, read back in f32 (from dX for f32 tensors, from
// an f32 scratch buffer written when WRITE_G32 is set for 16-bit tensors).

layout(constant_id = 5) const uint PHASE = 0;
layout(constant_id = 6) const bool WRITE_G32 = false;

IN_BUFFER(0, A_)
IN_BUFFER(1, H0_)
IN_BUFFER(2, H_)
IN_BUFFER(3, dH_)
OUT_BUFFER(4, dA_)
OUT_BUFFER(5, dX_)
OUT_BUFFER(6, dH0_)
layout(std430, set = 0, binding = 7) buffer BufG32 { float G32_[]; };

// at_mul sets o = A^T g for the kxk block of A at element ai; each o[m]
// sums over i from 0 in ascending order. A is read row by row (A_ROW).
void at_mul(uint ai, float g[K], out float o[K]) {
    for (uint m = 0u; m < K; m++) {
        o[m] = 0.0;
    }
    for (uint i = 0u; i < K; i++) {
        float row[K];
        A_ROW(row, ai + i * K);
        for (uint m = 0u; m < K; m++) {
            o[m] += row[m] * g[i];
        }
    }
}

// AT_MUL_COLS(ai, g, o) is at_mul for each of the invocation's columns (g
// and o of KC floats), each row of A read once for all of them.
#define AT_MUL_COLS(ai, g, o)                                           \
    {                                                                   \
        uint atm_ai_ = (ai);                                            \
        for (uint e_ = 0u; e_ < KC; e_++) {                             \
            o[e_] = 0.0;                                                \
        }                                                               \
        for (uint i_ = 0u; i_ < K; i_++) {                              \
            float atm_row_[K];                                          \
            A_ROW(atm_row_, atm_ai_ + i_ * K);                          \
            for (uint cc_ = 0u; cc_ < COLS; cc_++) {                    \
                for (uint m_ = 0u; m_ < K; m_++) {                      \
                    o[IDX(cc_, m_)] += atm_row_[m_] * g[IDX(cc_, i_)];  \
                }                                                       \
            }                                                           \
        }                                                               \
    }

// LOAD_G(r, t, u, g) sets g = dH_t + u for the invocation's columns.
#define LOAD_G(r, t, u, g)                                              \
    {                                                                   \
        uint lg_xi_ = pc.off[3] + x_index(r, (t)) + r.c;                \
        for (uint i_ = 0u; i_ < K; i_++) {                              \
            LD_COLS(g, dH_, lg_xi_ + i_ * V, i_);                       \
            for (uint cc_ = 0u; cc_ < COLS; cc_++) {                    \
                g[IDX(cc_, i_)] += u[IDX(cc_, i_)];                     \
            }                                                           \
        }                                                               \
    }

// The ring (see affine.glsl) in the backward's reverse walks: step t
// from slot u holds A_t and the invocation's part of dH_t.
// FILL_B(u, t) loads them.
#define FILL_B(u, t)                                                    \
    {                                                                   \
        RING_A(ra, u, pc.off[0] + a_index(r, (t)));                     \
        RING_X(rx, u, dH_, pc.off[3] + x_index(r, (t)) + r.c);          \
    }

// PRIME_RING_B(len) declares the ring (ra, rx) and len, the chunk's
// steps, and loads its last RING steps into it, step t1 - 1 - v in slot v.
#define PRIME_RING_B(len)                                               \
    RWORD ra[RS * AW + 1u];                                             \
    RWORD rx[RS * XW + 1u];                                             \
    uint len = r.t1 - r.t0;                                             \
    [[unroll]] for (uint v = 0u; v < RING; v++) {                       \
        if (v < len) {                                                  \
            FILL_B(v, r.t1 - 1u - v);                                   \
        }                                                               \
    }

// LOAD_G_RING(u, t, uv, g) is LOAD_G from slot u.
#define LOAD_G_RING(u, t, uv, g)                                        \
    {                                                                   \
        uint lgr_e_ = pc.off[3] + x_index(r, (t)) + r.c;                \
        [[unroll]] for (uint i_ = 0u; i_ < K; i_++) {                   \
            RING_COLS(g, rx, u, i_, lgr_e_ + i_ * V);                   \
            [[unroll]] for (uint cc_ = 0u; cc_ < COLS; cc_++) {         \
                g[IDX(cc_, i_)] += uv[IDX(cc_, i_)];                    \
            }                                                           \
        }                                                               \
    }

// AT_MUL_RING(u, g, o, NC) is at_mul (NC = 1, arrays of K floats) or
// AT_MUL_COLS (NC = COLS, arrays of KC) with A_t from slot u.
#define AT_MUL_RING(u, g, o, NC)                                        \
    {                                                                   \
        [[unroll]] for (uint e_ = 0u; e_ < (NC) * K; e_++) {            \
            o[e_] = 0.0;                                                \
        }                                                               \
        [[unroll]] for (uint i_ = 0u; i_ < K; i_++) {                   \
            float amr_row_[K];                                          \
            RING_ROW(amr_row_, ra, u, i_);                              \
            [[unroll]] for (uint cc_ = 0u; cc_ < (NC); cc_++) {         \
                [[unroll]] for (uint m_ = 0u; m_ < K; m_++) {           \
                    o[IDX(cc_, m_)] += amr_row_[m_] * g[IDX(cc_, i_)];  \
                }                                                       \
            }                                                           \
        }                                                               \
    }

// LOAD_HP(t, hp) sets hp to H_{t-1} where V = 1 (dA is formed in the
// same pass; H0 or zeros at t = 0).
#define LOAD_HP(t, hp)                                                  \
    {                                                                   \
        if (V == 1u) {                                                  \
            uint lhp_xi_ = x_index(r, (t)) + r.c;                       \
            for (uint m_ = 0u; m_ < K; m_++) {                          \
                if ((t) > 0u) {                                         \
                    hp[m_] = LD(H_, pc.off[2] + lhp_xi_ - pc.N * K * V + m_ * V); \
                } else if (HAS_INIT) {                                  \
                    hp[m_] = LD(H0_, pc.off[1] + init_index(r) + m_ * V + r.c); \
                } else {                                                \
                    hp[m_] = 0.0;                                       \
                }                                                       \
            }                                                           \
        }                                                               \
    }

// STORE_STEP(t, g, hp) stores step t's dX = G_t (and G_t in f32 where
// WRITE_G32), and where V = 1 its dA_t = G_t H_{t-1}^T.
#define STORE_STEP(t, g, hp)                                            \
    {                                                                   \
        uint sst_xi_ = x_index(r, (t)) + r.c;                           \
        for (uint i_ = 0u; i_ < K; i_++) {                              \
            ST_COLS(dX_, pc.off[5] + sst_xi_ + i_ * V, g, i_);          \
            if (WRITE_G32) {                                            \
                for (uint cc_ = 0u; cc_ < COLS; cc_++) {                \
                    G32_[pc.off[7] + sst_xi_ + i_ * V + cc_] = g[IDX(cc_, i_)]; \
                }                                                       \
            }                                                           \
        }                                                               \
        if (V == 1u) {                                                  \
            uint sst_di_ = pc.off[4] + a_index(r, (t));                 \
            for (uint i_ = 0u; i_ < K; i_++) {                          \
                for (uint m_ = 0u; m_ < K; m_++) {                      \
                    ST(dA_, sst_di_ + i_ * K + m_, g[i_] * hp[m_]);     \
                }                                                       \
            }                                                           \
        }                                                               \
    }

void scan_columns() {
    Col r = column_of_invocation();
    float u[KC];  // A_{t+1}^T G_{t+1}, the invocation's columns
    float g[KC];
    float hp[K];  // H_{t-1} (V = 1, so COLS = 1)
    if (CHUNKS > 1u) {
        // Pass 1, right to left: u_out = Q u_in + R with R from u_in = 0
        // (these columns) and Q = A_s^T ... A_{e-1}^T (owned columns).
        float q[NP * K];
        for (uint w = 0u; w < NP; w++) {
            for (uint i = 0u; i < K; i++) {
                q[w * K + i] = (i == r.ci + w * VI) ? 1.0 : 0.0;
            }
        }
        for (uint e = 0u; e < KC; e++) {
            u[e] = 0.0;
        }
        if (r.live && RING == 0u) {
            for (uint tt = r.t1; tt > r.t0; tt--) {
                uint t = tt - 1u;
                uint ai = pc.off[0] + a_index(r, t);
                LOAD_G(r, t, u, g);
                AT_MUL_COLS(ai, g, u);
                for (uint w = 0u; w < NP; w++) {
                    float qw[K];
                    float qn[K];
                    for (uint i = 0u; i < K; i++) {
                        qw[i] = q[w * K + i];
                    }
                    at_mul(ai, qw, qn);
                    for (uint m = 0u; m < K; m++) {
                        q[w * K + m] = qn[m];
                    }
                }
            }
        } else if (r.live) {
            // Step t = t1 - 1 - n in slot n % RING.
            PRIME_RING_B(len);
            for (uint n0 = 0u; n0 < len; n0 += RING) {
                [[unroll]] for (uint v = 0u; v < RING; v++) {
                    uint n = n0 + v;
                    if (n < len) {
                        uint t = r.t1 - 1u - n;
                        LOAD_G_RING(v, t, u, g);
                        AT_MUL_RING(v, g, u, COLS);
                        [[unroll]] for (uint w = 0u; w < NP; w++) {
                            float qw[K];
                            float qn[K];
                            [[unroll]] for (uint i = 0u; i < K; i++) {
                                qw[i] = q[w * K + i];
                            }
                            AT_MUL_RING(v, qw, qn, 1u);
                            [[unroll]] for (uint m = 0u; m < K; m++) {
                                q[w * K + m] = qn[m];
                            }
                        }
                        if (n + RING < len) {
                            FILL_B(v, t - RING);
                        }
                    }
                }
            }
        }
        STORE_CHUNK(r, u, q);
        barrier();
    }
    if (!r.live) {
        return;
    }
    for (uint e = 0u; e < KC; e++) {
        u[e] = 0.0;
    }
    if (CHUNKS > 1u) {
        for (uint k = CHUNKS - 1u; k > r.j; k--) {
            APPLY_CHUNK(r, k, u);
        }
        // A column whose carry-in is not finite: walk the later steps one
        // by one instead (see affine.glsl), keeping the folded carry-in
        // of a finite column.
        CHECK_FINITE(fin, all, u);
        if (!all) {
            float folded[KC];
            for (uint e = 0u; e < KC; e++) {
                folded[e] = u[e];
                u[e] = 0.0;
            }
            for (uint tt = pc.T; tt > r.t1; tt--) {
                uint t = tt - 1u;
                LOAD_G(r, t, u, g);
                AT_MUL_COLS(pc.off[0] + a_index(r, t), g, u);
            }
            KEEP_FOLDED(u, folded, fin);
        }
    }
    if (RING == 0u) {
        for (uint tt = r.t1; tt > r.t0; tt--) {
            uint t = tt - 1u;
            uint ai = pc.off[0] + a_index(r, t);
            // Every load of the step (dH, H and A in AT_MUL_COLS) comes
            // before its first store: a compiler need not move a load
            // above a store to another binding (bindings may alias), and
            // a store between the loads makes the step one round trip to
            // memory per load.
            LOAD_G(r, t, u, g);
            LOAD_HP(t, hp);
            AT_MUL_COLS(ai, g, u);
            STORE_STEP(t, g, hp);
        }
    } else {
        // Step t = t1 - 1 - n in slot n % RING; its loads were issued
        // RING steps before.
        PRIME_RING_B(len);
        for (uint n0 = 0u; n0 < len; n0 += RING) {
            [[unroll]] for (uint v = 0u; v < RING; v++) {
                uint n = n0 + v;
                if (n < len) {
                    uint t = r.t1 - 1u - n;
                    LOAD_G_RING(v, t, u, g);
                    LOAD_HP(t, hp);
                    AT_MUL_RING(v, g, u, COLS);
                    STORE_STEP(t, g, hp);
                    if (n + RING < len) {
                        FILL_B(v, t - RING);
                    }
                }
            }
        }
    }
    if (r.j == 0u && HAS_INIT) {
        for (uint i = 0u; i < K; i++) {
            ST_COLS(dH0_, pc.off[6] + init_index(r) + i * V + r.c, u, i);
        }
    }
}

// One invocation per element (b, t, n, i, m) of dA.
void outer_products() {
    uint gid = workgroup_index() * WG + gl_LocalInvocationID.x;
    uint m = gid % K;
    uint i = (gid / K) % K;
    uint s = gid / (K * K);  // (b*T + t)*N + n
    uint b = s / (pc.T * pc.N);
    if (b >= pc.B) {
        return;
    }
    uint t = (s / pc.N) % pc.T;
    uint n = s % pc.N;
    float acc = 0.0;
    if (t > 0u || HAS_INIT) {
        uint gi = pc.off[7] + (s * K + i) * V;
        uint hi = (t > 0u) ? pc.off[2] + ((s - pc.N) * K + m) * V
                           : pc.off[1] + ((b * pc.N + n) * K + m) * V;
        for (uint c = 0u; c < V; c++) {
            float hv = (t > 0u) ? LD(H_, hi + c) : LD(H0_, hi + c);
            acc += G32_[gi + c] * hv;
        }
    }
    ST(dA_, pc.off[4] + s * K * K + i * K + m, acc);
}

void main() {
    if (PHASE == 0u) {
        scan_columns();
    } else {
        outer_products();
    }
}
