// parallel_scan_log: h_t = exp(lc_t) h_{t-1} + exp(lv_{t+1}), h_{-1} = exp(lv_0),
// computed in log space so that it neither overflows nor underflows:
//
//	m_{-1} = lv_0,  m_t = logaddexp(lc_t + m_{t-1}, lv_{t+1}),  h_t = exp(m_t)
//
// log_coeffs and h are (B,T,D), log_values (B,T+1,D). A chunk's map is
// m -> logaddexp(P + m, Q) with P the sum of its lc_t and Q its scan from
// m = -Inf; maps compose like the affine ones (in log space). See
// elementwise.cuh for the lane and chunk layout. The exponentials and
// logarithms are the GPU's fast approximations (common.cuh).
//
// The f32 forward (log_fwd) re-scans a chunk one logaddexp after another.
// The 16-bit forwards (log_fwd16), which move half the bytes a step, were
// held at the f32 time by that chain (an exponential and a logarithm a
// step, each waiting for the last) and by loads that waited for it; they
// take a chunk in a closed form and load the next segment's steps while
// the current one is folded, re-scanned and stored. With S_r = c_0 + ... +
// c_r, w_r = v_r - S_r and x the log state entering the chunk,
//
//	h_r = exp(S_r + x) + sum_{i<=r} exp(v_i + S_r - S_i)
//	    = exp(S_r + R) (exp(x - R) + exp(M - R) sum_{i<=r} exp(w_i - M)),
//
// M = max w_i, R = max(x, M): two exponentials a step and no chain but
// the sums (rescan_fast). The form is trusted only where it is as good as
// the recurrence: every value finite and of moderate size (sum |c_r|, |M|
// and |x| at most FAST_LOG_RANGE: the exponents are then rounded no worse
// than the recurrence's own states), x >= M - FAST_LOG_RANGE (the bracket
// stays above exp(-FAST_LOG_RANGE) and keeps its relative precision) and
// every output finite (an exp(S_r + R) past the float range whose product
// would not be); anywhere else the chunk takes the recurrence. (In f32
// the same form ran the large shape's forward 16% slower on an H200, 530
// against 457 us: it spilled registers under the 1024-thread bound.)
#include "elementwise.cuh"

// LOG_FWD16_MAX_THREADS is the largest block of the 16-bit forwards (their
// __launch_bounds__): 512 threads leave them 128 registers, for the steps
// loaded ahead.
#define LOG_FWD16_MAX_THREADS 512

// chunk_map returns the map m -> logaddexp(P + m, Q) of S steps (cv, vv).
// With S_r = c_0 + ... + c_r, U_r = P - S_r = c_{r+1} + ... + c_{S-1} and
// w_r = v_r - S_r,
//
//	Q = log sum_r exp(v_r + U_r) = P + M + log sum_r exp(v_r + U_r - (P + M)),
//
// M = max w_r: one exp per step and one log per chunk, where the scan
// from -Inf takes an exp and a log per step. The second pass walks back
// with the suffix sums U_r (no first-pass value stays live: registers).
// The closed form holds when P is finite (no lc is infinite or NaN) and M
// is finite or -Inf (no lv is +Inf or NaN); otherwise the map is the scan
// itself, which gives the non-finite cases as the sequential recurrence.
template <int S>
__device__ __forceinline__ void chunk_map(const float (&cv)[S], const float (&vv)[S], float& P, float& Q) {
    float s = 0.0f, M = -INFINITY;
#pragma unroll
    for (int r = 0; r < S; r++) {
        s += cv[r];
        M = max_nan(M, vv[r] - s);
    }
    P = s;
    Q = -INFINITY;
    if (fabsf(P) < INFINITY && M < INFINITY) {  // false for NaN too
        if (M > -INFINITY) {
            const float PM = P + M;
            const float PMb = PM * LOG2E;
            float sum = 0.0f, u = 0.0f;
#pragma unroll
            for (int r = S - 1; r >= 0; r--) {
                sum += ex2_fast(fmaf(vv[r] + u, LOG2E, -PMb));
                u += cv[r];
            }
            Q = fmaf(LN2, lg2_fast(sum), PM);
        }
    } else {
#pragma unroll
        for (int r = 0; r < S; r++) {
            Q = logaddexp(cv[r] + Q, vv[r]);
        }
    }
}

