// The row layout of matrix_affine_scan (k >= 2, v >= 2; the host's choice,
// see blockRows in vk/plan.go). Invocation (r, i) of a workgroup owns row i
// of the state of lane r (a lane is a block (b, n)): v floats in
// registers. A workgroup of WG = R*K invocations serves R consecutive lanes
// and walks T in one piece, with no chunks: the recurrence is evaluated in
// the sequential order, so NaN and Inf propagate as in the reference.
//
// Each step an invocation reads its row of every input (k or v elements,
// contiguous), so the R*K invocations of a workgroup read the R blocks of
// a step as contiguous runs and every input element is read once, by one
// invocation. f32 rows whose length is a multiple of 4 (16-bit rows: of 8)
// are read and written as vec4 (uvec4) words through a second view of the
// same binding (see Alignment below).
// The rows an invocation needs from the other rows of its lane (H_{t-1}
// forward; G_t, A_t and, for 16-bit types, H_{t-1} backward) go through
// shared memory, in two
// buffers that alternate between even and odd steps, so that one barrier
// per step suffices: a buffer is rewritten two steps later, after every
// invocation has passed the barrier of the step in between, which it
// reaches only once done reading.
//
// A buffer holds its matrices in column planes: element (m, j) of lane r's
// matrix at word j*W + r*K + m of the buffer, W = WG words a plane (AP for
// the backward's A_t). Invocation (r, i) publishes its row i as one word in
// each plane, and the invocations of a workgroup write consecutive words;
// reading element (m, j) of its lane, the K invocations of a lane read one
// word (a broadcast) and the lanes of a subgroup words K apart, in
// different banks (up to 32 words a subgroup). The backward also reads a
// column of A_t, element (m, i) for invocation (r, i): its planes are
// padded to AP = WG + 1 words so that the K invocations of a lane, reading
// K different planes, fall in different banks too. (Rows stored
// contiguously, [R][K][V], put the K invocations' stores v words apart and
// the lanes' reads K*V words apart, in the same bank: many-way bank
// conflicts on every shared-memory access.)
//
// The loads of the next RING steps are issued ahead of the arithmetic into
// a ring of registers (raw words; 16-bit elements are widened only when
// their step is computed), so that the bytes of several steps are in
// flight while each step waits on the one before it. Every ring index is a
// compile-time constant once the loops over the ring, k and v are unrolled.

layout(constant_id = 8) const uint RING = 4;  // steps of loads in flight

const uint R = WG / K;   // lanes per workgroup
const uint AP = WG + 1u;  // words of a plane of the backward's A_t

#if defined(DT_F32)
#define EPW 1u  // elements per word
#define WORD float
#define WORD4 vec4
#define ZERO_WORD 0.0
#else
#define EPW 2u
#define WORD uint
#define WORD4 uvec4
#define ZERO_WORD 0u
#endif

const uint WA = K / EPW;  // words of a row of A (k elements)
const uint WX = V / EPW;  // words of a row of X, H (v elements)

// A second view of binding b as 4-word vectors.
#define IN_BUFFER4(b, name) \
    layout(std430, set = 0, binding = b) readonly buffer Buf4_##b { WORD4 name[]; };
#define OUT_BUFFER4(b, name) \
    layout(std430, set = 0, binding = b) buffer Buf4_##b { WORD4 name[]; };

// Alignment. Every row starts at an element index that is a multiple of
// its length M (k or v, a power of two >= 2): the blocks before it hold
// multiples of M elements, and so does the slice's offset off inside its
// binding. (A slice of the batch starts at byte b0 * stride, a multiple of
// M elements since the per-batch stride is, and is bound at that byte
// rounded down to the device's offset alignment, a power of two: off is
// that byte modulo the alignment, either 0 or a multiple of M elements.)
// So a 16-bit row is whole 32-bit words that only its invocation touches
// (plain loads and stores, no atomics), and a row of a multiple of 4 words
// is whole 16-byte vectors (vec4, uvec4) of the second view.

