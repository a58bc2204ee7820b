#version 450
#extension GL_GOOGLE_include_directive : require
// givens_scan backward with subgroup shuffles, a reverse scan per lane
// with k/2 invocations per lane (see givens_sg.glsl for the layout, the
// ring and the chunks; givens_scan_bwd.comp for the same arithmetic in one
// invocation):
//   G_t = dh_t + A_{t+1}^T G_{t+1},  dx_t = G_t,
//   w = R(theta_t) h_{t-1} rebuilt from the stored forward output (never
//   by dividing by sigma), dsigma_t = G_t * w,
//   dtheta_t by walking the rotations backwards with gradient sigma_t * G_t,
//   dh0 = A_0^T G_0.
// For a rotation with outputs (y_i, y_j) and output gradients (g_i, g_j):
//   dth = y_i g_j - y_j g_i,  input gradients (c g_i + s g_j, c g_j - s g_i).
// The carry is u = A_{t+1}^T G_{t+1}, channels 2q and 2q+1 in invocation
// q. Chunked, pass 1 walks a chunk [t0, t1) backwards from u = 0 (reading
// theta, sigma and dh), which gives its aggregate map u(t1) -> u(t0) =
// P u(t1) + S; the scan over the chunks composes them from the last, and
// each chunk's carry is the composition of the chunks after it.
#include "common.glsl"
#include "givens_sg.glsl"

// Constant 11: nonzero when the host guarantees that every lane of the
// backward walks all of T (CHUNKS = 1) beside the lanes it shares 16-bit
// words of angle gradients with, in its subgroup: n and n + 1 of a pair
// of blocks (n even, N even) always sit in one subgroup and workgroup
// (subgroups of k or more invocations, an even number of lanes a
// workgroup). With ALIGNED (every operand starts at an even element) each
// shared word is then stored whole by one invocation, with no atomics and
// no branches (PAIRED).
layout(constant_id = 11) const uint PAIRS = 0;
#define PAIRED (PAIRS != 0u && ALIGNED && CHUNKS == 1u)

IN_BUFFER(0, theta_)
IN_BUFFER(1, sigma_)
IN_BUFFER(2, h0_)
IN_BUFFER(3, h_)
IN_BUFFER(4, dh_)
OUT_BUFFER(5, dtheta_)
OUT_BUFFER(6, dsigma_)
OUT_BUFFER(7, dx_)
OUT_BUFFER(8, dh0_)

// The ring: the angles q and F + q, and the pairs of sigma, dh and
// h_{t-1} of the steps loaded ahead (eight registers a step in f32).
RAW rt1[D], rt2[D];
RAW2 rs[D], rd[D], rh[D];
// Step, element and angle index of the next step to load; the raw pair
// of h0 (or zeros), which step 0 takes as h_{t-1}.
uint tL, eL, aL;
RAW2 hinit;

// The carry: channels 2q, 2q+1 (pass 1's columns are givens_sg.glsl's v0
// and v1).
float u0, u1;

void load(Thr r, bool agg, uint d) {
    rt1[d] = LDR(theta_, pc.off[0] + aL + r.q);
    if (K > 2u) {
        rt2[d] = LDR(theta_, pc.off[0] + aL + F + q2(r));
    }
    rs[d] = LDR2(sigma_, pc.off[1] + eL);
    rd[d] = LDR2(dh_, pc.off[4] + eL);
    if (!agg) {
        // Branch-free: step 0 loads its own h (a valid element) and takes
        // h0 instead.
        RAW2 hv = LDR2(h_, pc.off[3] + ((tL > 0u) ? eL - pc.N * K : eL));
        rh[d] = (tL > 0u) ? hv : hinit;
    }
    eL -= pc.N * K;
    aL -= pc.N * (K - 1u);
    tL -= 1u;
}

// The gradient of the lane's angle a (0 <= a < K-1) at this step, from
// the invocation that computed it (angle a < F is invocation a's d1,
// angle F + q invocation q's d2).
float angle_grad(Thr r, int a, float d1, float d2) {
    if (K == 2u) {
        return d1;
    }
    uint first = gl_SubgroupInvocationID - r.q;
    float x1 = subgroupShuffle(d1, first + uint(clamp(a, 0, int(F) - 1)));
    float x2 = subgroupShuffle(d2, first + uint(clamp(a - int(F), 0, int(F) - 1)));
    return a < int(F) ? x1 : x2;
}

// paired_next says whether the lane after this one in memory (block n+1
// of the same batch row, at the same step) is the next lane of this
// subgroup and walks the same steps: unchunked, inside the workgroup's
// lanes and the subgroup (its invocation 0 is then the one after this
// lane's last). paired_prev says the same of the lane before, from its
// side; the two agree for every pair.
bool paired_next(Thr r) {
    return CHUNKS == 1u && gl_SubgroupInvocationID + F - r.q < gl_SubgroupSize &&
           r.local + 1u < LPW && r.n + 1u < pc.N;
}
bool paired_prev(Thr r) {
    return CHUNKS == 1u && gl_SubgroupInvocationID >= r.q + 1u && r.local >= 1u && r.n >= 1u;
}

