// Layout of the angle-fused Givens kernels. A lane is a block (b, n): its
// state is k floats, kept in registers by the invocation that walks it. The
// transition A_t = diag(sigma_t) R(theta_t) is never materialized: R is a
// first layer of rotations of the pairs (0,1), (2,3), ... by the first k/2
// angles, then a second layer of rotations of the pairs (1,2), (3,4), ...
// by the remaining k/2 - 1 angles. Rotation of (i, j) by th:
//   x_i' = cos(th) x_i - sin(th) x_j,  x_j' = sin(th) x_i + cos(th) x_j.
// A step of a lane is k contiguous floats of sigma, x and h (k - 1 of
// theta); consecutive lanes are consecutive in memory, so consecutive
// invocations of one chunk read consecutive 32-byte rows (k = 8).
//
// T is cut into CHUNKS chunks of ceil(T/CHUNKS) steps. A workgroup holds
// LPW = WG/CHUNKS consecutive lanes times CHUNKS chunks: invocation id =
// j*LPW + lane_local, so the invocations of one chunk are contiguous. With
// CHUNKS = 1 an invocation walks all T steps; no shared memory, no
// barriers. With CHUNKS > 1, pass 1 computes each chunk's aggregate map
// h -> P h + S from a zero carry (the kxk product P of its transitions,
// built by applying every step to the k columns of P alongside S, about
// k + 1 plain steps of arithmetic but one read of the inputs), the
// aggregates meet in shared memory after one barrier, and each invocation
// folds the aggregates of the chunks before it (after it, backward) into
// its carry and rescans its chunk, writing the outputs. The host chunks
// only k <= 8 (P in registers) and only while lanes are few (see
// givensLayout in vk/plan.go).

#include "sincos.glsl"

layout(constant_id = 3) const uint CHUNKS = 1;

const uint LPW = WG / CHUNKS;              // lanes per workgroup
const uint CHUNKED = 1u - 1u / CHUNKS;     // 0 when CHUNKS == 1, else 1

// Aggregates per (chunk, lane): P as kxk row-major, S, and whether both
// are finite. The slots are padded by 4 words, which keeps them 16-byte
// aligned and spreads the invocations' stores over the banks. Sized 1 when
// unchunked so that unchunked kernels need no shared memory.
const uint PSTRIDE = K * K + 4u;
const uint SSTRIDE = K + 4u;
shared float sh_P[CHUNKED * WG * PSTRIDE + 1u];
shared float sh_S[CHUNKED * WG * SSTRIDE + 1u];
shared uint sh_F[CHUNKED * WG + 1u];

struct Blk {
    bool live;
    uint b, n;
    uint j;       // chunk
    uint local;   // lane within the workgroup
    uint t0, t1;  // steps [t0, t1) of the chunk
};

Blk block_of_invocation() {
    Blk r;
    uint lid = gl_LocalInvocationID.x;
    r.local = lid % LPW;
    r.j = lid / LPW;
    uint lane = workgroup_index() * LPW + r.local;
    r.b = lane / pc.N;
    r.n = lane - r.b * pc.N;
    r.live = r.b < pc.B;
    uint len = (pc.T + CHUNKS - 1u) / CHUNKS;
    r.t0 = min(r.j * len, pc.T);
    r.t1 = min(r.t0 + len, pc.T);
    return r;
}

uint step_index(Blk r, uint t) { return (r.b * pc.T + t) * pc.N + r.n; }
uint init_index(Blk r) { return (r.b * pc.N + r.n) * K; }

// Shared-memory slot of chunk k's aggregate for this invocation's lane.
uint agg_slot(Blk r, uint k) { return k * LPW + r.local; }

bool finite(float x) { return !isnan(x) && !isinf(x); }

// Whether every aggregate of the lane is finite (its invocations set
// sh_F). Composing aggregates is not IEEE-identical to the sequential
// recurrence once one is infinite or NaN (it can form inf - inf or
// 0 * inf), so such a lane falls back to one sequential pass by its
// chunk-0 invocation. Call after the barrier.
bool aggregates_finite(Blk r) {
    bool ok = true;
    for (uint k = 0u; k < CHUNKS; k++) {
        ok = ok && sh_F[agg_slot(r, k)] != 0u;
    }
    return ok;
}

// Angle q < K/2 rotates the pair (2q, 2q+1); angle K/2 + q rotates the
// pair (2q+1, 2q+2).
