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

// The state: channels 2q, 2q+1 (the rescan), or rows 2q, 2q+1 of the k
// columns of P and of S (pass 1, column K).
float y0, y1;
float v0[K + 1u], v1[K + 1u];

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
void step(Thr r, bool agg, uint d, uint e, uint a) {
    float th1 = WIDE(rt1[d], pc.off[0] + a + r.q);
    float th2 = (K > 2u) ? WIDE(rt2[d], pc.off[0] + a + F + q2(r)) : 0.0;
    vec2 sg = WIDE2(rs[d]);
    vec2 xx = WIDE2(rx[d]);
    float cp, sp;
    float c1 = cos(th1), s1 = sin(th1);
    float c2 = cos(th2), s2 = sin(th2);
    if (agg) {
        neighbour_angle(r, c2, s2, cp, sp);  // once for the k + 1 columns
        [[unroll]] for (uint m = 0u; m <= K; m++) {
            float z0 = c1 * v0[m] - s1 * v1[m];
            float z1 = s1 * v0[m] + c1 * v1[m];
            vec2 w = layer2_with(r, z0, z1, c2, s2, cp, sp);
            v0[m] = (m < K) ? sg.x * w.x : sg.x * w.x + xx.x;
            v1[m] = (m < K) ? sg.y * w.y : sg.y * w.y + xx.y;
        }
    } else {
        float z0 = c1 * y0 - s1 * y1;
        float z1 = s1 * y0 + c1 * y1;
        vec2 w = layer2(r, z0, z1, c2, s2, cp, sp);
        y0 = sg.x * w.x + xx.x;
        y1 = sg.y * w.y + xx.y;
        ST2(h_, pc.off[4] + e, y0, y1);
    }
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
            step(r, false, d, e, a);
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
                step(r, false, d, e, a);
                if (d + D < left) {
                    load(r, d);
                }
                e += pc.N * K;
                a += pc.N * (K - 1u);
            }
        }
    }
}

// walk_agg applies the steps [t0, t1) to the k + 1 columns of pass 1.
// A step there is already k + 1 independent columns of work, so two slots
// of the ring suffice (the next step's loads in flight during a step), and
// the loop holds two steps, not D: the D-step ring unrolled over k + 1
// columns made the chunked pipelines take seconds each to build on some
// drivers (up to 20 s for k = 16). The host keeps D >= 2.
void walk_agg(Thr r, uint t0, uint t1) {
    if (t0 >= t1) {
        return;
    }
    eL = elem_index(r, t0);
    aL = angle_index(r, t0);
    uint e = eL, a = aL;
    load(r, 0u);
    [[dont_unroll]] for (uint t = t0; t < t1; t += 2u) {
        if (t + 1u < t1) {
            load(r, 1u);
        }
        step(r, true, 0u, e, a);
        e += pc.N * K;
        a += pc.N * (K - 1u);
        if (t + 1u < t1) {
            if (t + 2u < t1) {
                load(r, 0u);
            }
            step(r, true, 1u, e, a);
            e += pc.N * K;
            a += pc.N * (K - 1u);
        }
    }
}

void main() {
    Thr r = thread_of_invocation();
    if (CHUNKS > 1u) {
        [[unroll]] for (uint m = 0u; m <= K; m++) {
            v0[m] = (m == 2u * r.q) ? 1.0 : 0.0;
            v1[m] = (m == 2u * r.q + 1u) ? 1.0 : 0.0;
        }
        if (r.live) {
            walk_agg(r, r.t0, r.t1);
        }
        uint g = group_slot(r, r.j);
        bool fin = true;
        [[unroll]] for (uint m = 0u; m < K; m++) {
            sh_P[g * PSTRIDE + 2u * r.q * K + m] = v0[m];
            sh_P[g * PSTRIDE + (2u * r.q + 1u) * K + m] = v1[m];
            fin = fin && finite(v0[m]) && finite(v1[m]);
        }
        sh_S[g * SSTRIDE + 2u * r.q] = v0[K];
        sh_S[g * SSTRIDE + 2u * r.q + 1u] = v1[K];
        fin = fin && finite(v0[K]) && finite(v1[K]);
        sh_F[g * F + r.q] = fin ? 1u : 0u;
        barrier();
        if (r.live && r.j == 0u) {
            float c0 = 0.0, c1 = 0.0;
            if (HAS_INIT) {
                uint i = pc.off[3] + init_index(r) + 2u * r.q;
                c0 = LD(h0_, i);
                c1 = LD(h0_, i + 1u);
            }
            compose_carries(r, false, c0, c1);
        }
        barrier();
    }
    if (!r.live) {
        return;
    }
    if (CHUNKS > 1u) {
        if (sh_ok[r.local] == 0u) {
            // Composing aggregates is not IEEE-identical to the sequential
            // recurrence once a value is infinite or NaN (it can form
            // inf - inf or 0 * inf), and P h0 is not the recurrence's
            // arithmetic on an infinite h0: the chunk-0 invocations walk
            // the whole sequence, from h0 (chunk 0's carry).
            if (r.j != 0u) {
                return;
            }
            r.t0 = 0u;
            r.t1 = pc.T;
        }
        uint s = group_slot(r, r.j) * SSTRIDE + 2u * r.q;
        y0 = sh_S[s];
        y1 = sh_S[s + 1u];
    } else {
        y0 = 0.0;
        y1 = 0.0;
        if (HAS_INIT) {
            uint i = pc.off[3] + init_index(r) + 2u * r.q;
            y0 = LD(h0_, i);
            y1 = LD(h0_, i + 1u);
        }
    }
    walk(r, r.t0, r.t1);
}