// LD_ROW sets words d0 .. d0+NW-1 of dst to the row of NW words starting
// at element e of arr (arr4 its vector view).
#define LD_ROW(dst, d0, arr, arr4, e, NW)                              \
    {                                                                  \
        uint ldr_w_ = (e) / EPW;                                       \
        if ((NW) % 4u == 0u) {                                         \
            [[unroll]] for (uint q_ = 0u; q_ < (NW) / 4u; q_++) {      \
                WORD4 w_ = arr4[(ldr_w_ >> 2) + q_];                   \
                dst[(d0) + 4u * q_] = w_.x;                            \
                dst[(d0) + 4u * q_ + 1u] = w_.y;                       \
                dst[(d0) + 4u * q_ + 2u] = w_.z;                       \
                dst[(d0) + 4u * q_ + 3u] = w_.w;                       \
            }                                                          \
        } else {                                                       \
            [[unroll]] for (uint q_ = 0u; q_ < (NW); q_++) {           \
                dst[(d0) + q_] = arr[ldr_w_ + q_];                     \
            }                                                          \
        }                                                              \
    }

// WIDEN_ROW sets f[0 .. NW*EPW) to the elements of words d0 .. d0+NW-1 of
// src.
#if defined(DT_F32)
#define WIDEN_ROW(f, src, d0, NW)                                      \
    {                                                                  \
        [[unroll]] for (uint q_ = 0u; q_ < (NW); q_++) {               \
            f[q_] = src[(d0) + q_];                                    \
        }                                                              \
    }
#define PACK(f, q) (f[q])
#else
#define WIDEN_ROW(f, src, d0, NW)                                      \
    {                                                                  \
        [[unroll]] for (uint q_ = 0u; q_ < (NW); q_++) {               \
            vec2 p_ = WIDEN2(src[(d0) + q_]);                          \
            f[2u * q_] = p_.x;                                         \
            f[2u * q_ + 1u] = p_.y;                                    \
        }                                                              \
    }
#define PACK(f, q) NARROW2(vec2(f[2u * (q)], f[2u * (q) + 1u]))
#endif

// ST_ROW stores the NW*EPW floats f[] (rounded to the type) as the row of
// NW words starting at element e of arr (arr4 its vector view).
#define ST_ROW(arr, arr4, e, f, NW)                                    \
    {                                                                  \
        uint str_w_ = (e) / EPW;                                       \
        if ((NW) % 4u == 0u) {                                         \
            [[unroll]] for (uint q_ = 0u; q_ < (NW) / 4u; q_++) {      \
                arr4[(str_w_ >> 2) + q_] =                             \
                    WORD4(PACK(f, 4u * q_), PACK(f, 4u * q_ + 1u),     \
                          PACK(f, 4u * q_ + 2u), PACK(f, 4u * q_ + 3u)); \
            }                                                          \
        } else {                                                       \
            [[unroll]] for (uint q_ = 0u; q_ < (NW); q_++) {           \
                arr[str_w_ + q_] = PACK(f, q_);                        \
            }                                                          \
        }                                                              \
    }

// Row of the invocation: lane r of the workgroup, row i; lanes past the
// last (B*N not a multiple of R) compute the last lane again and store
// nothing.
struct Row {
    bool live;
    uint r, i;
    uint lane;  // b*N + n
    uint blk0;  // block index of step 0: step t is blk0 + t*N
};

Row row_of_invocation() {
    Row w;
    uint lid = gl_LocalInvocationID.x;
    w.r = lid / K;
    w.i = lid % K;
    uint lanes = pc.B * pc.N;
    uint lane = workgroup_index() * R + w.r;
    w.live = lane < lanes;
    w.lane = min(lane, lanes - 1u);
    uint b = w.lane / pc.N;
    uint n = w.lane - b * pc.N;
    w.blk0 = b * pc.T * pc.N + n;
    return w;
}
