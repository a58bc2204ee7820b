// Body of the block forward kernel (see affine.glsl); included by
// matrix_affine_scan_fwd.comp.

IN_BUFFER(0, A_)
IN_BUFFER(1, X_)
IN_BUFFER(2, H0_)
OUT_BUFFER(3, H_)

// STEP(r, t, h) applies step t of the lane to this invocation's columns
// h (KC floats): h <- A_t h + X_t[:, c .. c+COLS-1], each column summing
// X first, then A's row times h in ascending order, as everywhere. Each
// row of A_t is read once for all the columns.
#define STEP(r, t, h)                                                   \
    {                                                                   \
        uint st_ai_ = pc.off[0] + a_index(r, (t));                      \
        uint st_xi_ = pc.off[1] + x_index(r, (t)) + r.c;                \
        float st_hn_[KC];                                               \
        for (uint i_ = 0u; i_ < K; i_++) {                              \
            LD_COLS(st_hn_, X_, st_xi_ + i_ * V, i_);                   \
            float st_row_[K];                                           \
            A_ROW(st_row_, st_ai_ + i_ * K);                            \
            for (uint cc_ = 0u; cc_ < COLS; cc_++) {                    \
                float acc_ = st_hn_[IDX(cc_, i_)];                      \
                for (uint m_ = 0u; m_ < K; m_++) {                      \
                    acc_ += st_row_[m_] * h[IDX(cc_, m_)];              \
                }                                                       \
                st_hn_[IDX(cc_, i_)] = acc_;                            \
            }                                                           \
        }                                                               \
        for (uint e_ = 0u; e_ < KC; e_++) {                             \
            h[e_] = st_hn_[e_];                                         \
        }                                                               \
    }

// STEP_RING(u, t, h) is STEP with step t's inputs from slot u of the
// ring (ra, rx), the same operations in the same order.
#define STEP_RING(u, t, h)                                              \
    {                                                                   \
        uint sr_e_ = pc.off[1] + x_index(r, (t)) + r.c;                 \
        float sr_hn_[KC];                                               \
        [[unroll]] for (uint i_ = 0u; i_ < K; i_++) {                   \
            RING_COLS(sr_hn_, rx, u, i_, sr_e_ + i_ * V);               \
            float sr_row_[K];                                           \
            RING_ROW(sr_row_, ra, u, i_);                               \
            [[unroll]] for (uint cc_ = 0u; cc_ < COLS; cc_++) {         \
                float acc_ = sr_hn_[IDX(cc_, i_)];                      \
                [[unroll]] for (uint m_ = 0u; m_ < K; m_++) {           \
                    acc_ += sr_row_[m_] * h[IDX(cc_, m_)];              \
                }                                                       \
                sr_hn_[IDX(cc_, i_)] = acc_;                            \
            }                                                           \
        }                                                               \
        [[unroll]] for (uint e_ = 0u; e_ < KC; e_++) {                  \
            h[e_] = sr_hn_[e_];                                         \
        }                                                               \
    }

// FILL(u, t) loads step t's inputs into slot u of the ring.
#define FILL(u, t)                                                      \
    {                                                                   \
        RING_A(ra, u, pc.off[0] + a_index(r, (t)));                     \
        RING_X(rx, u, X_, pc.off[1] + x_index(r, (t)) + r.c);           \
    }

// PRIME_RING() declares the ring (ra, rx) and loads the chunk's first
// RING steps into it, step r.t0 + u in slot u.
#define PRIME_RING()                                                    \
    RWORD ra[RS * AW + 1u];                                             \
    RWORD rx[RS * XW + 1u];                                             \
    [[unroll]] for (uint u = 0u; u < RING; u++) {                       \
        if (r.t0 + u < r.t1) {                                          \
            FILL(u, r.t0 + u);                                          \
        }                                                               \
    }

