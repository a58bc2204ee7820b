// Layout of the subgroup Givens kernels (givens_scan_sg_*), which the host
// runs where the device's subgroups support shuffles in compute shaders and
// hold at least k/2 invocations (see givensSGLayout in vk/plan.go); the
// kernels of givens.glsl serve the other devices.
//
// A lane is a block (b, n) of k channels, served by F = k/2 invocations of
// one subgroup: invocation q holds the pair of channels (2q, 2q+1) of the
// state. The first layer of rotations, the pairs (0,1), (2,3), ..., is then
// local to each invocation (angle q); the second layer, the pairs
// (1,2), (3,4), ..., by the angles F + q, joins channel 2q+1 of invocation
// q and channel 2q+2 of invocation q+1, which exchange one value each way
// through subgroup shuffles (and the cosine and sine of the angle, which
// invocation q computes). So each invocation computes two sines and
// cosines per step, not k - 1, and each owns the two adjacent elements of
// a step of sigma, x and h: whole 32-bit words of the 16-bit types, stored
// with plain stores. Consecutive invocations read consecutive pairs, so a
// subgroup's loads of one step are contiguous.
//
// Latency: an invocation keeps a ring of D steps of inputs in registers
// (D = 16 on a GPU; a CPU device takes a shallower ring, which compiles
// much faster there),
// loaded as stored (raw 16-bit words, widened only where a step uses them):
// the loads of step t + D are issued at step t, so D steps of loads are in
// flight while the recurrence (a few FMAs and shuffles per step) runs.
// Pass 1 of the chunked kernels (below) applies each step to k + 1
// columns, work enough to cover the loads of one step ahead: it takes two
// slots of the ring, and keeps the pipeline small enough to build quickly.
//
// T is cut into CHUNKS chunks of ceil(T/CHUNKS) steps when lanes are few. A
// workgroup holds LPW = WG/(CHUNKS*F) consecutive lanes times CHUNKS
// chunks; the F invocations of a (chunk, lane) group are consecutive in
// the subgroup. Pass 1 computes each chunk's aggregate map h -> P h + S
// from a zero carry (invocation q builds rows 2q and 2q+1 of P, from the
// identity, and of S: every step applied to k + 1 columns), the
// aggregates meet in shared memory, a scan over the chunks composes them
// (scan_chunks), each invocation forms its chunk's carry from the
// composed aggregate of the chunks before it (after it, backward) and
// rescans its chunk from there, writing the outputs. With CHUNKS = 1
// there is no shared memory and no barrier.
//
// Invocations are numbered within the workgroup by subgroup (subgroup id
// times subgroup size plus the invocation's index in it), so the F
// invocations of a lane share a subgroup whatever order the device forms
// subgroups in; the host makes WG a multiple of the subgroup size. Every
// loop bound is uniform over the F invocations of a lane, so a shuffle's
// source is always active.

#include "sincos.glsl"

#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require

// The host builds each subgroup Givens kernel twice: with CHUNKED_KERNEL
// defined (its chunk count a specialization constant) for the chunked
// layouts, and without it for CHUNKS = 1, where none of the chunked
// passes' code is in the module at all.
#ifdef CHUNKED_KERNEL
layout(constant_id = 3) const uint CHUNKS = 1;
#else
const uint CHUNKS = 1u;
#endif
// Steps of inputs in flight per invocation (the ring's depth).
layout(constant_id = 9) const uint D = 16;

const uint F = K / 2u;                    // invocations per lane
const uint GPW = WG / F;                  // (chunk, lane) groups per workgroup
const uint LPW = GPW / CHUNKS;            // lanes per workgroup

