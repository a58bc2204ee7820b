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
// LOG_FWD16_PAIRS_MAX_THREADS is that of the _pairs kernels, which hold two
// channels' terms: 256 threads leave them 255 registers.
#define LOG_FWD16_PAIRS_MAX_THREADS 256

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

// rescan_fast applies a chunk to the log states x[ch] entering it, for
// each of the thread's P channels (their terms: sv = S_r, wv = w_r), in
// the closed form above, storing h_r at element o + ch + r D of h for r <
// n (with P = 2 both channels of a step as one 32-bit word), and sets the
// x[ch] to the states after the chunk. ok[ch] is false, with x[ch]
// unchanged, where the form is not trusted for channel ch (see the top of
// this file); the caller then takes the recurrence for that channel and
// stores its outputs over these. Each output is stored as soon as it is
// formed (on Vulkan, holding them until all were checked ran the f32
// forward 14% slower on an H200). M and A are chunk_terms'.
template <int DT, int P, int S>
__device__ __forceinline__ void rescan_fast(const float (&sv)[P][S], const float (&wv)[P][S], const float (&M)[P],
                                            const float (&A)[P], float (&x)[P], bool (&ok)[P],
                                            void* __restrict__ h, i64 o, i64 D, int n) {
    float Mb[P], Rb[P], b[P], pre[P], any[P];
#pragma unroll
    for (int ch = 0; ch < P; ch++) {
        // False for NaN too.
        ok[ch] = A[ch] <= FAST_LOG_RANGE && fabsf(M[ch]) <= FAST_LOG_RANGE && fabsf(x[ch]) <= FAST_LOG_RANGE &&
                 x[ch] >= M[ch] - FAST_LOG_RANGE;
        const float R = fmaxf(x[ch], M[ch]);
        Mb[ch] = M[ch] * LOG2E;
        Rb[ch] = R * LOG2E;
        b[ch] = ex2_fast(Mb[ch] - Rb[ch]);
        pre[ch] = ex2_fast(fmaf(x[ch], LOG2E, -Rb[ch]));  // the bracket, >= exp(-FAST_LOG_RANGE)
        any[ch] = 0.0f;
    }
    if (!ok[0] && (P == 1 || !ok[P - 1])) {
        return;
    }
    const int es = DT == DT_F32 ? 4 : 2;
    char* q = (char*)h + o * es;
    const i64 stride = D * es;
#pragma unroll
    for (int r = 0; r < S; r++) {
        float y[P];
#pragma unroll
        for (int ch = 0; ch < P; ch++) {
            pre[ch] = fmaf(b[ch], ex2_fast(fmaf(wv[ch][r], LOG2E, -Mb[ch])), pre[ch]);
            y[ch] = ex2_fast(fmaf(sv[ch][r], LOG2E, Rb[ch])) * pre[ch];
            any[ch] += y[ch];
        }
        if (n == S || r < n) {
            // A NaN here fails the test below.
            if (P == 1) {
                st_num<DT>(q, 0, y[0]);
            } else {
                *(unsigned int*)q = narrow_num<DT>(y[0]) | (narrow_num<DT>(y[P - 1]) << 16);
            }
        }
        q += stride;
    }
#pragma unroll
    for (int ch = 0; ch < P; ch++) {
        ok[ch] = ok[ch] && is_finite(any[ch]);
        if (ok[ch]) {
            x[ch] = fmaf(LN2, lg2_fast(pre[ch]), sv[ch][S - 1] + fmaxf(x[ch], M[ch]));
        }
    }
}

// ld_raw reads the S steps o, o + D, ..., o + (S-1) D of the thread's P
// channels of p as they are stored into v (P = 2: one 32-bit word a step,
// o even), those with r >= n as id (in both halves). They are widened only
// where the next segment begins: a widening right after a load would make
// the thread wait for it there.
template <int DT, int P, int S>
__device__ __forceinline__ void ld_raw(const void* __restrict__ p, i64 o, i64 D, int n, unsigned short id,
                                       unsigned int (&v)[S]) {
    // One 64-bit add a step: the address r D of each load, formed apart,
    // took some ten instructions a load.
    const char* q = (const char*)p + o * 2;
    const i64 step = D * 2;
    const unsigned int idw = P == 1 ? id : id | ((unsigned int)id << 16);
    auto word = [&q]() -> unsigned int {
        return P == 1 ? __ldg((const unsigned short*)q) : __ldg((const unsigned int*)q);
    };
    if (n == S) {
#pragma unroll
        for (int r = 0; r < S; r++) {
            v[r] = word();
            q += step;
        }
    } else {
#pragma unroll
        for (int r = 0; r < S; r++) {
            v[r] = r < n ? word() : idw;
            q += step;
        }
    }
}

