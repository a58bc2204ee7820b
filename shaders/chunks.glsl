// Layout of the elementwise kernels (linear_scan, parallel_scan_log).
//
// A workgroup owns one lane: batch entry b and a tile of TILE contiguous
// channels, so neighbouring invocations read neighbouring addresses of the
// (B,T,D) tensors. The T steps are cut into CHUNKS chunks of
// L = ceil(T/CHUNKS) steps; invocation id = j*TILE + c scans chunk j of
// channel c. WG must equal TILE*CHUNKS. With CHUNKS = 1 there is a single
// pass; otherwise pass 1 computes each chunk's aggregate from a zero carry
// into shared memory, one barrier, then each invocation folds the
// aggregates of the chunks before its own (in order) into its carry-in and
// rescans its chunk, writing outputs. No workgroup waits on another, and
// nothing depends on the subgroup size.

layout(constant_id = 3) const uint CHUNKS = 1;
layout(constant_id = 4) const uint TILE = 32;

shared float sh_p[WG];
shared float sh_q[WG];

struct Lane {
    bool live;  // the channel exists (the last tile may be partial)
    uint b;       // batch entry within the slice
    uint d;       // channel
    uint c;       // channel within the tile
    uint j;       // chunk
    uint t0, t1;  // steps [t0, t1) of this chunk
};

Lane lane_of_invocation() {
    Lane l;
    uint tiles = (pc.N + TILE - 1u) / TILE;
    uint wg = workgroup_index();
    l.b = wg / tiles;
    uint tile = wg - l.b * tiles;
    l.c = gl_LocalInvocationID.x % TILE;
    l.j = gl_LocalInvocationID.x / TILE;
    l.d = tile * TILE + l.c;
    l.live = l.b < pc.B && l.d < pc.N;
    uint len = (pc.T + CHUNKS - 1u) / CHUNKS;
    l.t0 = min(l.j * len, pc.T);
    l.t1 = min(l.t0 + len, pc.T);
    return l;
}

// Whether a chunk aggregate can be composed with others. Composition is
// exact algebra but not IEEE-identical to the sequential recurrence once an
// aggregate is infinite or NaN: it can form inf - inf where the sequential
// order never does. Each kernel defines it.
bool agg_ok(float p, float q);

// When any chunk of this invocation's channel has an aggregate that fails
// agg_ok, the channel falls back to one sequential pass over all of T by
// its chunk-0 invocation (the others of the channel stop), so that NaN and
// Inf propagate exactly as in the sequential reference. Returns whether
// this invocation runs that pass; call after the barrier.
bool sequential_fallback(inout Lane l) {
    if (CHUNKS == 1u) {
        return false;
    }
    bool ok = true;
    for (uint k = 0u; k < CHUNKS; k++) {
        ok = ok && agg_ok(sh_p[k * TILE + l.c], sh_q[k * TILE + l.c]);
    }
    if (ok) {
        return false;
    }
    l.live = l.live && l.j == 0u;
    l.t0 = 0u;
    l.t1 = pc.T;
    return true;
}
