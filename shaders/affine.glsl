// Layout of the matrix_affine_scan kernels.
//
// H_t = A_t H_{t-1} + X_t multiplies from the left, so the v columns of a
// kxv block evolve independently: invocation (slot, c) keeps column c of
// its slot's state (k floats) in registers. A lane is (b, n); a slot is a
// lane and a chunk of its steps.
//
// T is cut into CHUNKS chunks. A workgroup holds LPW whole lanes times
// CHUNKS chunks, SLOTS = LPW*CHUNKS slots: invocation id = slot*V + c with
// slot = j*LPW + lane_local, so WG = SLOTS*V.
//
// Staging. The invocations never read their inputs from memory one step
// at a time (a serial chain of memory round trips). The workgroup walks
// its steps in segments of STEPS steps per slot: all invocations copy the
// segment's inputs of every slot into shared memory (consecutive
// invocations read consecutive words of a block, and a segment puts
// SLOTS*STEPS blocks of loads in flight at once), one barrier, then each
// invocation runs its column over the segment from shared memory; its
// results overwrite its own inputs there, and after a second barrier all
// invocations copy them out, each storing whole pairs of adjacent elements
// (one 32-bit word for 16-bit types, so no atomics are needed).
//
// With CHUNKS > 1, pass 1 computes each chunk's aggregate map from a zero
// carry (a vector per column and the kxk product of the chunk's
// transitions, column m by invocation m mod V), staged the same way; the
// aggregates meet in shared memory (reusing the staging area), each
// invocation folds those of earlier chunks into its carry-in, and pass 2
// rescans its chunk. Composing aggregates is not IEEE-identical to the
// sequential recurrence once one is infinite or NaN (it can form
// inf - inf), so if any aggregate of the workgroup is not finite, the
// workgroup reruns pass 2 with one chunk per lane covering all of T (the
// chunk-0 slots) from the true initial state: the sequential recurrence.
// So it does when a carry-in is not finite after the fold (an infinite
// h0, or an overflow): the chunk's steps would meet it where the
// recurrence meets it, but the later chunks would get it through a finite
// aggregate once instead of step by step. The vote costs no extra barrier.
//
// Bank conflicts: a slot's block of STRIDE words is padded to an odd
// multiple of V, so that the slots of a warp (at most 32/V of them with
// V | 32) start at distinct multiples of V modulo 32: column c of slot l
// then lies in its own bank, and a matrix element, read by the V
// invocations of a slot at once (one broadcast), lies in a distinct bank
// for each slot.
//
// Nothing depends on the subgroup size and no workgroup waits on another.
// The including kernel defines STAGED_WORDS, the words of one staged block
// before padding.

layout(constant_id = 3) const uint CHUNKS = 1;
layout(constant_id = 4) const uint STEPS = 1;  // steps per slot and segment

const uint SLOTS = WG / V;                 // (chunk, lane) pairs per workgroup
const uint LPW = SLOTS / CHUNKS;           // lanes per workgroup
const uint NP = (K + V - 1u) / V;          // columns of P per invocation
const uint KK = K * K;
const uint KV = K * V;
const uint STRIDE = (((STAGED_WORDS + V - 1u) / V) | 1u) * V;
// Stores go out in pairs of adjacent elements when a block has an even
// number of them (every shape but k = v = 1).
const uint PAIR = 2u - KV % 2u;
const uint PAIR_A = 2u - KK % 2u;

// The staging area, block (s, slot) at (s*SLOTS + slot)*STRIDE; after
// pass 1 it holds the aggregates instead.
shared float sh[SLOTS * STEPS * STRIDE];
// Per slot: the block index (b*T + t0)*N + n of its first step, its
// number of steps, its first step t0 and its lane b*N + n.
shared uint sh_blk0[SLOTS];
shared uint sh_len[SLOTS];
shared uint sh_t0[SLOTS];
shared uint sh_lane[SLOTS];
shared uint sh_bad;  // some aggregate of the workgroup is not finite
shared uint sh_bad_carry;  // some carry-in of the workgroup is not finite

struct Col {
    bool live;
    uint slot, c;
    uint j;       // chunk
    uint local;   // lane within the workgroup
    uint lane;    // b*N + n
    uint t0, t1;  // steps [t0, t1) of the chunk
};

uint chunk_len() {
    return (pc.T + CHUNKS - 1u) / CHUNKS;
}

