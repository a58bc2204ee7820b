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
