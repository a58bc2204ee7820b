// The minGRU gates in log space (mingru_scan), from the pre-activations
// k and x:
//   log(1 - z) = -softplus(k),  log z = -softplus(-k),
//   log g(x)   = log(x + 0.5) for x >= 0, log sigmoid(x) below,
// with softplus(k) = max(k, 0) + log1p(exp(-|k|)), so that nothing
// overflows, and log1p taken from its series where exp(-|k|) is small
// (a decay near 1 keeps its relative precision). NaN propagates; +-Inf
// give the limits.

// log(1 + e) for e in [0, 1] (NaN in, NaN out).
float log1p_unit(float e) {
    if (e < 0.0625) {
        return e * (1.0 - e * (0.5 - e * (1.0 / 3.0 - e * (0.25 - e * (0.2 - e * (1.0 / 6.0))))));
    }
    return log(1.0 + e);
}

// log1p(exp(-|k|)), the part of softplus(k) and softplus(-k) they share.
float softplus_tail(float k) {
    return log1p_unit(exp(-abs(k)));
}

// max(k, 0) that is 0 for NaN (the tail carries the NaN).
float pos_part(float k) {
    return k > 0.0 ? k : 0.0;
}

// log(1 - z) = -softplus(k).
float log_keep(float k) {
    return -(pos_part(k) + softplus_tail(k));
}

// log z + log g(x).
float log_take(float k, float x) {
    float lz = -(pos_part(-k) + softplus_tail(k));
    float lg = x >= 0.0 ? log(x + 0.5) : x - log1p_unit(exp(x));
    return lz + lg;
}

vec2 log_keep(vec2 k) {
    return vec2(log_keep(k.x), log_keep(k.y));
}

vec2 log_take(vec2 k, vec2 x) {
    return vec2(log_take(k.x, x.x), log_take(k.y, x.y));
}

// log h0 for h0 >= 0 (log 0 = -inf), NaN for a negative or NaN h0.
float log_state(float h) {
    return h > 0.0 ? log(h) : (h == 0.0 ? NEG_INF : uintBitsToFloat(0x7fc00000u));
}

vec2 log_state(vec2 h) {
    return vec2(log_state(h.x), log_state(h.y));
}

// sigmoid(k) = 1 / (1 + exp(-k)): 0 and 1 at the infinities, NaN for NaN.
float sigmoid(float k) {
    return 1.0 / (1.0 + exp(-k));
}

vec2 sigmoid(vec2 k) {
    return vec2(sigmoid(k.x), sigmoid(k.y));
}

// g(x) and g'(x): x + 0.5 and 1 for x >= 0, sigmoid(x) and
// sigmoid(x) (1 - sigmoid(x)) below.
float mingru_g(float x, out float dg) {
    if (x >= 0.0) {
        dg = 1.0;
        return x + 0.5;
    }
    float s = sigmoid(x);
    dg = s * (1.0 - s);
    return s;
}

vec2 mingru_g(vec2 x, out vec2 dg) {
    float dx, dy;
    vec2 g = vec2(mingru_g(x.x, dx), mingru_g(x.y, dy));
    dg = vec2(dx, dy);
    return g;
}