#ifdef CHUNKED_KERNEL
// Aggregates per (chunk, lane) group: P as kxk row-major and S, padded
// by 4 words (16-byte aligned slots).
const uint PSTRIDE = K * K + 4u;
const uint SSTRIDE = K + 4u;
// P is held as vec4 (PSTRIDE and K * K are multiples of 4), so that the
// scan reads a row of the other chunk's P four words a load, and a
// chunk's rows are published four words a store; p_at and p_set reach one
// word. On an H200 at the long-T shape (64 chunks) this took the forward
// from 22.8 to 22.2 us and the forward and backward from 53.5 to 51.5 us
// against one word a load.
shared vec4 sh_P[GPW * PSTRIDE / 4u];
shared float sh_S[GPW * SSTRIDE];
float p_at(uint i) { return sh_P[i >> 2u][i & 3u]; }
void p_set(uint i, float x) { sh_P[i >> 2u][i & 3u] = x; }
// Per lane of the workgroup: whether its chunks' aggregates and carries
// were all finite (see lane_finite).
shared uint sh_ok[LPW];

// Pass 1's columns: rows 2q and 2q+1 of the k columns of a chunk's P
// (v0[m], v1[m], m < K) and of S (m = K); then of the composed aggregates.
float v0[K + 1u], v1[K + 1u];
#endif

struct Thr {
    bool live;
    uint b, n;
    uint j;       // chunk
    uint local;   // lane within the workgroup
    uint q;       // this invocation holds channels 2q and 2q+1
    uint up, dn;  // subgroup indices of the invocations of pairs q-1 and q+1 (own at the ends)
    uint t0, t1;  // steps [t0, t1) of the chunk
};

Thr thread_of_invocation() {
    Thr r;
    uint self = gl_SubgroupInvocationID;
    uint slot = gl_SubgroupID * gl_SubgroupSize + self;
    r.q = slot % F;
    uint g = slot / F;
    r.local = g % LPW;
    r.j = g / LPW;
    uint lane = workgroup_index() * LPW + r.local;
    r.b = lane / pc.N;
    r.n = lane - r.b * pc.N;
    r.live = r.b < pc.B;
    r.up = r.q > 0u ? self - 1u : self;
    r.dn = r.q + 1u < F ? self + 1u : self;
    uint len = (pc.T + CHUNKS - 1u) / CHUNKS;
    r.t0 = min(r.j * len, pc.T);
    r.t1 = min(r.t0 + len, pc.T);
    return r;
}

// The (chunk, lane) group of chunk k of this invocation's lane.
uint group_slot(Thr r, uint k) { return k * LPW + r.local; }

bool finite(float x) { return !isnan(x) && !isinf(x); }

// Element index of channel 2q of the lane at step t (k per step), and of
// its first angle (k - 1 per step).
uint elem_index(Thr r, uint t) { return ((r.b * pc.T + t) * pc.N + r.n) * K + 2u * r.q; }
uint angle_index(Thr r, uint t) { return ((r.b * pc.T + t) * pc.N + r.n) * (K - 1u); }
uint init_index(Thr r) { return (r.b * pc.N + r.n) * K; }

#ifdef CHUNKED_KERNEL
// aggregate_init sets v0, v1 to this invocation's rows of the identity
// map (P = I, S = 0), where pass 1 starts, and, in one invocation of each
// lane, the lane's sh_ok to 1 (ordered before any test by the barrier
// after pass 1).
void aggregate_init(Thr r) {
    [[unroll]] for (uint m = 0u; m <= K; m++) {
        v0[m] = (m == 2u * r.q) ? 1.0 : 0.0;
        v1[m] = (m == 2u * r.q + 1u) ? 1.0 : 0.0;
    }
    if (r.j == 0u && r.q == 0u) {
        sh_ok[r.local] = 1u;
    }
}

// aggregate_finite says whether this invocation's rows of its aggregate
// are finite.
bool aggregate_finite() {
    bool fin = true;
    [[unroll]] for (uint m = 0u; m <= K; m++) {
        fin = fin && finite(v0[m]) && finite(v1[m]);
    }
    return fin;
}

