// Body of the matrix_affine_scan backward kernel (layout and staging: see
// affine.glsl). One reverse scan per column:
//   G_t = dH_t + A_{t+1}^T G_{t+1},  dX_t = G_t,  dH0 = A_0^T G_0,
//   dA_t = G_t H_{t-1}^T = sum over columns c of G_t[:,c] H_{t-1}[:,c]^T.
// An invocation carries u = A_{t+1}^T G_{t+1} (its column). A staged block
// holds A_t (k*k words), dH_t (k*v) and H_{t-1} (k*v: H0 or zeros at
// t = 0); pass 2 overwrites dH_t with G_t, and after the segment's barrier
// the workgroup forms dA_t from G_t and H_{t-1} in shared memory (each
// invocation a pair of adjacent elements, summing over the v columns) and
// stores dA and dX. Segments and the steps in them run in reverse.

IN_BUFFER(0, A_)
IN_BUFFER(1, H0_)
IN_BUFFER(2, H_)
IN_BUFFER(3, dH_)
OUT_BUFFER(4, dA_)
OUT_BUFFER(5, dX_)
OUT_BUFFER(6, dH0_)

const uint AT_G = KK;       // dH_t, then G_t
const uint AT_HP = KK + KV; // H_{t-1}

// Stages H_{t-1} of every valid block of segment seg.
void stage_hprev(uint seg) {
    for (uint e = gl_LocalInvocationID.x; e < SLOTS * STEPS * KV; e += WG) {
        uint w = e % KV;
        uint q = e / KV;
        uint sl = q % SLOTS;
        uint s = seg * STEPS + q / SLOTS;
        if (s < sh_len[sl]) {
            float x = 0.0;
            if (sh_t0[sl] + s > 0u) {
                x = LD(H_, pc.off[2] + (sh_blk0[sl] + s * pc.N - pc.N) * KV + w);
            } else if (HAS_INIT) {
                x = LD(H0_, pc.off[1] + sh_lane[sl] * KV + w);
            }
            sh[blk(q / SLOTS, sl) + AT_HP + w] = x;
        }
    }
}

// dA of every valid block of segment seg, from G and H_{t-1} staged.
void store_da(uint seg) {
    for (uint e = gl_LocalInvocationID.x; e < SLOTS * STEPS * (KK / PAIR_A); e += WG) {
        uint w = (e % (KK / PAIR_A)) * PAIR_A;
        uint q = e / (KK / PAIR_A);
        uint sl = q % SLOTS;
        uint s = seg * STEPS + q / SLOTS;
        if (s < sh_len[sl]) {
            uint o = blk(q / SLOTS, sl);
            uint i = w / K;
            uint m = w % K;
            float d0 = 0.0;
            float d1 = 0.0;
            for (uint c = 0u; c < V; c++) {
                float gc = sh[o + AT_G + i * V + c];
                d0 += gc * sh[o + AT_HP + m * V + c];
                if (PAIR_A == 2u) {
                    d1 += gc * sh[o + AT_HP + (m + 1u) * V + c];
                }
            }
            uint g = pc.off[4] + (sh_blk0[sl] + s * pc.N) * KK + w;
            if (PAIR_A == 2u) {
                ST2(dA_, g, d0, d1);
            } else {
                ST(dA_, g, d0);
            }
        }
    }
}

