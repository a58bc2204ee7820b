// Layout of the elementwise kernels (linear_scan, parallel_scan_log).
//
// A workgroup owns one lane: batch entry b and a tile of TILE contiguous
// units of CPI channels, so neighbouring invocations read neighbouring
// addresses of the (B,T,D) tensors. Invocation id = j*TILE + c serves unit c
// of the tile and chunk j; WG must equal TILE*CHUNKS. A unit is one channel
// for f32 (CPI = 1, values are floats) and two adjacent channels for f16
// and bf16 (CPI = 2, values are vec2): an invocation then owns whole 32-bit
// words, loads a word per step and input, and stores it with one plain
// store. Only a word-misaligned row (D odd, or a slice starting at an odd
// element) or the lone channel of an odd D falls back to two loads and the
// atomic 16-bit stores. Registers hold the raw words (RAW: a float, or a
// word of two 16-bit elements), widened where they are used, so a 16-bit
// invocation keeps as many registers and as many bytes in flight as an f32
// one while moving twice the channels.
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

#if defined(DT_F32)
#define RAW float
#else
#define RAW uint
#endif

#if defined(BLOCK_UNITS)
// 2x2 blocks (matrix_scan): a unit is one block, and a step's A (4
// elements) and a 2-vector (2 elements) are held raw: 4 and 2 floats, or 2
// and 1 words of two 16-bit elements. LD_A and LD_V load them from element
// i into r[o...]; SET_I and SET_0 set the identity and zero; A_OF and V_OF
// widen them to a vec4 (row-major) and a vec2.
#define CPI 1u
#if defined(DT_F32)
#define AW 4u
#define VW 2u
#define LD_A(r, o, arr, i)                                              \
    {                                                                   \
        uint lda_i_ = (i);                                              \
        r[(o)] = arr[lda_i_];                                           \
        r[(o) + 1u] = arr[lda_i_ + 1u];                                 \
        r[(o) + 2u] = arr[lda_i_ + 2u];                                 \
        r[(o) + 3u] = arr[lda_i_ + 3u];                                 \
    }
#define LD_V(r, o, arr, i)                                              \
    {                                                                   \
        uint ldv_i_ = (i);                                              \
        r[(o)] = arr[ldv_i_];                                           \
        r[(o) + 1u] = arr[ldv_i_ + 1u];                                 \
    }
#define SET_I(r, o)                                                     \
    {                                                                   \
        r[(o)] = 1.0;                                                   \
        r[(o) + 1u] = 0.0;                                              \
        r[(o) + 2u] = 0.0;                                              \
        r[(o) + 3u] = 1.0;                                              \
    }
#define SET_0(r, o)                                                     \
    {                                                                   \
        r[(o)] = 0.0;                                                   \
        r[(o) + 1u] = 0.0;                                              \
    }
#define A_OF(r, o) vec4(r[(o)], r[(o) + 1u], r[(o) + 2u], r[(o) + 3u])
#define V_OF(r, o) vec2(r[(o)], r[(o) + 1u])
#else
#define AW 2u
#define VW 1u
#define LD_A(r, o, arr, i)                                              \
    {                                                                   \
        uint lda_i_ = (i);                                              \
        LDW(r[(o)], arr, lda_i_);                                       \
        LDW(r[(o) + 1u], arr, lda_i_ + 2u);                             \
    }
#define LD_V(r, o, arr, i) LDW(r[(o)], arr, (i))
#define SET_I(r, o)                                                     \
    {                                                                   \
        r[(o)] = NARROW(1.0);                                           \
        r[(o) + 1u] = NARROW(1.0) << 16;                                \
    }