// agg_ok reports whether a chunk's map (P, Q) composes with others as the
// recurrence does: -Inf is an ordinary value in log space (a zero), NaN
// and +Inf are not.
__device__ __forceinline__ bool agg_ok(float P, float Q) {
    return P == P && Q == Q && P < INFINITY && Q < INFINITY;
}

template <int DT>
__device__ __forceinline__ void log_fwd(const void* __restrict__ lc, const void* __restrict__ lv,
                                        void* __restrict__ h, i64 T, i64 D) {
    DYNAMIC_SHARED(agg);
    Lane l = lane_of<1>(T, D);
    const i64 base = l.b * T * D + l.d;         // (b, t, d) of lc and h
    const i64 vbase = l.b * (T + 1) * D + l.d;  // (b, s, d) of lv
    float carry = 0.0f;                         // log state entering the segment
    if (l.on) {
        carry = ld<DT>(lv, vbase);
    }
    const i64 span = (i64)l.C * SEG_LOG_FWD;
    for (i64 s0 = 0; s0 < T; s0 += span) {
        const i64 t0 = s0 + (i64)l.c * SEG_LOG_FWD;
        const i64 o = base + t0 * D;
        const int n = steps_in(l, t0, T, SEG_LOG_FWD);
        // Steps past T are the identity: lc = 0, lv = -Inf.
        float cv[SEG_LOG_FWD], vv[SEG_LOG_FWD];
        ld_steps<DT>(lc, o, D, 0, n, 0.0f, cv);
        ld_steps<DT>(lv, vbase + (t0 + 1) * D, D, 0, n, -INFINITY, vv);
        float m = carry;
        const bool last = l.c == l.C - 1;
        if (l.C > 1) {
            // Chunk c folds the aggregates of chunks 0..c-1 into the
            // carry-in; the last chunk's aggregate is nobody's, so it
            // skips that pass, and its slot in agg carries its final state,
            // the next segment's carry, to the others.
            if (!last) {
                float P, Q;
                chunk_map(cv, vv, P, Q);
                agg[l.c * TILE + l.j] = P;
                agg[(l.C + l.c) * TILE + l.j] = Q;
            }
            __syncthreads();
            bool ok = true;
            for (int i = 0; i < l.c; i++) {
                const float Pi = agg[i * TILE + l.j], Qi = agg[(l.C + i) * TILE + l.j];
                ok = ok && agg_ok(Pi, Qi);
                m = logaddexp(Pi + m, Qi);
            }
            if (!ok && l.on) {
                // Composing maps is exact algebra but not IEEE-identical to
                // the recurrence once an aggregate is +Inf or NaN (it can
                // form Inf - Inf where the sequential order never does): the
                // carry-in is then the sequential walk of the earlier steps
                // of the segment, from memory, so NaN and Inf come out as in
                // the sequential reference.
                m = carry;
                for (i64 t = s0; t < t0; t++) {
                    m = logaddexp(ld<DT>(lc, base + t * D) + m, ld<DT>(lv, vbase + (t + 1) * D));
                }
            }
        }
        // Re-scan from the carry-in; h_t = exp(m_t) into vv.
#pragma unroll
        for (int r = 0; r < SEG_LOG_FWD; r++) {
            m = logaddexp(cv[r] + m, vv[r]);
            vv[r] = exp_fast(m);
        }
        st_steps<DT>(h, o, D, n, vv);
        if (l.C == 1) {
            carry = m;
        } else {
            // Nobody reads the last chunk's slot before this barrier, and
            // it is rewritten only after the next segment's first one.
            if (last) {
                agg[l.c * TILE + l.j] = m;
            }
            __syncthreads();
            carry = agg[(l.C - 1) * TILE + l.j];
        }
    }
}

// FAST_LOG_RANGE bounds, in natural log units, the sizes of the closed
// form's exponents and how far below the chunk's largest term the state
// entering it may lie.
#define FAST_LOG_RANGE 64.0f

