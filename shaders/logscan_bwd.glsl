// The backward of the log-space scans (parallel_scan_log, mingru_scan),
// shared by their modules: G_t = dh_t + a_{t+1} G_{t+1}, walked as
// parallel_scan_log_bwd.comp describes. A module includes common.glsl
// and chunks.glsl, and defines, before including this file:
//   LD_C(r, l, i), LD_DH(r, l, i), LD_H(r, l, i)  load element i of the
//       decay's input, of dh and of h (i is used unparenthesized)
//   LD_V(r, l, i, vbase, st)   the other input store_step needs at step st
//   LD_STEP(wh, wv, l, i, vbase, st)  h_{st-1} (not for st = 0) and LD_V
//   C_IDENTITY                 the raw decay input of a step past T (a = 1)
//   DECAY(c)                   a_t from the widened decay input
//   INIT_STATE(s, l, vbase)    what store_step needs of the initial state
//   store_step(l, i, vbase, st, g, c, s, wh, wv)  the gradients of step st
//   STORE_INIT_GRAD(l, vbase, u, s)  the initial state's, from u = a_0 G_0
//
bool agg_ok(float p, float q) {
    return abs(p) < POS_INF && abs(q) < POS_INF;
}

void main() {
    Lane l = lane_of_invocation();
    uint base = l.b * pc.T * pc.N + l.d;
    uint vbase = l.b * (pc.T + 1u) * pc.N + l.d;
    VAL lv0;
    INIT_STATE(lv0, l, vbase);
    VAL carry = VAL(0.0); // u flowing into the segment's last step
    uint nseg = segments();
    for (uint sg = nseg; sg > 0u; sg--) {
        uint t0 = ((sg - 1u) * CHUNKS + l.j) * L;
        // h_{t-1} and log_values_{t+1} are loaded with the inputs, not at
        // their stores: a load after a store that may alias it waits for it,
        // which would cost a memory round trip per step.
        // A whole chunk (all L steps inside T, past step 0, the unit live:
        // every chunk but the first and those of the last segment) loads
        // and stores without a test per step: in the 16-bit types only. On
        // an H200 at the large shape it took 2% (f16) and 10% (bf16) off
        // the backward, and made the f32 one 6% slower (0.90 to 0.95 ms),
        // whose step is bound by its arithmetic, not its instruction count.
#if defined(DT_F32)
        bool whole = false;
#else
        bool whole = l.live && t0 > 0u && t0 + L <= pc.T;
#endif
        RAW rc[L];
        RAW rd[L];
        RAW rh[L];
        RAW rv[L];
        if (whole) {
            [[unroll]] for (uint s = 0u; s < L; s++) {
                uint i = base + (t0 + s) * pc.N;
                LD_C(rc[s], l, i);
                LD_DH(rd[s], l, i);
                LD_H(rh[s], l, i - pc.N);
                LD_V(rv[s], l, i, vbase, t0 + s);
            }
        } else {
            [[unroll]] for (uint s = 0u; s < L; s++) {
                rc[s] = C_IDENTITY;
                rd[s] = RAW_OF(0.0);
                rh[s] = RAW_OF(1.0);
                rv[s] = RAW_OF(0.0);
                if (l.live && t0 + s < pc.T) {
                    uint i = base + (t0 + s) * pc.N;
                    LD_C(rc[s], l, i);
                    LD_DH(rd[s], l, i);
                    LD_STEP(rh[s], rv[s], l, i, vbase, t0 + s);
                }
            }
        }
        VAL u = carry;
        bool seq = false;
        if (CHUNKS > 1u) {
            VAL p = VAL(1.0), q = VAL(0.0);
            [[unroll]] for (uint s = L; s > 0u; s--) {
                VAL at = DECAY(WIDENV(rc[s - 1u]));
                q = at * (WIDENV(rd[s - 1u]) + q);
                p *= at;
            }
            sh_p[gl_LocalInvocationID.x] = p;
            sh_q[gl_LocalInvocationID.x] = q;
            barrier();
            VAL x = carry;
            bool ok = true;
            for (uint k = CHUNKS; k > 0u; k--) {
                VAL pk = sh_p[(k - 1u) * TILE + l.c];
                VAL qk = sh_q[(k - 1u) * TILE + l.c];
                ok = ok && agg_okv(pk, qk) && agg_okv(x, x);
                if (k - 1u == l.j) {
                    u = x;
                }
                x = pk * x + qk;
            }
            barrier();
            if (ok) {
                carry = x;
            } else {
                seq = true;
            }
        }
        if (seq) {
            // Sequential walk of the whole segment from its carry.
            uint s0 = (sg - 1u) * CHUNKS * L;
            uint s1 = min(s0 + CHUNKS * L, pc.T);
            VAL y = carry;
            for (uint t = s1; l.live && t > s0; t--) {
                uint st = t - 1u;
                uint i = base + st * pc.N;
                RAW wd, wc;
                LD_DH(wd, l, i);
                LD_C(wc, l, i);
                VAL g = WIDENV(wd) + y;
                VAL c = WIDENV(wc);
                if (st >= t0 && st < t0 + L) {
                    RAW wh = RAW_OF(1.0), wv;
                    LD_STEP(wh, wv, l, i, vbase, st);
                    store_step(l, i, vbase, st, g, c, lv0, wh, wv);
                }
                y = DECAY(c) * g;
            }
            carry = y;
            continue;
        }
        if (whole) {
            [[unroll]] for (uint s = L; s > 0u; s--) {
                VAL g = WIDENV(rd[s - 1u]) + u;
                uint st = t0 + s - 1u;
                VAL c = WIDENV(rc[s - 1u]);
                store_step(l, base + st * pc.N, vbase, st, g, c, lv0, rh[s - 1u], rv[s - 1u]);
                u = DECAY(c) * g;
            }
        } else {
            [[unroll]] for (uint s = L; s > 0u; s--) {
                VAL g = WIDENV(rd[s - 1u]) + u;
                uint st = t0 + s - 1u;
                VAL c = WIDENV(rc[s - 1u]);
                if (l.live && st < pc.T) {
                    store_step(l, base + st * pc.N, vbase, st, g, c, lv0, rh[s - 1u], rv[s - 1u]);
                }
                u = DECAY(c) * g;
            }
        }
        if (CHUNKS == 1u) {
            carry = u;
        }
    }
    // carry is now a_0 G_0, alike in every invocation of the channel.
    if (l.live && l.j == 0u) {
        STORE_INIT_GRAD(l, vbase, carry, lv0);
    }
}
