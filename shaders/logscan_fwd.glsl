// The forward of the log-space scans (parallel_scan_log, mingru_scan),
// shared by their modules. A module includes common.glsl, chunks.glsl and
// logspace.glsl, binds its buffers (the output as h_, at push offset
// H_OFF) and defines, before including this file:
//   LD_STEP(rc, rv, l, i, vbase, t)     loads step t's raw inputs (i: its
//                                       element of a (B,T,D) tensor, an
//                                       expression used unparenthesized)
//   C_IDENTITY, V_IDENTITY              raw inputs of a step that changes nothing
//   LOG_COEFF(rc, rv), LOG_VALUE(rc, rv) the step's log_coeffs and log_values
//   INIT_LOG_STATE(carry, l, vbase)     sets carry to log h_{-1} (-inf for a dead unit)
// base is element (b, 0, d) of a (B,T,D) tensor, vbase that of a (B,T+1,D) one.
//
// -inf is an ordinary value in log space (a zero); NaN and +inf are not.
bool agg_ok(float s, float q) {
    return s < POS_INF && q < POS_INF;
}

// load_chunk loads the L steps from t0 of the unit into rc and rv: a
// step past T, or of a unit that does not exist, as the identity.
void load_chunk(Lane l, uint base, uint vbase, uint t0, out RAW rc[L], out RAW rv[L]) {
    if (l.live && t0 + L <= pc.T) {
        [[unroll]] for (uint s = 0u; s < L; s++) {
            LD_STEP(rc[s], rv[s], l, base + (t0 + s) * pc.N, vbase, t0 + s);
        }
    } else {
        [[unroll]] for (uint s = 0u; s < L; s++) {
            rc[s] = C_IDENTITY;
            rv[s] = V_IDENTITY;
            if (l.live && t0 + s < pc.T) {
                LD_STEP(rc[s], rv[s], l, base + (t0 + s) * pc.N, vbase, t0 + s);
            }
        }
    }
}

void main() {
    Lane l = lane_of_invocation();
    uint base = l.b * pc.T * pc.N + l.d;          // (b, 0, d) of log_coeffs and h
    uint vbase = l.b * (pc.T + 1u) * pc.N + l.d;  // (b, 0, d) of log_values
    VAL carry;                                    // log h before the segment
    INIT_LOG_STATE(carry, l, vbase);
    uint nseg = segments();
    // The raw steps of the invocation's chunk. The 16-bit kernels load the
    // next segment's while the current one is folded, re-scanned and
    // stored (on an H200 at the large shape: f16 289 to 255 us, bf16 306
    // to 291 us); the f32 kernel, with twice the bytes in flight already
    // and twice the invocations, lost by it (441 to 468 us) and loads each
    // segment's at its start.
    RAW rc[L];
    RAW rv[L];
#if !defined(DT_F32)
    load_chunk(l, base, vbase, l.j * L, rc, rv);
#endif
    for (uint sg = 0u; sg < nseg; sg++) {
        uint t0 = (sg * CHUNKS + l.j) * L;
        // A whole chunk (all L steps inside T, the unit live) stores
        // without a test per step.
        bool whole = l.live && t0 + L <= pc.T;
#if defined(DT_F32)
        load_chunk(l, base, vbase, t0, rc, rv);
#endif
        // The chunk's terms: sv[s] = S_s, wv[s] = w_s (the raw steps are
        // not needed after this).
        VAL sv[L], wv[L];
        VAL P = VAL(0.0), M = VAL(NEG_INF), A = VAL(0.0);
        [[unroll]] for (uint s = 0u; s < L; s++) {
            VAL c = LOG_COEFF(rc[s], rv[s]);
            A += abs(c);
            P += c;
            sv[s] = P;
            wv[s] = LOG_VALUE(rc[s], rv[s]) - P;
            M = max(M, wv[s]);
        }
#if !defined(DT_F32)
        if (sg + 1u < nseg) {
            load_chunk(l, base, vbase, t0 + CHUNKS * L, rc, rv);
        }
#endif
        VAL lh = carry;
        bool seq = false;
        if (CHUNKS > 1u) {
            VAL e = VAL(0.0);
            [[unroll]] for (uint s = 0u; s < L; s++) {
                e += exp2((wv[s] - M) * LOG2E);
            }
            sh_p[gl_LocalInvocationID.x] = P;
            sh_q[gl_LocalInvocationID.x] = chunk_q(P, M, e);
            barrier();
            VAL x = carry;
            bool ok = true;
            for (uint k = 0u; k < CHUNKS; k++) {
                VAL sk = sh_p[k * TILE + l.c];
                VAL qk = sh_q[k * TILE + l.c];
                ok = ok && agg_okv(sk, qk) && agg_okv(x, x);
                if (k == l.j) {
                    lh = x;
                }
                x = logaddexp(sk + x, qk);
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
            uint s0 = sg * CHUNKS * L;
            uint s1 = min(s0 + CHUNKS * L, pc.T);
            VAL y = carry;
            for (uint t = s0; l.live && t < s1; t++) {
                uint i = base + t * pc.N;
                RAW wc, wr;
                LD_STEP(wc, wr, l, i, vbase, t);
                y = logaddexp(LOG_COEFF(wc, wr) + y, LOG_VALUE(wc, wr));
                if (t >= t0 && t < t0 + L) {
                    STV(h_, pc.off[H_OFF] + i, exp(y), l.two);
                }
            }
            carry = y;
            continue;
        }
        // The outputs in the closed form, trusted where fast_ok holds and
        // all of them came out finite; each is stored as soon as it is
        // formed (held until all were checked, the f32 forward at the
        // large shape ran 14% slower on an H200), narrowed as numbers (a
        // NaN among them fails the test), and the recurrence below stores
        // over them where the form is not trusted.
        bool fast = fast_ok(M, A, lh);
        if (fast) {
            VAL R = max(lh, M);
            VAL b = exp2((M - R) * LOG2E);
            VAL pre = exp2((lh - R) * LOG2E);
            VAL any = VAL(0.0);
            [[unroll]] for (uint s = 0u; s < L; s++) {
                pre += b * exp2((wv[s] - M) * LOG2E);
                VAL y = exp2((sv[s] + R) * LOG2E) * pre;
                any += y;
                if (whole || (l.live && t0 + s < pc.T)) {
                    STV_NUM(h_, pc.off[H_OFF] + base + (t0 + s) * pc.N, y, l.two);
                }
            }
            fast = all_finite(any);
            if (fast) {
                lh = sv[L - 1u] + R + log2(pre) * LN2;
            }
        }
        if (!fast) {
            // The recurrence over the chunk's steps, from memory (steps
            // past T or a dead unit change nothing).
            for (uint s = 0u; l.live && s < L && t0 + s < pc.T; s++) {
                uint i = base + (t0 + s) * pc.N;
                RAW wc, wr;
                LD_STEP(wc, wr, l, i, vbase, t0 + s);
                lh = logaddexp(LOG_COEFF(wc, wr) + lh, LOG_VALUE(wc, wr));
                STV(h_, pc.off[H_OFF] + i, exp(lh), l.two);
            }
        }
        if (CHUNKS == 1u) {
            carry = lh;
        }
    }
}
