// Body of the block forward kernel (see affine.glsl); included by
// matrix_affine_scan_fwd.comp.

IN_BUFFER(0, A_)
IN_BUFFER(1, X_)
IN_BUFFER(2, H0_)
OUT_BUFFER(3, H_)

// step applies step t of the lane to this invocation's column h:
// h <- A_t h + X_t[:, c], summing in the same order everywhere.
void step(Col r, uint t, inout float h[K]) {
    uint ai = pc.off[0] + a_index(r, t);
    uint xi = x_index(r, t) + r.c;
    float hn[K];
    for (uint i = 0u; i < K; i++) {
        float acc = LD(X_, pc.off[1] + xi + i * V);
        A_DOT(acc, ai + i * K, h, 0u);
        hn[i] = acc;
    }
    for (uint i = 0u; i < K; i++) {
        h[i] = hn[i];
    }
}

void main() {
    Col r = column_of_invocation();
    float h[K];
    float hn[K];
    if (CHUNKS > 1u) {
        // Pass 1: S (this column) and the owned columns of P over the chunk.
        float p[NP * K];
        for (uint q = 0u; q < NP; q++) {
            for (uint i = 0u; i < K; i++) {
                p[q * K + i] = (i == r.c + q * V) ? 1.0 : 0.0;
            }
        }
        for (uint i = 0u; i < K; i++) {
            h[i] = 0.0;
        }
        if (r.live) {
            for (uint t = r.t0; t < r.t1; t++) {
                step(r, t, h);
                uint ai = pc.off[0] + a_index(r, t);
                for (uint q = 0u; q < NP; q++) {
                    for (uint i = 0u; i < K; i++) {
                        float acc = 0.0;
                        A_DOT(acc, ai + i * K, p, q * K);
                        hn[i] = acc;
                    }
                    for (uint i = 0u; i < K; i++) {
                        p[q * K + i] = hn[i];
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
    for (uint i = 0u; i < K; i++) {
        h[i] = HAS_INIT ? LD(H0_, pc.off[2] + init_index(r) + i * V + r.c) : 0.0;
    }
    if (CHUNKS > 1u) {
        for (uint k = 0u; k < r.j; k++) {
            apply_chunk(r, k, h);
        }
        // A carry-in that is not finite: walk the earlier steps of this
        // column one by one instead (see affine.glsl).
        bool finite = true;
        for (uint i = 0u; i < K; i++) {
            finite = finite && !isnan(h[i]) && !isinf(h[i]);
        }
        if (!finite) {
            for (uint i = 0u; i < K; i++) {
                h[i] = HAS_INIT ? LD(H0_, pc.off[2] + init_index(r) + i * V + r.c) : 0.0;
            }
            for (uint t = 0u; t < r.t0; t++) {
                step(r, t, h);
            }
        }
    }
    for (uint t = r.t0; t < r.t1; t++) {
        step(r, t, h);
        uint xi = x_index(r, t) + r.c;
        for (uint i = 0u; i < K; i++) {
            ST(H_, pc.off[3] + xi + i * V, h[i]);
        }
    }
}
