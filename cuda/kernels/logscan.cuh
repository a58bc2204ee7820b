// The log-space scan of parallel_scan_log and mingru_scan:
//
//	m_{-1} = log h_{-1},  m_t = logaddexp(c_t + m_{t-1}, v_t),  h_t = exp(m_t)
//
// with c_t = log a_t and v_t = log b_t, and its backward, the linear
// reverse scan with a_t. The kernels read their inputs through a policy
// In that turns the stored steps into (c_t, v_t) as they are loaded
// (parallel_scan_log.cu: the stored log_coeffs and log_values; mingru_scan.cu:
// the gates of the pre-activations k and x), so both ops share one body.
// A chunk's map is m -> logaddexp(P + m, Q) with P the sum of its c_t and
// Q its scan from m = -Inf; maps compose like the affine ones (in log
// space). See elementwise.cuh for the lane and chunk layout. The
// exponentials and logarithms are the GPU's fast approximations
// (common.cuh).
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
//
// A forward policy In has the pointers c and v of the stored steps, VS
// (step t's v is row t + VS of v's (B, T + VS, D) layout, c's and h's
// row t of (B, T, D)), C_ID and V_ID (the stored values of an identity
// step), gates(c, v) (stored -> log space, in place) and init(l, vbase,
// D, ch) (the log state entering channel ch's lane, for a lane inside D).
// A backward policy is described above log_bwd.
#pragma once
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

// step_from_memory returns logaddexp(c + m, v) for the step whose c is
// element e of in.c and whose v is element ev of in.v.
template <int DT, class In>
__device__ __forceinline__ float step_from_memory(const In& in, i64 e, i64 ev, float m) {
    float c = ld<DT>(in.c, e), v = ld<DT>(in.v, ev);
    In::gates(c, v);
    return logaddexp(c + m, v);
}

