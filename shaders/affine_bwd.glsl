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

void scan_columns() {
    Col r = column_of_invocation();
    float u[K];  // A_{t+1}^T G_{t+1}, column c
    float g[K];
    float hp[K];
    if (CHUNKS > 1u) {
        // Pass 1, right to left: u_out = Q u_in + R with R from u_in = 0
        // (this column) and Q = A_s^T ... A_{e-1}^T (owned columns).
        float q[NP * K];
        for (uint w = 0u; w < NP; w++) {
            for (uint i = 0u; i < K; i++) {
                q[w * K + i] = (i == r.c + w * V) ? 1.0 : 0.0;
            }
        }
        for (uint i = 0u; i < K; i++) {
            u[i] = 0.0;
        }
        if (r.live) {
            for (uint tt = r.t1; tt > r.t0; tt--) {
                uint t = tt - 1u;
                uint ai = pc.off[0] + a_index(r, t);
                uint xi = x_index(r, t) + r.c;
                for (uint i = 0u; i < K; i++) {
                    g[i] = LD(dH_, pc.off[3] + xi + i * V) + u[i];
                }
                at_mul(ai, g, u);
                for (uint w = 0u; w < NP; w++) {
                    float qw[K];
                    for (uint i = 0u; i < K; i++) {
                        qw[i] = q[w * K + i];
                    }
                    at_mul(ai, qw, g);
                    for (uint m = 0u; m < K; m++) {
                        q[w * K + m] = g[m];
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
    for (uint i = 0u; i < K; i++) {
        u[i] = 0.0;
    }
    if (CHUNKS > 1u) {
        for (uint k = CHUNKS - 1u; k > r.j; k--) {
            apply_chunk(r, k, u);
        }
        // A carry-in that is not finite: walk the later steps of this
        // column one by one instead (see affine.glsl).
        bool finite = true;
        for (uint i = 0u; i < K; i++) {
            finite = finite && !isnan(u[i]) && !isinf(u[i]);
        }
        if (!finite) {
            for (uint i = 0u; i < K; i++) {
                u[i] = 0.0;
            }
            for (uint tt = pc.T; tt > r.t1; tt--) {
                uint t = tt - 1u;
                uint xi = x_index(r, t) + r.c;
                for (uint i = 0u; i < K; i++) {
                    g[i] = LD(dH_, pc.off[3] + xi + i * V) + u[i];
                }
                at_mul(pc.off[0] + a_index(r, t), g, u);
            }
        }
    }
    for (uint tt = r.t1; tt > r.t0; tt--) {
        uint t = tt - 1u;
        uint ai = pc.off[0] + a_index(r, t);
        uint xi = x_index(r, t) + r.c;
        // Every load of the step (dH, H and A in at_mul) comes before its
        // first store: a compiler need not move a load above a store to
        // another binding (bindings may alias), and a store between the
        // loads makes the step one round trip to memory per load.
        for (uint i = 0u; i < K; i++) {
            g[i] = LD(dH_, pc.off[3] + xi + i * V) + u[i];
        }
        if (V == 1u) {
            for (uint m = 0u; m < K; m++) {
                if (t > 0u) {
                    hp[m] = LD(H_, pc.off[2] + xi - pc.N * K * V + m * V);
                } else if (HAS_INIT) {
                    hp[m] = LD(H0_, pc.off[1] + init_index(r) + m * V + r.c);
                } else {
                    hp[m] = 0.0;
                }
            }
        }
        at_mul(ai, g, u);
        for (uint i = 0u; i < K; i++) {
            ST(dX_, pc.off[5] + xi + i * V, g[i]);
            if (WRITE_G32) {
                G32_[pc.off[7] + xi + i * V] = g[i];
            }
        }
        if (V == 1u) {
            uint di = pc.off[4] + a_index(r, t);
            for (uint i = 0u; i < K; i++) {
                for (uint m = 0u; m < K; m++) {
                    ST(dA_, di + i * K + m, g[i] * hp[m]);
                }
            }
        }
    }
    if (r.j == 0u && HAS_INIT) {
        for (uint i = 0u; i < K; i++) {
            ST(dH0_, pc.off[6] + init_index(r) + i * V + r.c, u[i]);
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