// One step: slot d of the ring, whose element and angle index are e and a.
// agg: apply A_t^T to the columns of pass 1 (only where on: see
// walk_agg), else the full step with its stores.
void step(Thr r, bool agg, bool on, uint d, uint e, uint a) {
    float th1 = WIDE(rt1[d], pc.off[0] + a + r.q);
    float th2 = (K > 2u) ? WIDE(rt2[d], pc.off[0] + a + F + q2(r)) : 0.0;
    vec2 sg = WIDE2(rs[d]);
    vec2 dd = WIDE2(rd[d]);
    vec2 sc1 = sincos_reduced(th1), sc2 = sincos_reduced(th2);
    float c1 = sc1.y, s1 = sc1.x;
    float c2 = sc2.y, s2 = sc2.x;
    float cp = 1.0, sp = 0.0, gdn;
#ifdef CHUNKED_KERNEL
    if (agg) {
        neighbour_angle(r, c2, s2, cp, sp);  // once for the k + 1 columns
        [[unroll]] for (uint m = 0u; m <= K; m++) {
            float g0 = (m < K) ? v0[m] : v0[m] + dd.x;
            float g1 = (m < K) ? v1[m] : v1[m] + dd.y;
            vec2 k = layer2T(r, sg.x * g0, sg.y * g1, c2, s2, cp, sp, gdn);
            v0[m] = on ? c1 * k.x + s1 * k.y : v0[m];
            v1[m] = on ? c1 * k.y - s1 * k.x : v1[m];
        }
        return;
    }
#endif
    vec2 hp = WIDE2(rh[d]);
    // Rebuild the rotations' outputs: z after the first layer, w after
    // the second.
    float z0 = c1 * hp.x - s1 * hp.y;
    float z1 = s1 * hp.x + c1 * hp.y;
    vec2 w = layer2(r, z0, z1, c2, s2, cp, sp);
    float g0 = dd.x + u0;
    float g1 = dd.y + u1;
    ST2(dx_, pc.off[7] + e, g0, g1);
    ST2(dsigma_, pc.off[6] + e, g0 * w.x, g1 * w.y);
    float gv0 = sg.x * g0, gv1 = sg.y * g1;
    // The second layer backwards: this invocation's pair (2q+1, 2q+2)
    // has outputs w.y and the neighbour's w.x.
    float wdn = (K > 2u) ? subgroupShuffle(w.x, r.dn) : 0.0;
    vec2 k = layer2T(r, gv0, gv1, c2, s2, cp, sp, gdn);
    float d2 = w.y * gdn - wdn * gv1;
    // The first layer backwards (outputs z).
    float d1 = z0 * k.y - z1 * k.x;
    u0 = c1 * k.x + s1 * k.y;
    u1 = c1 * k.y - s1 * k.x;
    uint base = pc.off[5] + a;  // angle 0 of the lane at this step
#if defined(DT_F32)
    dtheta_[base + r.q] = d1;
    if (r.q + 1u < F) {
        dtheta_[base + F + r.q] = d2;
    }
#else
    // Whole words: invocation q stores the angles 2q - p and 2q + 1 - p
    // (p the parity of base), gathered from the invocations that computed
    // them. A lane's k - 1 angles are an odd number, so one word at an end
    // of its row is shared with the lane next to it in memory: where that
    // lane runs in the same subgroup, at the same step (unchunked), the
    // invocation holding the word's lower angle stores it whole with the
    // other's angle 0; elsewhere each half takes ST's atomics.
    int a0 = 2 * int(r.q) - int(base & 1u);
    float lo = angle_grad(r, a0, d1, d2);
    float hi = angle_grad(r, a0 + 1, d1, d2);
    float next0 = subgroupShuffle(d1, min(gl_SubgroupInvocationID + 1u, gl_SubgroupSize - 1u));
    if (PAIRED) {
        // The word of angles a0, a0 + 1 whole, the upper one the next
        // lane's angle 0 where a0 is the lane's last; a0 = -1 (an odd
        // lane's first word) is the previous lane's to store. One store
        // under its condition: the three cases below, as branches around
        // atomics, took about 40% of the large 16-bit forward and backward
        // on an H200.
        float whi = (a0 + 1 > int(K) - 2) ? next0 : hi;
        if (a0 >= 0) {
            dtheta_[(base + uint(a0)) >> 1] = NARROW2(vec2(lo, whi));
        }
    } else if (a0 < 0) {
        if (!paired_prev(r)) {
            ST(dtheta_, base, hi);
        }
    } else if (a0 + 1 > int(K) - 2) {
        if (paired_next(r)) {
            dtheta_[(base + uint(a0)) >> 1] = NARROW2(vec2(lo, next0));
        } else {
            ST(dtheta_, base + uint(a0), lo);
        }
    } else {
        dtheta_[(base + uint(a0)) >> 1] = NARROW2(vec2(lo, hi));
    }
#endif
}