template <int DT, class In>
__device__ __forceinline__ void log_fwd(const In& in, void* __restrict__ h, i64 T, i64 D) {
    DYNAMIC_SHARED(agg);
    Lane l = lane_of<1>(T, D);
    const i64 base = l.b * T * D + l.d;               // (b, t, d) of c and h
    const i64 vbase = l.b * (T + In::VS) * D + l.d;  // (b, s, d) of v
    float carry = 0.0f;                               // log state entering the segment
    if (l.on) {
        carry = in.template init<DT>(l, vbase, D, 0);
    }
    const i64 span = (i64)l.C * SEG_LOG_FWD;
    for (i64 s0 = 0; s0 < T; s0 += span) {
        const i64 t0 = s0 + (i64)l.c * SEG_LOG_FWD;
        const i64 o = base + t0 * D;
        const int n = steps_in(l, t0, T, SEG_LOG_FWD);
        // Steps past T are the identity (c = 0, v = -Inf in log space).
        float cv[SEG_LOG_FWD], vv[SEG_LOG_FWD];
        ld_steps<DT>(in.c, o, D, 0, n, In::C_ID, cv);
        ld_steps<DT>(in.v, vbase + (t0 + In::VS) * D, D, 0, n, In::V_ID, vv);
#pragma unroll
        for (int r = 0; r < SEG_LOG_FWD; r++) {
            In::gates(cv[r], vv[r]);
        }
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
                    m = step_from_memory<DT>(in, base + t * D, vbase + (t + In::VS) * D, m);
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
template <int DT, class In>
__device__ __forceinline__ void seq_chunk(const In& in, void* __restrict__ h, i64 o, i64 ov, i64 D, int n,
                                          float& m) {
    for (int r = 0; r < n; r++) {
        m = step_from_memory<DT>(in, o + (i64)r * D, ov + (i64)r * D, m);
        st<DT>(h, o + (i64)r * D, exp_fast(m));
    }
}

// log_fwd16 is the 16-bit forward, P channels a thread (elementwise.cuh).
template <int DT, int P, class In>
__device__ __forceinline__ void log_fwd16(const In& in, void* __restrict__ h, i64 T, i64 D) {
    constexpr int S = SEG_LOG_FWD;
    constexpr int VS = In::VS;
    DYNAMIC_SHARED(agg);  // per channel: P[C][TILE], then Q[C][TILE] (agg_at)
    Lane l = lane_of<P>(T, D);
    const i64 base = l.b * T * D + l.d;          // (b, t, d) of c and h
    const i64 vbase = l.b * (T + VS) * D + l.d;  // (b, s, d) of v
    float carry[P];                              // log states entering the segment
#pragma unroll
    for (int ch = 0; ch < P; ch++) {
        carry[ch] = l.on ? in.template init<DT>(l, vbase, D, ch) : 0.0f;
    }
    const i64 span = (i64)l.C * S;
    // The raw steps of the thread's chunk of the next segment, loaded while
    // the current one is folded, re-scanned and stored; steps past T are
    // the identity.
    const unsigned short cid = narrow_sw<DT>(In::C_ID), vid = narrow_sw<DT>(In::V_ID);
    unsigned int rc[S], rv[S];
    {
        const i64 t0 = (i64)l.c * S;
        const int n = steps_in(l, t0, T, S);
        ld_raw<DT, P>(in.c, base + t0 * D, D, n, cid, rc);
        ld_raw<DT, P>(in.v, vbase + (t0 + VS) * D, D, n, vid, rv);
    }
    for (i64 s0 = 0; s0 < T; s0 += span) {
        const i64 t0 = s0 + (i64)l.c * S;
        const i64 o = base + t0 * D;
        const i64 ov = vbase + (t0 + VS) * D;
        const int n = steps_in(l, t0, T, S);
        float cv[P][S], vv[P][S];
        float Pc[P], M[P], A[P];
#pragma unroll
        for (int ch = 0; ch < P; ch++) {
#pragma unroll
            for (int r = 0; r < S; r++) {
                cv[ch][r] = widen<DT>((unsigned short)(rc[r] >> (16 * ch)));
                vv[ch][r] = widen<DT>((unsigned short)(rv[r] >> (16 * ch)));
                In::gates(cv[ch][r], vv[ch][r]);
            }
            chunk_terms(cv[ch], vv[ch], Pc[ch], M[ch], A[ch]);
        }
        if (s0 + span < T) {
            const i64 t1 = t0 + span;
            const int n1 = steps_in(l, t1, T, S);
            ld_raw<DT, P>(in.c, base + t1 * D, D, n1, cid, rc);
            ld_raw<DT, P>(in.v, vbase + (t1 + VS) * D, D, n1, vid, rv);
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
                            Q = step_from_memory<DT>(in, o + ch + (i64)r * D, ov + ch + (i64)r * D, Q);
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
                        m[ch] = step_from_memory<DT>(in, base + ch + t * D, vbase + ch + (t + VS) * D, m[ch]);
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
                seq_chunk<DT>(in, h, o + ch, ov + ch, D, n, m[ch]);
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

// The backward is the linear reverse scan with the decays a_t:
//
//	G_t = dh_t + a_{t+1} G_{t+1}
//
// and each step's gradients formed from G_t, the step's inputs and
// h_{t-1} (from the stored output h; h_{-1} is the policy's). The carry
// between steps is g = a_t G_t. Segments are walked from the last to the
// first.
//
// A backward policy In has the pointers c, v (the stored inputs, in the
// forward's layouts), h, dh, dc and dv (the gradients of c's and v's
// steps, in their layouts), VS, C_ID and V_ID (an identity step's stored
// c and v: its decay is 1), and
//   - init(l, vbase, D): for a lane inside D, reads what it keeps of h_{-1};
//   - prep(c, v, p, first): turns a step's stored c and v and p = h_{t-1}
//     (unused where first, at step 0) into c = a_t and two terms v and p;
//   - grads(G, a, v, p): turns the terms into the gradients of the step's
//     v and c;
//   - decay(c): a_t of a stored c, as prep gives it;
//   - init_grad(l, vbase, D, dc0, g): for a lane inside D, stores the
//     gradient of h_{-1} from step 0's gradient of c and g = a_0 G_0.
template <int DT, class In>
__device__ __forceinline__ void log_bwd(In in, i64 T, i64 D) {
    DYNAMIC_SHARED(agg);
    Lane l = lane_of<1>(T, D);
    const i64 base = l.b * T * D + l.d;
    const i64 vbase = l.b * (T + In::VS) * D + l.d;
    if (l.on) {
        in.template init<DT>(l, vbase, D);
    }
    float carry = 0.0f;
    const i64 span = (i64)l.C * SEG_BWD;
    for (i64 s0 = (T - 1) / span * span; s0 >= 0; s0 -= span) {
        const i64 t0 = s0 + (i64)l.c * SEG_BWD;
        const i64 o = base + t0 * D;
        const i64 ov = vbase + (t0 + In::VS) * D;
        const int n = steps_in(l, t0, T, SEG_BWD);
        // Steps past T are the identity: a = 1, dh = 0. pv holds h_{t-1}
        // (1 where it does not exist).
        float cv[SEG_BWD], dv[SEG_BWD], vv[SEG_BWD], pv[SEG_BWD];
        ld_steps<DT>(in.c, o, D, 0, n, In::C_ID, cv);
        ld_steps<DT>(in.dh, o, D, 0, n, 0.0f, dv);
        ld_steps<DT>(in.v, ov, D, 0, n, In::V_ID, vv);
        ld_steps<DT>(in.h, o - D, D, t0 == 0 ? 1 : 0, n, 1.0f, pv);
#pragma unroll
        for (int r = 0; r < SEG_BWD; r++) {
            in.prep(cv[r], vv[r], pv[r], r == 0 && t0 == 0);
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
        // The gradients of v into vv, of c into pv.
        float G = 0.0f;
#pragma unroll
        for (int r = SEG_BWD - 1; r >= 0; r--) {
            G = dv[r] + g;
            in.grads(G, cv[r], vv[r], pv[r]);
            g = cv[r] * G;
        }
        st_steps<DT>(in.dv, ov, D, n, vv);
        st_steps<DT>(in.dc, o, D, n, pv);
        if (l.C == 1) {
            carry = g;
        }
        if (t0 == 0 && l.on) {
            // This chunk starts at step 0: g is a_0 G_0.
            in.template init_grad<DT>(l, vbase, D, pv[0], g);
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
            const i64 e = base + t * D, ev = vbase + (t + In::VS) * D;
            const float G = ld<DT>(in.dh, e) + g;
            float c = ld<DT>(in.c, e), a;
            if ((int)((t / SEG_BWD) % l.C) == l.c) {
                float v = ld<DT>(in.v, ev), p = t == 0 ? 0.0f : ld<DT>(in.h, e - D);
                in.prep(c, v, p, t == 0);
                a = c;
                in.grads(G, a, v, p);
                st<DT>(in.dv, ev, v);
                st<DT>(in.dc, e, p);
                if (t == 0) {
                    in.template init_grad<DT>(l, vbase, D, p, a * G);
                }
            } else {
                a = In::decay(c);
            }
            g = a * G;
        }
    }
}
