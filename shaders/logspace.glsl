// Log-space helpers for parallel_scan_log.

#define NEG_INF uintBitsToFloat(0xff800000u)

// log(exp(x) + exp(y)) without overflow; NaN in, NaN out; -inf is the
// identity.
float logaddexp(float x, float y) {
    if (isnan(x) || isnan(y)) {
        return x + y;
    }
    float m = max(x, y);
    float n = min(x, y);
    if (isinf(m)) {
        return m;
    }
    return m + log(1.0 + exp(n - m));
}

vec2 logaddexp(vec2 x, vec2 y) {
    return vec2(logaddexp(x.x, y.x), logaddexp(x.y, y.y));
}

#define LOG2E 1.4426950408889634
#define LN2 0.6931471805599453

// The closed form of a chunk (parallel_scan_log_fwd.comp) is used where
// it is as good as the recurrence: sum |c_r|, |M| and |lh| at most
// FAST_LOG_RANGE (its exponents are then rounded no worse than the
// recurrence's own states) and lh >= M - FAST_LOG_RANGE (the bracket
// stays above exp(-FAST_LOG_RANGE) and keeps its relative precision);
// and, checked after, where every output came out finite (an exp(S_r + R)
// past the float range whose product would not be). Natural log units.
#define FAST_LOG_RANGE 64.0

bool fast_ok(float m, float a, float lh) {
    // False for NaN too.
    return a <= FAST_LOG_RANGE && abs(m) <= FAST_LOG_RANGE && abs(lh) <= FAST_LOG_RANGE &&
           lh >= m - FAST_LOG_RANGE;
}

bool fast_ok(vec2 m, vec2 a, vec2 lh) {
    return fast_ok(m.x, a.x, lh.x) && fast_ok(m.y, a.y, lh.y);
}

bool all_finite(float x) {
    return abs(x) < POS_INF;
}

bool all_finite(vec2 x) {
    return all_finite(x.x) && all_finite(x.y);
}

// chunk_q is q of a chunk's map from its sum s, its largest term m and
// e = sum_r exp(w_r - m): s + m + log(e), -inf when every log_value is
// -inf (m = -inf). Where the form does not hold (s not finite, or m +inf
// or NaN) it is NaN, so that the segment takes the recurrence.
float chunk_q(float s, float m, float e) {
    if (!(abs(s) < POS_INF && m < POS_INF)) {
        return uintBitsToFloat(0x7fc00000u);
    }
    return m == NEG_INF ? NEG_INF : s + m + log2(e) * LN2;
}

vec2 chunk_q(vec2 s, vec2 m, vec2 e) {
    return vec2(chunk_q(s.x, m.x, e.x), chunk_q(s.y, m.y, e.y));
}
