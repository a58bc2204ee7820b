#version 450
#extension GL_GOOGLE_include_directive : require
// givens_scan forward with subgroup shuffles: h_t = sigma_t * R(theta_t)
// h_{t-1} + x_t, h_{-1} = h0 or 0, k/2 invocations per lane (see
// givens_sg.glsl for the layout, the ring of inputs and the chunks).
#include "common.glsl"
#include "givens_sg.glsl"

IN_BUFFER(0, theta_)
IN_BUFFER(1, sigma_)
IN_BUFFER(2, x_)
IN_BUFFER(3, h0_)
OUT_BUFFER(4, h_)

// The ring: the angles q and F + q, and the pairs of sigma and x, of the
// steps loaded ahead (six registers a step).
RAW rt1[D], rt2[D];
RAW2 rs[D], rx[D];
// Element and angle index of the next step to load.
uint eL, aL;

// The state: channels 2q, 2q+1 (pass 1's columns are givens_sg.glsl's v0
// and v1).
float y0, y1;

void load(Thr r, uint d) {
    rt1[d] = LDR(theta_, pc.off[0] + aL + r.q);
    if (K > 2u) {
        rt2[d] = LDR(theta_, pc.off[0] + aL + F + q2(r));
    }
    rs[d] = LDR2(sigma_, pc.off[1] + eL);
    rx[d] = LDR2(x_, pc.off[2] + eL);
    eL += pc.N * K;
    aL += pc.N * (K - 1u);
}

// One step: slot d of the ring, whose element and angle index are e and a.
// agg: apply it to the columns of pass 1, else to the state and store.
// A step that is not on (past its chunk's end) computes as the others do,
// so that the shuffles stay in control flow uniform over the subgroup,
// and changes nothing.
void step(Thr r, bool agg, bool on, uint d, uint e, uint a) {
    float th1 = WIDE(rt1[d], pc.off[0] + a + r.q);
    float th2 = (K > 2u) ? WIDE(rt2[d], pc.off[0] + a + F + q2(r)) : 0.0;
    vec2 sg = WIDE2(rs[d]);
    vec2 xx = WIDE2(rx[d]);
    float cp, sp;
    vec2 sc1 = sincos_reduced(th1), sc2 = sincos_reduced(th2);
    float c1 = sc1.y, s1 = sc1.x;
    float c2 = sc2.y, s2 = sc2.x;
#ifdef CHUNKED_KERNEL
    if (agg) {
        neighbour_angle(r, c2, s2, cp, sp);  // once for the k + 1 columns
        [[unroll]] for (uint m = 0u; m <= K; m++) {
            float z0 = c1 * v0[m] - s1 * v1[m];
            float z1 = s1 * v0[m] + c1 * v1[m];
            vec2 w = layer2_with(r, z0, z1, c2, s2, cp, sp);
            float n0 = (m < K) ? sg.x * w.x : sg.x * w.x + xx.x;
            float n1 = (m < K) ? sg.y * w.y : sg.y * w.y + xx.y;
            v0[m] = on ? n0 : v0[m];
            v1[m] = on ? n1 : v1[m];
        }
        return;
    }
#endif
    float z0 = c1 * y0 - s1 * y1;
    float z1 = s1 * y0 + c1 * y1;
    vec2 w = layer2(r, z0, z1, c2, s2, cp, sp);
    y0 = sg.x * w.x + xx.x;
    y1 = sg.y * w.y + xx.y;
    ST2(h_, pc.off[4] + e, y0, y1);
}

// walk applies the steps [t0, t1) to the state in order, storing h, D
// steps of loads ahead.
void walk(Thr r, uint t0, uint t1) {
    if (t0 >= t1) {
        return;
    }
    eL = elem_index(r, t0);
    aL = angle_index(r, t0);
    uint e = eL, a = aL;
    [[unroll]] for (uint d = 0u; d < D; d++) {
        if (t0 + d < t1) {
            load(r, d);
        }
    }
    uint t = t0;
    for (; t1 - t >= 2u * D; t += D) {
        [[unroll]] for (uint d = 0u; d < D; d++) {
            step(r, false, true, d, e, a);
            load(r, d);
            e += pc.N * K;
            a += pc.N * (K - 1u);
        }
    }
    // At most two rounds are left (fewer than 2D steps).
    for (; t < t1; t += D) {
        uint left = t1 - t;
        [[unroll]] for (uint d = 0u; d < D; d++) {
            if (d < left) {
                step(r, false, true, d, e, a);
                if (d + D < left) {
                    load(r, d);
                }
                e += pc.N * K;
                a += pc.N * (K - 1u);
            }
        }
    }
}