// LOAD_INIT(r, h) sets h to the invocation's columns of H0, or zeros.
#define LOAD_INIT(r, h)                                                 \
    {                                                                   \
        for (uint i_ = 0u; i_ < K; i_++) {                              \
            if (HAS_INIT) {                                             \
                LD_COLS(h, H0_, pc.off[2] + init_index(r) + i_ * V + r.c, i_); \
            } else {                                                    \
                for (uint cc_ = 0u; cc_ < COLS; cc_++) {                \
                    h[IDX(cc_, i_)] = 0.0;                              \
                }                                                       \
            }                                                           \
        }                                                               \
    }

void main() {
    Col r = column_of_invocation();
    float h[KC];
    if (CHUNKS > 1u) {
        // Pass 1: S (these columns) and the owned columns of P over the
        // chunk.
        float p[NP * K];
        float pn[K];
        for (uint q = 0u; q < NP; q++) {
            for (uint i = 0u; i < K; i++) {
                p[q * K + i] = (i == r.ci + q * VI) ? 1.0 : 0.0;
            }
        }
        for (uint e = 0u; e < KC; e++) {
            h[e] = 0.0;
        }
        if (r.live && RING == 0u) {
            for (uint t = r.t0; t < r.t1; t++) {
                STEP(r, t, h);
                uint ai = pc.off[0] + a_index(r, t);
                for (uint q = 0u; q < NP; q++) {
                    for (uint i = 0u; i < K; i++) {
                        float acc = 0.0;
                        A_DOT(acc, ai + i * K, p, q * K);
                        pn[i] = acc;
                    }
                    for (uint i = 0u; i < K; i++) {
                        p[q * K + i] = pn[i];
                    }
                }
            }
        } else if (r.live) {
            PRIME_RING();
            for (uint s0 = r.t0; s0 < r.t1; s0 += RING) {
                [[unroll]] for (uint u = 0u; u < RING; u++) {
                    uint t = s0 + u;
                    if (t < r.t1) {
                        STEP_RING(u, t, h);
                        [[unroll]] for (uint q = 0u; q < NP; q++) {
                            [[unroll]] for (uint i = 0u; i < K; i++) {
                                float row[K];
                                RING_ROW(row, ra, u, i);
                                float acc = 0.0;
                                [[unroll]] for (uint m = 0u; m < K; m++) {
                                    acc += row[m] * p[q * K + m];
                                }
                                pn[i] = acc;
                            }
                            [[unroll]] for (uint i = 0u; i < K; i++) {
                                p[q * K + i] = pn[i];
                            }
                        }
                        if (t + RING < r.t1) {
                            FILL(u, t + RING);
                        }
                    }
                }
            }
        }
        STORE_CHUNK(r, h, p);
        barrier();
    }
    if (!r.live) {
        return;
    }
    LOAD_INIT(r, h);
    if (CHUNKS > 1u) {
        for (uint k = 0u; k < r.j; k++) {
            APPLY_CHUNK(r, k, h);
        }
        // A column whose carry-in is not finite: walk the earlier steps
        // one by one instead (see affine.glsl), keeping the folded
        // carry-in of a finite column.
        CHECK_FINITE(fin, all, h);
        if (!all) {
            float folded[KC];
            for (uint e = 0u; e < KC; e++) {
                folded[e] = h[e];
            }
            LOAD_INIT(r, h);
            for (uint t = 0u; t < r.t0; t++) {
                STEP(r, t, h);
            }
            KEEP_FOLDED(h, folded, fin);
        }
    }
    if (RING == 0u) {
        for (uint t = r.t0; t < r.t1; t++) {
            STEP(r, t, h);
            uint xi = pc.off[3] + x_index(r, t) + r.c;
            for (uint i = 0u; i < K; i++) {
                ST_COLS(H_, xi + i * V, h, i);
            }
        }
        return;
    }
    PRIME_RING();
    for (uint s0 = r.t0; s0 < r.t1; s0 += RING) {
        [[unroll]] for (uint u = 0u; u < RING; u++) {
            uint t = s0 + u;
            if (t < r.t1) {
                STEP_RING(u, t, h);
                uint xi = pc.off[3] + x_index(r, t) + r.c;
                [[unroll]] for (uint i = 0u; i < K; i++) {
                    ST_COLS(H_, xi + i * V, h, i);
                }
                if (t + RING < r.t1) {
                    FILL(u, t + RING);
                }
            }
        }
    }
}