// chunk_terms turns S steps (cv, vv) into the closed form's terms in
// place: cv[r] = S_r, vv[r] = w_r = v_r - S_r; it sets P = S_{S-1}, M =
// max_r w_r (NaN when any w_r is) and A = sum_r |c_r|. The raw steps are
// gone: the paths that need them load them again.
template <int S>
__device__ __forceinline__ void chunk_terms(float (&cv)[S], float (&vv)[S], float& P, float& M, float& A) {
    float s = 0.0f;
    M = -INFINITY;
    A = 0.0f;
#pragma unroll
    for (int r = 0; r < S; r++) {
        A += fabsf(cv[r]);
        s += cv[r];
        cv[r] = s;
        vv[r] -= s;
        M = max_nan(M, vv[r]);
    }
    P = s;
}

// terms_map sets Q of the map m -> logaddexp(P + m, Q) of a chunk from its
// terms (chunk_terms): with U_r = P - S_r,
//
//	Q = log sum_r exp(v_r + U_r) = P + M + log sum_r exp(w_r - M),
//
// one exp per step and one log per chunk, where the scan from -Inf takes
// an exp and a log per step. The closed form holds when P is finite (no lc
// is infinite or NaN) and M is finite or -Inf (no lv is +Inf or NaN); it
// returns false otherwise, and the caller takes the scan itself, which
// gives the non-finite cases as the sequential recurrence.
template <int S>
__device__ __forceinline__ bool terms_map(const float (&wv)[S], float P, float M, float& Q) {
    Q = -INFINITY;
    if (!(fabsf(P) < INFINITY && M < INFINITY)) {  // true for NaN too
        return false;
    }
    if (M > -INFINITY) {
        const float Mb = M * LOG2E;
        float sum = 0.0f;
#pragma unroll
        for (int r = 0; r < S; r++) {
            sum += ex2_fast(fmaf(wv[r], LOG2E, -Mb));
        }
        Q = fmaf(LN2, lg2_fast(sum), P + M);
    }
    return true;
}

// rescan_fast applies a chunk (its terms: sv = S_r, wv = w_r) to the log
// state x entering it in the closed form above, storing h_r at element o
// + r D of h for r < n, and sets x to the state after the chunk. It
// returns false, with x unchanged, where the form is not trusted (see the
// top of this file); the caller then takes the recurrence and stores its
// outputs over these. Each output is stored as soon as it is formed (held
// until all were checked, the f32 forward at the large shape ran 17%
// slower on an H200). M and A are chunk_terms'.
template <int DT, int S>
__device__ __forceinline__ bool rescan_fast(const float (&sv)[S], const float (&wv)[S], float M, float A, float& x,
                                            void* __restrict__ h, i64 o, i64 D, int n) {
    // False for NaN too.
    if (!(A <= FAST_LOG_RANGE && fabsf(M) <= FAST_LOG_RANGE && fabsf(x) <= FAST_LOG_RANGE &&
          x >= M - FAST_LOG_RANGE)) {
        return false;
    }
    const float R = fmaxf(x, M);
    const float Mb = M * LOG2E, Rb = R * LOG2E;
    const float b = ex2_fast(Mb - Rb);
    float pre = ex2_fast(fmaf(x, LOG2E, -Rb));  // the bracket, >= exp(-FAST_LOG_RANGE)
    const int es = DT == DT_F32 ? 4 : 2;
    char* q = (char*)h + o * es;
    const i64 stride = D * es;
    float any = 0.0f;
#pragma unroll
    for (int r = 0; r < S; r++) {
        pre = fmaf(b, ex2_fast(fmaf(wv[r], LOG2E, -Mb)), pre);
        const float y = ex2_fast(fmaf(sv[r], LOG2E, Rb)) * pre;
        any += y;
        if (n == S || r < n) {
            st_num<DT>(q, 0, y);  // a NaN here fails the test below
        }
        q += stride;
    }
    if (!is_finite(any)) {
        return false;
    }
    x = fmaf(LN2, lg2_fast(pre), sv[S - 1] + R);
    return true;
}

// ld_raw reads the 16-bit elements o, o + D, ..., o + (S-1) D of p as
// they are stored into v, those with r >= n as id. They are widened only
// where the next segment begins: a widening right after a load would make
// the thread wait for it there.
template <int DT, int S>
__device__ __forceinline__ void ld_raw(const void* __restrict__ p, i64 o, i64 D, int n, unsigned short id,
                                       unsigned short (&v)[S]) {
    const unsigned short* q = (const unsigned short*)p + o;
    if (n == S) {
#pragma unroll
        for (int r = 0; r < S; r++) {
            v[r] = __ldg(q);
            q += D;
        }
    } else {
#pragma unroll
        for (int r = 0; r < S; r++) {
            v[r] = r < n ? __ldg(q + (i64)r * D) : id;
        }
    }
}