// seq_chunk walks channel ch's steps [t0, t0 + n) by the recurrence from
// the log state m, from memory, storing each output.
template <int DT>
__device__ __forceinline__ void seq_chunk(const void* __restrict__ lc, const void* __restrict__ lv,
                                          void* __restrict__ h, i64 o, i64 ov, i64 D, int n, float& m) {
    for (int r = 0; r < n; r++) {
        m = logaddexp(ld<DT>(lc, o + (i64)r * D) + m, ld<DT>(lv, ov + (i64)r * D));
        st<DT>(h, o + (i64)r * D, exp_fast(m));
    }
}

// log_fwd16 is the 16-bit forward, P channels a thread (elementwise.cuh).
template <int DT, int P>
__device__ __forceinline__ void log_fwd16(const void* __restrict__ lc, const void* __restrict__ lv,
                                          void* __restrict__ h, i64 T, i64 D) {
    constexpr int S = SEG_LOG_FWD;
    DYNAMIC_SHARED(agg);  // per channel: P[C][TILE], then Q[C][TILE] (agg_at)
    Lane l = lane_of<P>(T, D);
    const i64 base = l.b * T * D + l.d;         // (b, t, d) of lc and h
    const i64 vbase = l.b * (T + 1) * D + l.d;  // (b, s, d) of lv
    float carry[P];                             // log states entering the segment
#pragma unroll
    for (int ch = 0; ch < P; ch++) {
        carry[ch] = l.on ? ld<DT>(lv, vbase + ch) : 0.0f;
    }
    const i64 span = (i64)l.C * S;
    // The raw steps of the thread's chunk of the next segment, loaded while
    // the current one is folded, re-scanned and stored; steps past T are
    // the identity: lc = 0, lv = -Inf.
    const unsigned short cid = narrow_sw<DT>(0.0f), vid = narrow_sw<DT>(-INFINITY);
    unsigned int rc[S], rv[S];
    {
        const i64 t0 = (i64)l.c * S;
        const int n = steps_in(l, t0, T, S);
        ld_raw<DT, P>(lc, base + t0 * D, D, n, cid, rc);
        ld_raw<DT, P>(lv, vbase + (t0 + 1) * D, D, n, vid, rv);
    }
    for (i64 s0 = 0; s0 < T; s0 += span) {
        const i64 t0 = s0 + (i64)l.c * S;
        const i64 o = base + t0 * D;
        const i64 ov = vbase + (t0 + 1) * D;
        const int n = steps_in(l, t0, T, S);
        float cv[P][S], vv[P][S];
        float Pc[P], M[P], A[P];
#pragma unroll
        for (int ch = 0; ch < P; ch++) {
#pragma unroll
            for (int r = 0; r < S; r++) {
                cv[ch][r] = widen<DT>((unsigned short)(rc[r] >> (16 * ch)));
                vv[ch][r] = widen<DT>((unsigned short)(rv[r] >> (16 * ch)));
            }
            chunk_terms(cv[ch], vv[ch], Pc[ch], M[ch], A[ch]);
        }
        if (s0 + span < T) {
            const i64 t1 = t0 + span;
            const int n1 = steps_in(l, t1, T, S);
            ld_raw<DT, P>(lc, base + t1 * D, D, n1, cid, rc);
            ld_raw<DT, P>(lv, vbase + (t1 + 1) * D, D, n1, vid, rv);
        }
        float m[P];
#pragma unroll
        for (int ch = 0; ch < P; ch++) {
            m[ch] = carry[ch];
        }
        const bool last = l.c == l.C - 1;
        if (l.C > 1) {
            // Chunk c folds the aggregates of chunks 0..c-1 into the
            // carry-in; the last chunk's aggregate is nobody's, so it
            // skips that pass, and its slot in agg carries its final state,
            // the next segment's carry, to the others.
            if (!last) {
#pragma unroll
                for (int ch = 0; ch < P; ch++) {
                    float Q;
                    if (!terms_map(vv[ch], Pc[ch], M[ch], Q)) {
                        // Not finite: the scan from -Inf, of the raw steps
                        // from memory (the re-scan then takes the recurrence
                        // too).
                        Q = -INFINITY;
                        for (int r = 0; r < n; r++) {
                            Q = logaddexp(ld<DT>(lc, o + ch + (i64)r * D) + Q, ld<DT>(lv, ov + ch + (i64)r * D));
                        }
                    }
                    agg[agg_at<P>(l, 0, l.c, ch)] = Pc[ch];
                    agg[agg_at<P>(l, 1, l.c, ch)] = Q;
                }
            }
            __syncthreads();
#pragma unroll
            for (int ch = 0; ch < P; ch++) {
                bool ok = true;
                for (int i = 0; i < l.c; i++) {
                    const float Pi = agg[agg_at<P>(l, 0, i, ch)], Qi = agg[agg_at<P>(l, 1, i, ch)];
                    ok = ok && agg_ok(Pi, Qi);
                    m[ch] = logaddexp(Pi + m[ch], Qi);
                }
                if (!ok && l.on) {
                    // As in log_fwd: the earlier steps of the segment by the
                    // recurrence, from memory.
                    m[ch] = carry[ch];
                    for (i64 t = s0; t < t0; t++) {
                        m[ch] = logaddexp(ld<DT>(lc, base + ch + t * D) + m[ch], ld<DT>(lv, vbase + ch + (t + 1) * D));
                    }
                }
            }
        }
        // Re-scan from the carry-in and store h_t = exp(m_t): in the
        // closed form, or else by the recurrence, from memory.
        bool ok[P];
        rescan_fast<DT>(cv, vv, M, A, m, ok, h, o, D, n);
#pragma unroll
        for (int ch = 0; ch < P; ch++) {
            if (!ok[ch]) {
                seq_chunk<DT>(lc, lv, h, o + ch, ov + ch, D, n, m[ch]);
            }
        }
        if (l.C == 1) {
#pragma unroll
            for (int ch = 0; ch < P; ch++) {
                carry[ch] = m[ch];
            }
        } else {
            // Nobody reads the last chunk's slots before this barrier, and
            // they are rewritten only after the next segment's first one.
            if (last) {
#pragma unroll
                for (int ch = 0; ch < P; ch++) {
                    agg[agg_at<P>(l, 0, l.c, ch)] = m[ch];
                }
            }
            __syncthreads();
#pragma unroll
            for (int ch = 0; ch < P; ch++) {
                carry[ch] = agg[agg_at<P>(l, 0, l.C - 1, ch)];
            }
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

#define PARALLEL_SCAN_LOG_BWD(NAME, DT)                                                          \
    extern "C" __global__ void __launch_bounds__(1024, 1)                                           \
        parallel_scan_log_bwd_##NAME(const void* lc, const void* lv, const void* h,              \
                                     const void* dh, void* dlc, void* dlv, i64 T, i64 D) {       \
        log_bwd<DT>(lc, lv, h, dh, dlc, dlv, T, D);                                              \
    }

// The 16-bit forwards, one channel a thread, and two (_pairs, D even).
#define PARALLEL_SCAN_LOG_FWD16(NAME, DT)                                                        \
    extern "C" __global__ void __launch_bounds__(LOG_FWD16_MAX_THREADS, 1)                          \
        parallel_scan_log_fwd_##NAME(const void* lc, const void* lv, void* h, i64 T, i64 D) {    \
        log_fwd16<DT, 1>(lc, lv, h, T, D);                                                       \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(LOG_FWD16_PAIRS_MAX_THREADS, 1)                    \
        parallel_scan_log_fwd_##NAME##_pairs(const void* lc, const void* lv, void* h, i64 T,     \
                                             i64 D) {                                            \
        log_fwd16<DT, 2>(lc, lv, h, T, D);                                                       \
    }

extern "C" __global__ void __launch_bounds__(1024, 1)
    parallel_scan_log_fwd_f32(const void* lc, const void* lv, void* h, i64 T, i64 D) {
    log_fwd<DT_F32>(lc, lv, h, T, D);
}
PARALLEL_SCAN_LOG_BWD(f32, DT_F32)
PARALLEL_SCAN_LOG_FWD16(f16, DT_F16)
PARALLEL_SCAN_LOG_BWD(f16, DT_F16)
PARALLEL_SCAN_LOG_FWD16(bf16, DT_BF16)
PARALLEL_SCAN_LOG_BWD(bf16, DT_BF16)
