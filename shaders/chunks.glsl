// Layout of the elementwise kernels (linear_scan, parallel_scan_log).
//
// A workgroup owns one lane: batch entry b and a tile of TILE contiguous
// channels, so neighbouring invocations read neighbouring addresses of the
// (B,T,D) tensors. Invocation id = j*TILE + c serves channel c of the tile
// and chunk j; WG must equal TILE*CHUNKS.
//
// The workgroup walks T in segments of CHUNKS*L steps, in order (reverse
// order for the backward kernels). In a segment, invocation j holds the L
// steps [s0 + j*L, s0 + (j+1)*L) of its channel in registers: it loads
// them once, computes their aggregate map from a zero carry, the
// aggregates meet in shared memory after one barrier, and every invocation
// of the channel folds them in order from the segment's carry: the fold up
// to its own chunk is its carry-in (it then applies its steps from
// registers and stores), the fold over all chunks is the next segment's
// carry (computed alike by every invocation of the channel, so nothing is
// broadcast). A second barrier frees the shared memory for the next
// segment. Every input element is read once. With CHUNKS = 1 there is no
// shared memory and the scan is the sequential recurrence. Steps past T are
// the identity map. No workgroup waits on another, and nothing depends on
// the subgroup size.

layout(constant_id = 3) const uint CHUNKS = 1;
layout(constant_id = 4) const uint TILE = 32;

// Steps per invocation and segment, held in registers (a kernel may set
// STEPS before including this file). Loops over them carry [[unroll]], so
// the SPIR-V itself is unrolled and the arrays are plain values.
#ifndef STEPS
#define STEPS 16u
#endif
const uint L = STEPS;

// Scalar chunk aggregates (a kernel with larger aggregates defines
// CUSTOM_AGGREGATES and declares its own).
#ifndef CUSTOM_AGGREGATES
shared float sh_p[WG];
shared float sh_q[WG];
#endif

struct Lane {
    bool live;  // the channel exists (the last tile may be partial)
    uint b;     // batch entry within the slice
    uint d;     // channel
    uint c;     // channel within the tile
    uint j;     // chunk within a segment
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
    return l;
}

// Segments of CHUNKS*L steps covering T.
uint segments() {
    return (pc.T + CHUNKS * L - 1u) / (CHUNKS * L);
}

// Whether a chunk aggregate can be composed with others. Composition is
// exact algebra but not IEEE-identical to the sequential recurrence once an
// aggregate is infinite or NaN: it can form inf - inf where the sequential
// order never does. Each kernel defines it. When an aggregate of a segment
// fails it, every invocation of the channel walks the whole segment
// sequentially from the segment's carry, reading from memory and storing
// only its own steps, so that NaN and Inf propagate exactly as in the
// sequential reference.
#ifndef CUSTOM_AGGREGATES
bool agg_ok(float p, float q);
#endif