template <int DT>
__device__ __forceinline__ void log_fwd16(const void* __restrict__ lc, const void* __restrict__ lv,
                                        void* __restrict__ h, i64 T, i64 D) {
    DYNAMIC_SHARED(agg);
    Lane l = lane_of<1>(T, D);
    const i64 base = l.b * T * D + l.d;         // (b, t, d) of lc and h
    const i64 vbase = l.b * (T + 1) * D + l.d;  // (b, s, d) of lv
    float carry = 0.0f;                         // log state entering the segment
    if (l.on) {
        carry = ld<DT>(lv, vbase);
    }
    const i64 span = (i64)l.C * SEG_LOG_FWD;
    // The raw steps of the thread's chunk of the next segment, loaded while
    // the current one is folded, re-scanned and stored; steps past T are
    // the identity: lc = 0, lv = -Inf.
    const unsigned short cid = narrow_sw<DT>(0.0f), vid = narrow_sw<DT>(-INFINITY);
    unsigned short rc[SEG_LOG_FWD], rv[SEG_LOG_FWD];
    {
        const i64 t0 = (i64)l.c * SEG_LOG_FWD;
        const int n = steps_in(l, t0, T, SEG_LOG_FWD);
        ld_raw<DT>(lc, base + t0 * D, D, n, cid, rc);
        ld_raw<DT>(lv, vbase + (t0 + 1) * D, D, n, vid, rv);
    }
    for (i64 s0 = 0; s0 < T; s0 += span) {
        const i64 t0 = s0 + (i64)l.c * SEG_LOG_FWD;
        const i64 o = base + t0 * D;
        const int n = steps_in(l, t0, T, SEG_LOG_FWD);
        float cv[SEG_LOG_FWD], vv[SEG_LOG_FWD];
#pragma unroll
        for (int r = 0; r < SEG_LOG_FWD; r++) {
            cv[r] = widen<DT>(rc[r]);
            vv[r] = widen<DT>(rv[r]);
        }
        float P, M, A;
        chunk_terms(cv, vv, P, M, A);
        if (s0 + span < T) {
            const i64 t1 = t0 + span;
            const int n1 = steps_in(l, t1, T, SEG_LOG_FWD);
            ld_raw<DT>(lc, base + t1 * D, D, n1, cid, rc);
            ld_raw<DT>(lv, vbase + (t1 + 1) * D, D, n1, vid, rv);
        }
        float m = carry;
        const bool last = l.c == l.C - 1;
        if (l.C > 1) {
            // Chunk c folds the aggregates of chunks 0..c-1 into the
            // carry-in; the last chunk's aggregate is nobody's, so it
            // skips that pass, and its slot in agg carries its final state,
            // the next segment's carry, to the others.
            if (!last) {
                float Q;
                if (!terms_map(vv, P, M, Q)) {
                    // Not finite: the scan from -Inf, of the raw steps (the
                    // re-scan below then takes the recurrence too).
                    ld_steps<DT>(lc, o, D, 0, n, 0.0f, cv);
                    ld_steps<DT>(lv, vbase + (t0 + 1) * D, D, 0, n, -INFINITY, vv);
#pragma unroll
                    for (int r = 0; r < SEG_LOG_FWD; r++) {
                        Q = logaddexp(cv[r] + Q, vv[r]);
                    }
                }
                agg[l.c * TILE + l.j] = P;
                agg[(l.C + l.c) * TILE + l.j] = Q;
            }
            __syncthreads();
            bool ok = true;
            for (int i = 0; i < l.c; i++) {
                const float Pi = agg[i * TILE + l.j], Qi = agg[(l.C + i) * TILE + l.j];
                ok = ok && agg_ok(Pi, Qi);
                m = logaddexp(Pi + m, Qi);
            }
            if (!ok && l.on) {
                // Composing maps is exact algebra but not IEEE-identical to
                // the recurrence once an aggregate is +Inf or NaN (it can
                // form Inf - Inf where the sequential order never does): the
                // carry-in is then the sequential walk of the earlier steps
                // of the segment, from memory, so NaN and Inf come out as in
                // the sequential reference.
                m = carry;
                for (i64 t = s0; t < t0; t++) {
                    m = logaddexp(ld<DT>(lc, base + t * D) + m, ld<DT>(lv, vbase + (t + 1) * D));
                }
            }
        }
        // Re-scan from the carry-in and store h_t = exp(m_t): in the
        // closed form, or else by the recurrence, of the raw steps.
        if (!rescan_fast<DT>(cv, vv, M, A, m, h, o, D, n)) {
            ld_steps<DT>(lc, o, D, 0, n, 0.0f, cv);
            ld_steps<DT>(lv, vbase + (t0 + 1) * D, D, 0, n, -INFINITY, vv);
#pragma unroll
            for (int r = 0; r < SEG_LOG_FWD; r++) {
                m = logaddexp(cv[r] + m, vv[r]);
                vv[r] = exp_fast(m);
            }
            st_steps<DT>(h, o, D, n, vv);
        }
        if (l.C == 1) {
            carry = m;
        } else {
            // Nobody reads the last chunk's slot before this barrier, and
            // it is rewritten only after the next segment's first one.
            if (last) {
                agg[l.c * TILE + l.j] = m;
            }
            __syncthreads();
            carry = agg[(l.C - 1) * TILE + l.j];
        }
    }
}