// walk applies the steps [t0, t1) from the last, D steps of loads ahead.
void walk(Thr r, uint t0, uint t1) {
    if (t0 >= t1) {
        return;
    }
    hinit = ZERO2;
    if (t0 == 0u && HAS_INIT) {
        hinit = LDR2(h0_, pc.off[2] + init_index(r) + 2u * r.q);
    }
    tL = t1 - 1u;
    eL = elem_index(r, tL);
    aL = angle_index(r, tL);
    uint e = eL, a = aL;
    uint left = t1 - t0;
    [[unroll]] for (uint d = 0u; d < D; d++) {
        if (d < left) {
            load(r, false, d);
        }
    }
    for (; left >= 2u * D; left -= D) {
        [[unroll]] for (uint d = 0u; d < D; d++) {
            step(r, false, true, d, e, a);
            load(r, false, d);
            e -= pc.N * K;
            a -= pc.N * (K - 1u);
        }
    }
    // At most two rounds are left (fewer than 2D steps).
    for (; left > 0u; left = (left > D) ? left - D : 0u) {
        [[unroll]] for (uint d = 0u; d < D; d++) {
            if (d < left) {
                step(r, false, true, d, e, a);
                if (d + D < left) {
                    load(r, false, d);
                }
                e -= pc.N * K;
                a -= pc.N * (K - 1u);
            }
        }
    }
}

#ifdef CHUNKED_KERNEL
// walk_agg applies the steps [t0, t1), from the last, to the k + 1
// columns of pass 1: two slots of the ring and two steps a loop, every
// invocation the same number of steps, a chunk's length (those past the
// chunk's first step load nothing and change nothing), as the forward's
// walk_agg says why.
void walk_agg(Thr r, uint t0, uint t1) {
    uint len = (pc.T + CHUNKS - 1u) / CHUNKS;
    uint n = t1 - t0;
    tL = t1 - 1u;
    eL = elem_index(r, tL);
    aL = angle_index(r, tL);
    uint e = eL, a = aL;
    [[unroll]] for (uint d = 0u; d < 2u; d++) {
        rt1[d] = RAW(0);
        rt2[d] = RAW(0);
        rs[d] = RAW2(0);
        rd[d] = RAW2(0);
    }
    if (n > 0u) {
        load(r, true, 0u);
    }
    [[dont_unroll]] for (uint i = 0u; i < len; i += 2u) {
        if (i + 1u < n) {
            load(r, true, 1u);
        }
        step(r, true, i < n, 0u, e, a);
        e -= pc.N * K;
        a -= pc.N * (K - 1u);
        if (i + 1u < len) {
            if (i + 2u < n) {
                load(r, true, 0u);
            }
            step(r, true, i + 1u < n, 1u, e, a);
            e -= pc.N * K;
            a -= pc.N * (K - 1u);
        }
    }
}
#endif

void main() {
    Thr r = thread_of_invocation();
    u0 = 0.0;
    u1 = 0.0;
#ifdef CHUNKED_KERNEL
    aggregate_init(r);
    walk_agg(r, r.t0, r.live ? r.t1 : r.t0);
    bool fin = aggregate_finite();
    publish(r);
    barrier();
    scan_chunks(r, true);
    // The carry into chunk j's last step: zero for the last chunk, else
    // the composed aggregate of chunks j+1.. applied to zero.
    if (r.j + 1u < CHUNKS) {
        uint g = group_slot(r, r.j + 1u);
        u0 = sh_S[g * SSTRIDE + 2u * r.q];
        u1 = sh_S[g * SSTRIDE + 2u * r.q + 1u];
    }
    lane_finite(r, fin && finite(u0) && finite(u1));
    barrier();
    if (!r.live) {
        return;
    }
    if (sh_ok[r.local] == 0u) {
        // The sequential walk by the chunk-0 invocations, from a zero
        // carry (see lane_finite).
        if (r.j != 0u) {
            return;
        }
        r.t0 = 0u;
        r.t1 = pc.T;
        u0 = 0.0;
        u1 = 0.0;
    }
#else
    if (!r.live) {
        return;
    }
#endif
    walk(r, r.t0, r.t1);
    if (HAS_INIT && r.t0 == 0u) {
        ST2(dh0_, pc.off[8] + init_index(r) + 2u * r.q, u0, u1);
    }
}