#ifdef CHUNKED_KERNEL
// walk_agg applies the steps [t0, t1) to the k + 1 columns of pass 1.
// A step there is already k + 1 independent columns of work, so two slots
// of the ring suffice (the next step's loads in flight during a step), and
// the loop holds two steps, not D: the D-step ring unrolled over k + 1
// columns made the chunked pipelines take seconds each to build on some
// drivers (up to 20 s for k = 16). Every invocation runs the same number
// of steps, a chunk's length (those past t1 load nothing and change
// nothing): the step's shuffles then sit in a loop whose trip count the
// driver's compiler sees is the same across the subgroup. With a loop to
// each chunk's own end, pass 1 of the long-T shape took 20 µs of a 44 µs
// forward on an H200, 15 of them its columns' shuffles; with this one,
// 6 µs. The host keeps D >= 2.
void walk_agg(Thr r, uint t0, uint t1) {
    uint len = (pc.T + CHUNKS - 1u) / CHUNKS;
    eL = elem_index(r, t0);
    aL = angle_index(r, t0);
    uint e = eL, a = aL;
    [[unroll]] for (uint d = 0u; d < 2u; d++) {
        rt1[d] = RAW(0);
        rt2[d] = RAW(0);
        rs[d] = RAW2(0);
        rx[d] = RAW2(0);
    }
    if (t0 < t1) {
        load(r, 0u);
    }
    [[dont_unroll]] for (uint i = 0u; i < len; i += 2u) {
        uint t = t0 + i;
        if (t + 1u < t1) {
            load(r, 1u);
        }
        step(r, true, t < t1, 0u, e, a);
        e += pc.N * K;
        a += pc.N * (K - 1u);
        if (i + 1u < len) {
            if (t + 2u < t1) {
                load(r, 0u);
            }
            step(r, true, t + 1u < t1, 1u, e, a);
            e += pc.N * K;
            a += pc.N * (K - 1u);
        }
    }
}
#endif

void main() {
    Thr r = thread_of_invocation();
#ifdef CHUNKED_KERNEL
    aggregate_init(r);
    walk_agg(r, r.t0, r.live ? r.t1 : r.t0);
    bool fin = aggregate_finite();
    publish(r);
    barrier();
    scan_chunks(r, false);
    // The carry into chunk j: h0 for chunk 0, else the composed aggregate
    // of chunks 0..j-1 applied to h0.
    float h[K];
    [[unroll]] for (uint i = 0u; i < K; i++) {
        h[i] = (HAS_INIT && r.live) ? LD(h0_, pc.off[3] + init_index(r) + i) : 0.0;
    }
    if (r.j == 0u) {
        y0 = h[2u * r.q];
        y1 = h[2u * r.q + 1u];
    } else {
        uint g = group_slot(r, r.j - 1u);
        y0 = sh_S[g * SSTRIDE + 2u * r.q];
        y1 = sh_S[g * SSTRIDE + 2u * r.q + 1u];
        if (HAS_INIT) {
            [[unroll]] for (uint m = 0u; m < K; m++) {
                y0 += p_at(g * PSTRIDE + 2u * r.q * K + m) * h[m];
                y1 += p_at(g * PSTRIDE + (2u * r.q + 1u) * K + m) * h[m];
            }
        }
    }
    lane_finite(r, fin && finite(y0) && finite(y1));
    barrier();
    if (!r.live) {
        return;
    }
    if (sh_ok[r.local] == 0u) {
        // The sequential walk by the chunk-0 invocations, from h0.
        if (r.j != 0u) {
            return;
        }
        r.t0 = 0u;
        r.t1 = pc.T;
    }
#else
    if (!r.live) {
        return;
    }
    y0 = 0.0;
    y1 = 0.0;
    if (HAS_INIT) {
        uint i = pc.off[3] + init_index(r) + 2u * r.q;
        y0 = LD(h0_, i);
        y1 = LD(h0_, i + 1u);
    }
#endif
    walk(r, r.t0, r.t1);
}