void main() {
    Col r = column_of_invocation();
    float u[K];  // A_{t+1}^T G_{t+1}, column c
    float g[K];
    bool seq = false;
    set_slots(false);
    if (gl_LocalInvocationID.x == 0u) {
        sh_bad = 0u;
        sh_bad_carry = 0u;
    }
    uint mylen = r.live ? r.t1 - r.t0 : 0u;
    for (uint i = 0u; i < K; i++) {
        u[i] = 0.0;
    }
    if (CHUNKS > 1u) {
        // Pass 1, right to left: u_out = Q u_in + R with R from u_in = 0
        // (this column) and Q = A_s^T ... A_{e-1}^T (owned columns).
        float q[NP * K];
        for (uint w = 0u; w < NP; w++) {
            for (uint i = 0u; i < K; i++) {
                q[w * K + i] = (i == r.c + w * V) ? 1.0 : 0.0;
            }
        }
        uint nseg = segments(false);
        for (uint sg = nseg; sg > 0u; sg--) {
            uint seg = sg - 1u;
            barrier();
            STAGE_IN(A_, pc.off[0], KK, 0u, seg)
            STAGE_IN(dH_, pc.off[3], KV, AT_G, seg)
            barrier();
            for (uint ss = STEPS; ss > 0u; ss--) {
                uint s = ss - 1u;
                if (seg * STEPS + s < mylen) {
                    uint o = blk(s, r.slot);
                    for (uint i = 0u; i < K; i++) {
                        g[i] = sh[o + AT_G + i * V + r.c] + u[i];
                    }
                    for (uint m = 0u; m < K; m++) {
                        float acc = 0.0;
                        for (uint i = 0u; i < K; i++) {
                            acc += sh[o + i * K + m] * g[i];
                        }
                        u[m] = acc;
                    }
                    for (uint w = 0u; w < NP; w++) {
                        for (uint m = 0u; m < K; m++) {
                            float acc = 0.0;
                            for (uint i = 0u; i < K; i++) {
                                acc += sh[o + i * K + m] * q[w * K + i];
                            }
                            g[m] = acc;
                        }
                        for (uint m = 0u; m < K; m++) {
                            q[w * K + m] = g[m];
                        }
                    }
                }
            }
        }
        barrier();
        bool bad = false;
        for (uint i = 0u; i < K; i++) {
            sh[s_slot(r.slot, r.c) + i] = u[i];
            bad = bad || !finite(u[i]);
        }
        for (uint w = 0u; w < NP; w++) {
            uint m = r.c + w * V;
            if (m < K) {
                for (uint i = 0u; i < K; i++) {
                    sh[p_slot(r.slot) + i * K + m] = q[w * K + i];
                    bad = bad || !finite(q[w * K + i]);
                }
            }
        }
        if (bad) {
            atomicOr(sh_bad, 1u);
        }
        barrier();
        seq = sh_bad != 0u;
        for (uint i = 0u; i < K; i++) {
            u[i] = 0.0;
        }
        if (!seq) {
            // Carry-in from the right: fold the later chunks' aggregates.
            for (uint k = CHUNKS - 1u; k > r.j; k--) {
                uint sk = k * LPW + r.local;
                for (uint i = 0u; i < K; i++) {
                    float acc = sh[s_slot(sk, r.c) + i];
                    for (uint m = 0u; m < K; m++) {
                        acc += sh[p_slot(sk) + i * K + m] * u[m];
                    }
                    g[i] = acc;
                }
                for (uint i = 0u; i < K; i++) {
                    u[i] = g[i];
                }
            }
            bool bad = false;
            for (uint i = 0u; i < K; i++) {
                bad = bad || !finite(u[i]);
            }
            if (bad) {
                atomicOr(sh_bad_carry, 1u);
            }
        }
        barrier(); // the aggregates are read: pass 2 reuses the area
        if (!seq && sh_bad_carry != 0u) {
            // A carry-in is not finite: the sequential recurrence from the
            // end.
            seq = true;
            for (uint i = 0u; i < K; i++) {
                u[i] = 0.0;
            }
        }
        if (seq) {
            set_slots(true);
            mylen = (r.live && r.j == 0u) ? pc.T : 0u;
        }
    }
    // Pass 2, right to left from the carry-in.
    uint nseg = segments(seq);
    for (uint sg = nseg; sg > 0u; sg--) {
        uint seg = sg - 1u;
        barrier();
        STAGE_IN(A_, pc.off[0], KK, 0u, seg)
        STAGE_IN(dH_, pc.off[3], KV, AT_G, seg)
        stage_hprev(seg);
        barrier();
        for (uint ss = STEPS; ss > 0u; ss--) {
            uint s = ss - 1u;
            if (seg * STEPS + s < mylen) {
                uint o = blk(s, r.slot);
                for (uint i = 0u; i < K; i++) {
                    g[i] = sh[o + AT_G + i * V + r.c] + u[i];
                    sh[o + AT_G + i * V + r.c] = g[i];
                }
                for (uint m = 0u; m < K; m++) {
                    float acc = 0.0;
                    for (uint i = 0u; i < K; i++) {
                        acc += sh[o + i * K + m] * g[i];
                    }
                    u[m] = acc;
                }
            }
        }
        barrier();
        store_da(seg);
        STAGE_OUT(dX_, pc.off[5], KV, PAIR, AT_G, seg)
    }
    if (HAS_INIT) {
        // dH0 = A_0^T G_0 is the carry of the chunk-0 invocations.
        barrier();
        if (r.j == 0u) {
            for (uint i = 0u; i < K; i++) {
                sh[r.local * KV + i * V + r.c] = u[i];
            }
        }
        barrier();
        for (uint e = gl_LocalInvocationID.x; e < LPW * (KV / PAIR); e += WG) {
            uint w = (e % (KV / PAIR)) * PAIR;
            uint l = e / (KV / PAIR);
            uint lane = workgroup_index() * LPW + l;
            if (lane < pc.B * pc.N) {
                uint o = pc.off[6] + lane * KV + w;
                if (PAIR == 2u) {
                    ST2(dH0_, o, sh[l * KV + w], sh[l * KV + w + 1u]);
                } else {
                    ST(dH0_, o, sh[l * KV + w]);
                }
            }
        }
    }
}
