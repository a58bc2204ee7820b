// Body of the matrix_affine_scan forward kernel (layout and staging: see
// affine.glsl). A staged block holds A_t (k*k words) then X_t (k*v words);
// pass 2 overwrites X_t with H_t and stores it.

IN_BUFFER(0, A_)
IN_BUFFER(1, X_)
IN_BUFFER(2, H0_)
OUT_BUFFER(3, H_)

void main() {
    Col r = column_of_invocation();
    float h[K];
    float hn[K];
    bool seq = false;
    set_slots(false);
    if (gl_LocalInvocationID.x == 0u) {
        sh_bad = 0u;
        sh_bad_carry = 0u;
    }
    uint mylen = r.live ? r.t1 - r.t0 : 0u;
    if (CHUNKS > 1u) {
        // Pass 1: the chunk's map h -> P h + S, S (this column) from a
        // zero carry and the owned columns of P.
        float p[NP * K];
        for (uint q = 0u; q < NP; q++) {
            for (uint i = 0u; i < K; i++) {
                p[q * K + i] = (i == r.c + q * V) ? 1.0 : 0.0;
            }
        }
        for (uint i = 0u; i < K; i++) {
            h[i] = 0.0;
        }
        uint nseg = segments(false);
        for (uint seg = 0u; seg < nseg; seg++) {
            barrier();
            STAGE_IN(A_, pc.off[0], KK, 0u, seg)
            STAGE_IN(X_, pc.off[1], KV, KK, seg)
            barrier();
            for (uint s = 0u; s < STEPS; s++) {
                if (seg * STEPS + s < mylen) {
                    uint o = blk(s, r.slot);
                    for (uint i = 0u; i < K; i++) {
                        float acc = sh[o + KK + i * V + r.c];
                        for (uint m = 0u; m < K; m++) {
                            acc += sh[o + i * K + m] * h[m];
                        }
                        hn[i] = acc;
                    }
                    for (uint i = 0u; i < K; i++) {
                        h[i] = hn[i];
                    }
                    for (uint q = 0u; q < NP; q++) {
                        for (uint i = 0u; i < K; i++) {
                            float acc = 0.0;
                            for (uint m = 0u; m < K; m++) {
                                acc += sh[o + i * K + m] * p[q * K + m];
                            }
                            hn[i] = acc;
                        }
                        for (uint i = 0u; i < K; i++) {
                            p[q * K + i] = hn[i];
                        }
                    }
                }
            }
        }
        barrier();
        bool bad = false;
        for (uint i = 0u; i < K; i++) {
            sh[s_slot(r.slot, r.c) + i] = h[i];
            bad = bad || !finite(h[i]);
        }
        for (uint q = 0u; q < NP; q++) {
            uint m = r.c + q * V;
            if (m < K) {
                for (uint i = 0u; i < K; i++) {
                    sh[p_slot(r.slot) + i * K + m] = p[q * K + i];
                    bad = bad || !finite(p[q * K + i]);
                }
            }
        }
        if (bad) {
            atomicOr(sh_bad, 1u);
        }
        barrier();
        seq = sh_bad != 0u;
    }
    for (uint i = 0u; i < K; i++) {
        h[i] = (HAS_INIT && r.live) ? LD(H0_, pc.off[2] + r.lane * KV + i * V + r.c) : 0.0;
    }
    if (CHUNKS > 1u) {
        if (!seq) {
            // Carry-in: fold the aggregates of the earlier chunks.
            for (uint k = 0u; k < r.j; k++) {
                uint sk = k * LPW + r.local;
                for (uint i = 0u; i < K; i++) {
                    float acc = sh[s_slot(sk, r.c) + i];
                    for (uint m = 0u; m < K; m++) {
                        acc += sh[p_slot(sk) + i * K + m] * h[m];
                    }
                    hn[i] = acc;
                }
                for (uint i = 0u; i < K; i++) {
                    h[i] = hn[i];
                }
            }
            bool bad = false;
            for (uint i = 0u; i < K; i++) {
                bad = bad || !finite(h[i]);
            }
            if (bad) {
                atomicOr(sh_bad_carry, 1u);
            }
        }
        barrier(); // the aggregates are read: pass 2 reuses the area
        if (!seq && sh_bad_carry != 0u) {
            // A carry-in is not finite: the sequential recurrence from h0.
            seq = true;
            for (uint i = 0u; i < K; i++) {
                h[i] = (HAS_INIT && r.live) ? LD(H0_, pc.off[2] + r.lane * KV + i * V + r.c) : 0.0;
            }
        }
        if (seq) {
            set_slots(true);
            mylen = (r.live && r.j == 0u) ? pc.T : 0u;
        }
    }
    // Pass 2: the scan from the carry-in, H_t replacing X_t in the
    // staging area, then stored.
    uint nseg = segments(seq);
    for (uint seg = 0u; seg < nseg; seg++) {
        barrier();
        STAGE_IN(A_, pc.off[0], KK, 0u, seg)
        STAGE_IN(X_, pc.off[1], KV, KK, seg)
        barrier();
        for (uint s = 0u; s < STEPS; s++) {
            if (seg * STEPS + s < mylen) {
                uint o = blk(s, r.slot);
                for (uint i = 0u; i < K; i++) {
                    float acc = sh[o + KK + i * V + r.c];
                    for (uint m = 0u; m < K; m++) {
                        acc += sh[o + i * K + m] * h[m];
                    }
                    hn[i] = acc;
                }
                for (uint i = 0u; i < K; i++) {
                    h[i] = hn[i];
                    sh[o + KK + i * V + r.c] = h[i];
                }
            }
        }
        barrier();
        STAGE_OUT(H_, pc.off[3], KV, PAIR, KK, seg)
    }
}