#define SET_0(r, o) r[(o)] = 0u
#define A_OF(r, o) vec4(WIDEN2(r[(o)]), WIDEN2(r[(o) + 1u]))
#define V_OF(r, o) WIDEN2(r[(o)])
#endif
#elif defined(DT_F32)
#define CPI 1u
#define VAL float
// The raw form of a constant, and a raw value widened.
#define RAW_OF(f) (f)
#define WIDENV(r) (r)
// LDV sets r to the unit's elements from element i on; STV stores v there;
// two: the unit's second channel exists.
#define LDV(r, arr, i, two) r = arr[(i)]
#define STV(arr, i, v, two) arr[(i)] = (v)
#define STV_NUM(arr, i, v, two) arr[(i)] = (v)
#else
#define CPI 2u
#define VAL vec2
#define RAW_OF(f) (NARROW(f) * 0x10001u)
#define WIDENV(r) WIDEN2(r)
// Without a second channel the high half is 0 (0.0), a finite stand-in
// that is never stored.
#define LDV(r, arr, i, two)                                             \
    {                                                                   \
        uint ldv_i_ = (i);                                              \
        if (ALIGNED || two) {                                           \
            LDW(r, arr, ldv_i_);                                        \
        } else {                                                        \
            r = (arr[ldv_i_ >> 1] >> ((ldv_i_ & 1u) << 4)) & 0xffffu;   \
        }                                                               \
    }
// STV_WITH stores v at element i with the narrowing NARROW_TWO for a whole
// word; STV with NARROW2, STV_NUM (for a v with no NaN) with NARROW2_NUM.
#define STV_WITH(arr, i, v, two, NARROW_TWO)                            \
    {                                                                   \
        uint stv_i_ = (i);                                              \
        VAL stv_v_ = (v);                                               \
        if (ALIGNED || (two && (stv_i_ & 1u) == 0u)) {                  \
            arr[stv_i_ >> 1] = NARROW_TWO(stv_v_);                      \
        } else {                                                        \
            ST(arr, stv_i_, stv_v_.x);                                  \
            if (two) {                                                  \
                ST(arr, stv_i_ + 1u, stv_v_.y);                         \
            }                                                           \
        }                                                               \
    }
#define STV(arr, i, v, two) STV_WITH(arr, i, v, two, NARROW2)
#define STV_NUM(arr, i, v, two) STV_WITH(arr, i, v, two, NARROW2_NUM)
#endif

// Unit chunk aggregates (a kernel with larger aggregates defines
// CUSTOM_AGGREGATES and declares its own).
#ifndef CUSTOM_AGGREGATES
shared VAL sh_p[WG];
shared VAL sh_q[WG];
#endif

struct Lane {
    bool live;  // the unit's first channel exists (the last tile may be partial)
    bool two;   // the unit's second channel exists (CPI = 2)
    uint b;     // batch entry within the slice
    uint d;     // the unit's first channel
    uint c;     // unit within the tile
    uint j;     // chunk within a segment
};

Lane lane_of_invocation() {
    Lane l;
    uint units = (pc.N + CPI - 1u) / CPI;
    uint tiles = (units + TILE - 1u) / TILE;
    uint wg = workgroup_index();
    l.b = wg / tiles;
    uint tile = wg - l.b * tiles;
    l.c = gl_LocalInvocationID.x % TILE;
    l.j = gl_LocalInvocationID.x / TILE;
    l.d = (tile * TILE + l.c) * CPI;
    l.live = l.b < pc.B && l.d < pc.N;
    l.two = CPI == 2u && l.live && l.d + 1u < pc.N;
    return l;
}

// Segments of CHUNKS*L steps covering T.
uint segments() {
    return (pc.T + CHUNKS * L - 1u) / (CHUNKS * L);
}

// Whether a chunk aggregate can be composed with others. Composition is
// exact algebra but not IEEE-identical to the sequential recurrence once an
// aggregate is infinite or NaN: it can form inf - inf where the sequential
// order never does. Each kernel defines it. The same holds for a carry
// (the segment's, or one folded up to a chunk) that is not finite: an
// infinite h0, or an Inf left by an earlier segment, goes through the
// chunk's finite aggregate once, where the recurrence would meet it at
// every step. When an aggregate of a segment or a carry of its fold fails
// the test (agg_okv(x, x) for a carry x), every invocation of the channel
// walks the whole segment sequentially from the segment's carry, reading
// from memory and storing only its own steps, so that NaN and Inf
// propagate exactly as in the sequential reference. The fold is the same
// arithmetic in every invocation of the channel, so they all take the same
// branch; the check costs one test per chunk and segment, none per step.
#ifndef CUSTOM_AGGREGATES
bool agg_ok(float p, float q);
#if defined(DT_F32)
bool agg_okv(float p, float q) {
    return agg_ok(p, q);
}
#else
bool agg_okv(vec2 p, vec2 q) {
    return agg_ok(p.x, q.x) && agg_ok(p.y, q.y);
}
#endif
#endif