// publish writes this invocation's rows of its chunk's aggregate to shared
// memory.
void publish(Thr r) {
    uint g = group_slot(r, r.j);
    if (K % 4u == 0u) {
        [[unroll]] for (uint m = 0u; m < K; m += 4u) {
            sh_P[(g * PSTRIDE + 2u * r.q * K + m) >> 2u] = vec4(v0[m], v0[m + 1u], v0[m + 2u], v0[m + 3u]);
            sh_P[(g * PSTRIDE + (2u * r.q + 1u) * K + m) >> 2u] = vec4(v1[m], v1[m + 1u], v1[m + 2u], v1[m + 3u]);
        }
    } else {
        [[unroll]] for (uint m = 0u; m < K; m++) {
            p_set(g * PSTRIDE + 2u * r.q * K + m, v0[m]);
            p_set(g * PSTRIDE + (2u * r.q + 1u) * K + m, v1[m]);
        }
    }
    sh_S[g * SSTRIDE + 2u * r.q] = v0[K];
    sh_S[g * SSTRIDE + 2u * r.q + 1u] = v1[K];
}

// scan_chunks, called by every invocation of the workgroup after the
// aggregates are published and a barrier, replaces each chunk's aggregate
// by the composition of it and all the chunks before it (after it when
// reverse, as the backward's carries run): an inclusive scan over the
// chunks of a lane, log2(CHUNKS) rounds of composing a chunk's aggregate
// with that of the chunk d before it (d = 1, 2, 4, ...):
// (P, S) after (P', S') is (P P', P S' + S). Invocation q computes rows 2q
// and 2q+1 of the composition from its own rows and the other chunk's
// whole aggregate, read from shared memory; a barrier separates each
// round's reads from its writes, another its writes from the next reads.
// A chain of CHUNKS matrix-vector products through the carries would
// apply the same aggregates with less arithmetic, but one after the
// other: at the long-T shape's 64 chunks it took 10.8 µs of a 28.2 µs
// forward on an H200.
void scan_chunks(Thr r, bool reverse) {
    for (uint d = 1u; d < CHUNKS; d *= 2u) {
        bool has = reverse ? r.j + d < CHUNKS : r.j >= d;
        float n0[K + 1u], n1[K + 1u];
        if (has) {
            uint g = group_slot(r, reverse ? r.j + d : r.j - d);
            [[unroll]] for (uint c = 0u; c < K; c++) {
                n0[c] = 0.0;
                n1[c] = 0.0;
            }
            n0[K] = v0[K];
            n1[K] = v1[K];
            [[unroll]] for (uint m = 0u; m < K; m++) {
                if (K % 4u == 0u) {
                    // Row m of the other chunk's P, four words a load.
                    [[unroll]] for (uint c = 0u; c < K; c += 4u) {
                        vec4 p = sh_P[(g * PSTRIDE + m * K + c) >> 2u];
                        [[unroll]] for (uint i = 0u; i < 4u; i++) {
                            n0[c + i] += v0[m] * p[i];
                            n1[c + i] += v1[m] * p[i];
                        }
                    }
                } else {
                    [[unroll]] for (uint c = 0u; c < K; c++) {
                        float p = p_at(g * PSTRIDE + m * K + c);
                        n0[c] += v0[m] * p;
                        n1[c] += v1[m] * p;
                    }
                }
                float sv = sh_S[g * SSTRIDE + m];
                n0[K] += v0[m] * sv;
                n1[K] += v1[m] * sv;
            }
        }
        barrier();
        if (has) {
            [[unroll]] for (uint c = 0u; c <= K; c++) {
                v0[c] = n0[c];
                v1[c] = n1[c];
            }
            publish(r);
        }
        barrier();
    }
}

// lane_finite: every invocation of a lane that found its aggregate or its
// carry not finite clears the lane's sh_ok; after the barrier that
// follows, every invocation of the lane reads the same answer. Composing
// aggregates is not IEEE-identical to the sequential recurrence once a
// value is infinite or NaN (it can form inf - inf or 0 * inf), and P h0
// is not the recurrence's arithmetic on an infinite h0, so such a lane
// takes one sequential walk by its chunk-0 invocations instead. (A
// non-finite aggregate or h0 makes the carries after it non-finite, and
// a composition that overflows makes its carry non-finite, so this also
// catches every carry that the scan's order of operations made inf.)
void lane_finite(Thr r, bool fin) {
    if (!fin) {
        atomicAnd(sh_ok[r.local], 0u);
    }
}
#endif