Col column_of_invocation() {
    Col r;
    uint lid = gl_LocalInvocationID.x;
    r.c = lid % V;
    r.slot = lid / V;
    r.local = r.slot % LPW;
    r.j = r.slot / LPW;
    r.lane = workgroup_index() * LPW + r.local;
    r.live = r.lane < pc.B * pc.N;
    uint len = chunk_len();
    r.t0 = min(r.j * len, pc.T);
    r.t1 = min(r.t0 + len, pc.T);
    return r;
}

// Fills the slot tables: chunk j of each lane covers [j*len, (j+1)*len)
// (seq false) or the chunk-0 slots cover all of T and the others nothing
// (seq true). Call between barriers.
void set_slots(bool seq) {
    uint slot = gl_LocalInvocationID.x;
    if (slot < SLOTS) {
        uint j = slot / LPW;
        uint lane = workgroup_index() * LPW + slot % LPW;
        uint len = chunk_len();
        uint t0 = seq ? 0u : min(j * len, pc.T);
        uint t1 = seq ? (j == 0u ? pc.T : 0u) : min(t0 + len, pc.T);
        bool live = lane < pc.B * pc.N;
        uint b = live ? lane / pc.N : 0u;
        uint n = lane - b * pc.N;
        sh_blk0[slot] = (b * pc.T + t0) * pc.N + n;
        sh_len[slot] = live ? t1 - t0 : 0u;
        sh_t0[slot] = t0;
        sh_lane[slot] = lane;
    }
}

// Segments of STEPS steps covering the longest slot.
uint segments(bool seq) {
    uint len = seq ? pc.T : chunk_len();
    return (len + STEPS - 1u) / STEPS;
}

// Offset in sh of block (s, slot).
uint blk(uint s, uint slot) {
    return (s * SLOTS + slot) * STRIDE;
}

// Copies WORDS elements per step of the tensor arr (element offset off,
// W elements per block) for every slot's steps [seg*STEPS, +STEPS) into
// words [at, at + W) of the blocks. Steps past a slot's end are skipped.
#define STAGE_IN(arr, off, W, at, seg)                                       \
    for (uint e_ = gl_LocalInvocationID.x; e_ < SLOTS * STEPS * (W);        \
         e_ += WG) {                                                         \
        uint w_ = e_ % (W);                                                  \
        uint q_ = e_ / (W);                                                  \
        uint sl_ = q_ % SLOTS;                                               \
        uint s_ = (seg) * STEPS + q_ / SLOTS;                                \
        if (s_ < sh_len[sl_]) {                                              \
            uint g_ = (sh_blk0[sl_] + s_ * pc.N) * (W) + w_;                 \
            sh[blk(q_ / SLOTS, sl_) + (at) + w_] = LD(arr, (off) + g_);      \
        }                                                                    \
    }

// Copies words [at, at + W) of every valid block out to the tensor arr,
// a pair of adjacent elements per invocation where W is even (NP2 = 2).
#define STAGE_OUT(arr, off, W, NP2, at, seg)                                 \
    for (uint e_ = gl_LocalInvocationID.x; e_ < SLOTS * STEPS * ((W) / NP2); \
         e_ += WG) {                                                         \
        uint w_ = (e_ % ((W) / NP2)) * NP2;                                  \
        uint q_ = e_ / ((W) / NP2);                                          \
        uint sl_ = q_ % SLOTS;                                               \
        uint s_ = (seg) * STEPS + q_ / SLOTS;                                \
        if (s_ < sh_len[sl_]) {                                              \
            uint g_ = (off) + (sh_blk0[sl_] + s_ * pc.N) * (W) + w_;         \
            uint i_ = blk(q_ / SLOTS, sl_) + (at) + w_;                      \
            if (NP2 == 2u) {                                                 \
                ST2(arr, g_, sh[i_], sh[i_ + 1u]);                           \
            } else {                                                         \
                ST(arr, g_, sh[i_]);                                         \
            }                                                                \
        }                                                                    \
    }

// Aggregates after pass 1: P (or Q) of slot at slot*KK (row-major), the
// vector of column c at SLOTS*KK + (slot*V + c)*K.
uint p_slot(uint slot) { return slot * KK; }
uint s_slot(uint slot, uint c) { return SLOTS * KK + (slot * V + c) * K; }

bool finite(float x) {
    return !isnan(x) && !isinf(x);
}