// The backward is the linear reverse scan with a_t = exp(lc_t):
//
//	G_t       = dh_t + exp(lc_{t+1}) G_{t+1}
//	dlv_{t+1} = G_t exp(lv_{t+1})
//	dlc_t     = G_t exp(lc_t + log h_{t-1})   (log h_{-1} = lv_0)
//	dlv_0     = G_0 exp(lc_0 + lv_0)
//
// log h_{t-1} comes from the stored output h. The carry between steps is
// g = exp(lc_t) G_t. Segments are walked from the last to the first. The
// exponents are taken in base 2 (one ex2 or lg2 each, common.cuh): after
// the loads each step keeps a_t and lc_t + log h_{t-1} in log2 units.
template <int DT>
__device__ __forceinline__ void log_bwd(const void* __restrict__ lc, const void* __restrict__ lv,
                                        const void* __restrict__ h, const void* __restrict__ dh,
                                        void* __restrict__ dlc, void* __restrict__ dlv, i64 T,
                                        i64 D) {
    DYNAMIC_SHARED(agg);
    Lane l = lane_of<1>(T, D);
    const i64 base = l.b * T * D + l.d;
    const i64 vbase = l.b * (T + 1) * D + l.d;
    float lv0 = 0.0f;
    if (l.on) {
        lv0 = ld<DT>(lv, vbase);
    }
    const float lv0b = lv0 * LOG2E;  // log2 h_{-1}
    float carry = 0.0f;
    const i64 span = (i64)l.C * SEG_BWD;
    for (i64 s0 = (T - 1) / span * span; s0 >= 0; s0 -= span) {
        const i64 t0 = s0 + (i64)l.c * SEG_BWD;
        const i64 o = base + t0 * D;
        const i64 ov = vbase + (t0 + 1) * D;
        const int n = steps_in(l, t0, T, SEG_BWD);
        // Steps past T are the identity: lc = 0, dh = 0. pv holds
        // h_{t-1} (1 where it does not exist), then the exponent of dlc.
        float cv[SEG_BWD], dv[SEG_BWD], vv[SEG_BWD], pv[SEG_BWD];
        ld_steps<DT>(lc, o, D, 0, n, 0.0f, cv);
        ld_steps<DT>(dh, o, D, 0, n, 0.0f, dv);
        ld_steps<DT>(lv, ov, D, 0, n, 0.0f, vv);
        ld_steps<DT>(h, o - D, D, t0 == 0 ? 1 : 0, n, 1.0f, pv);
        // cv becomes a_t, pv log2 of exp(lc_t) h_{t-1}.
#pragma unroll
        for (int r = 0; r < SEG_BWD; r++) {
            const float c2 = cv[r] * LOG2E;
            const float lp = r == 0 && t0 == 0 ? lv0b : lg2_full(pv[r]);
            pv[r] = c2 + lp;
            cv[r] = ex2_fast(c2);
        }
        float g = carry;
        if (l.C > 1) {
            float P = 1.0f, Q = 0.0f;
#pragma unroll
            for (int r = SEG_BWD - 1; r >= 0; r--) {
                Q = cv[r] * (dv[r] + Q);
                P *= cv[r];
            }
            agg[l.c * TILE + l.j] = P;
            agg[(l.C + l.c) * TILE + l.j] = Q;
            __syncthreads();
            for (int i = l.C - 1; i > l.c; i--) {
                g = fmaf(agg[i * TILE + l.j], g, agg[(l.C + i) * TILE + l.j]);
            }
            float next = g;
            for (int i = l.c; i >= 0; i--) {
                next = fmaf(agg[i * TILE + l.j], next, agg[(l.C + i) * TILE + l.j]);
            }
            carry = next;
            __syncthreads();
        }
        // dlv_{t+1} into vv, dlc_t into pv.
        float G = 0.0f;
#pragma unroll
        for (int r = SEG_BWD - 1; r >= 0; r--) {
            G = dv[r] + g;
            vv[r] = G * exp_fast(vv[r]);
            pv[r] = G * ex2_fast(pv[r]);
            g = cv[r] * G;
        }
        st_steps<DT>(dlv, ov, D, n, vv);
        st_steps<DT>(dlc, o, D, n, pv);
        if (l.C == 1) {
            carry = g;
        }
        if (t0 == 0 && l.on) {
            // G is G_0 and pv[0] = log2(exp(lc_0 + lv_0)) here: this chunk
            // starts at step 0.
            st<DT>(dlv, vbase, pv[0]);
        }
    }
    if (l.C > 1 && l.on && !is_finite(carry)) {
        // The linear maps compose as the recurrence does only while
        // everything is finite (Inf - Inf, 0 * Inf otherwise come in
        // another order). An fma with a non-finite operand is not finite,
        // and so is the carry after it, in every later segment: a finite
        // final carry means every fold was of finite values. Otherwise the
        // lane is redone by the sequential recurrence from the end, from
        // memory, with the re-scan's arithmetic: every thread of the lane
        // walks all of T and rewrites its own chunks' steps (program order
        // puts these stores after its own above; no barrier is left), so
        // NaN and Inf come out as in the sequential reference. Out of the
        // segment loop, the fast path keeps its registers.
        float g = 0.0f;
        for (i64 t = T - 1; t >= 0; t--) {
            const i64 e = base + t * D, ev = vbase + (t + 1) * D;
            const float G = ld<DT>(dh, e) + g;
            const float c2 = ld<DT>(lc, e) * LOG2E;
            if ((int)((t / SEG_BWD) % l.C) == l.c) {
                const float lp = t == 0 ? lv0b : lg2_full(ld<DT>(h, e - D));
                const float dl = G * ex2_fast(c2 + lp);
                st<DT>(dlv, ev, G * exp_fast(ld<DT>(lv, ev)));
                st<DT>(dlc, e, dl);
                if (t == 0) {
                    st<DT>(dlv, vbase, dl);
                }
            }
            g = ex2_fast(c2) * G;
        }
    }
}

#define PARALLEL_SCAN_LOG(NAME, DT, FWD, FWD_THREADS)                                            \
    extern "C" __global__ void __launch_bounds__(FWD_THREADS, 1)                                    \
        parallel_scan_log_fwd_##NAME(const void* lc, const void* lv, void* h, i64 T, i64 D) {    \
        FWD<DT>(lc, lv, h, T, D);                                                                \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(1024, 1)                                           \
        parallel_scan_log_bwd_##NAME(const void* lc, const void* lv, const void* h,              \
                                     const void* dh, void* dlc, void* dlv, i64 T, i64 D) {       \
        log_bwd<DT>(lc, lv, h, dh, dlc, dlv, T, D);                                              \
    }

PARALLEL_SCAN_LOG(f32, DT_F32, log_fwd, 1024)
PARALLEL_SCAN_LOG(f16, DT_F16, log_fwd16, LOG_FWD16_MAX_THREADS)
PARALLEL_SCAN_LOG(bf16, DT_BF16, log_fwd16, LOG_FWD16_MAX_THREADS)