// The second-layer angle this invocation loads: its own, F + q, for
// q < F - 1; the last invocation of a lane has none and loads that of
// q - 1 (a valid element, ignored), so that every load is unconditional.
uint q2(Thr r) { return min(r.q, F - 2u); }

// Raw loads for the ring: RAW holds one element as stored (for 16-bit
// types its word), RAW2 the pair of elements i, i+1 (for 16-bit types one
// word; an odd i joins two words at the load, a branch that the host's
// ALIGNED specialization removes wherever every operand starts at an even
// element, as the host's slicing of the k-wide tensors always gives).
// WIDE and WIDE2 widen them to f32 where a step uses them, WIDE given the
// element's index.
#if defined(DT_F32)
#define RAW float
#define RAW2 vec2
#define LDR(arr, i) arr[(i)]
#define LDR2(arr, i) vec2(arr[(i)], arr[(i) + 1u])
#define WIDE(r, i) (r)
#define WIDE2(r) (r)
#define ZERO2 vec2(0.0)
#else
#define RAW uint
#define RAW2 uint
#define LDR(arr, i) arr[(i) >> 1]
#define LDR2(arr, i) ((!ALIGNED && ((i) & 1u) != 0u) ? ((arr[(i) >> 1] >> 16) | (arr[((i) >> 1) + 1u] << 16)) : arr[(i) >> 1])
#define WIDE(r, i) WIDEN(((r) >> (((i) & 1u) << 4)) & 0xffffu)
#define WIDE2(r) WIDEN2(r)
#define ZERO2 0u
#endif

// The second layer's exchange: given this invocation's pair (z0, z1) after
// the first layer, its second-layer angle's cos and sin (c2, s2; unused by
// the last invocation of a lane) and those of invocation q-1 (cp, sp, from
// neighbour_angle), returns the pair after the second layer. Channel 2q is
// the second of the pair (2q-1, 2q), rotated by the angle of invocation
// q-1; channel 2q+1 the first of (2q+1, 2q+2).
vec2 layer2_with(Thr r, float z0, float z1, float c2, float s2, float cp, float sp) {
    if (K == 2u) {
        return vec2(z0, z1);
    }
    float lo = subgroupShuffle(z1, r.up);   // channel 2q-1
    float hi = subgroupShuffle(z0, r.dn);   // channel 2q+2
    float w0 = sp * lo + cp * z0;
    float w1 = c2 * z1 - s2 * hi;
    return vec2(r.q > 0u ? w0 : z0, r.q + 1u < F ? w1 : z1);
}

// neighbour_angle sets cp, sp to the cos and sin of the second-layer angle
// of invocation q-1 (1 and 0 where there is none).
void neighbour_angle(Thr r, float c2, float s2, out float cp, out float sp) {
    cp = 1.0;
    sp = 0.0;
    if (K > 2u) {
        cp = subgroupShuffle(c2, r.up);
        sp = subgroupShuffle(s2, r.up);
    }
}

// layer2 is layer2_with after neighbour_angle, which it also returns.
vec2 layer2(Thr r, float z0, float z1, float c2, float s2, out float cp, out float sp) {
    neighbour_angle(r, c2, s2, cp, sp);
    return layer2_with(r, z0, z1, c2, s2, cp, sp);
}

// The second layer transposed, applied to a gradient pair (g0, g1) of
// channels 2q, 2q+1 (c2, s2 this invocation's angle, cp, sp that of q-1);
// gdn is set to the gradient of channel 2q+2 (the neighbour's g0).
vec2 layer2T(Thr r, float g0, float g1, float c2, float s2, float cp, float sp, out float gdn) {
    gdn = 0.0;
    if (K == 2u) {
        return vec2(g0, g1);
    }
    float gup = subgroupShuffle(g1, r.up);  // channel 2q-1
    gdn = subgroupShuffle(g0, r.dn);        // channel 2q+2
    float k0 = cp * g0 - sp * gup;
    float k1 = c2 * g1 + s2 * gdn;
    return vec2(r.q > 0u ? k0 : g0, r.q + 1u < F ? k1 : g1);
}
