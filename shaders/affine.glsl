// The column layout of matrix_affine_scan (the host's choice where the
// row layout of affine_rows.glsl is not; see blockRows in vk/plan.go).
//
// H_t = A_t H_{t-1} + X_t multiplies from the left, so the v columns of a
// kxv block evolve independently: an invocation keeps COLS adjacent
// columns c .. c+COLS-1 of its lane's state (COLS*k floats) in registers.
// A lane is (b, n). COLS is 1, or 2 where the host asks for it (v even):
// each row of A_t read then serves two columns, and in 16-bit types the
// two columns' elements of a row of X or H are one whole word, loaded and
// stored as such, where one column an invocation shares each word with its
// neighbour and stores its half with two atomics. The columns are
// computed with the same operations in the same order either way.
//
// T is cut into CHUNKS chunks. A workgroup holds LPW whole lanes times
// CHUNKS chunks: invocation id = (j*LPW + lane_local)*VI + ci, VI = V/COLS
// invocations a lane and chunk, ci = c/COLS, so WG = LPW*VI*CHUNKS and
// each chunk's invocations are contiguous. With CHUNKS = 1 an invocation
// walks all T steps; no shared memory, no barriers. With CHUNKS > 1, pass
// 1 computes each chunk's aggregate map h -> P h + S[:,c] from a zero
// carry (S by the column's invocation, the kxk product P by the lane's
// invocations, column m of P by invocation m mod VI), the aggregates meet
// in shared memory after one barrier, and each invocation folds the
// aggregates of earlier chunks into its carry-in and rescans its chunk.
// Pass 1 costs about COLS + ceil(k/VI) plain column steps, so the host
// chunks only where that factor is small.
//
// Composing the chunks' maps is exact algebra but not IEEE-identical to
// the recurrence once a value is infinite or NaN (inf - inf and 0 * inf
// come in another order). A sum of products with a non-finite operand is
// not finite, and a non-finite entry of the carry reaches every entry in
// the next fold, so a finite carry-in means every aggregate folded (and
// H0) was finite. A column whose carry-in is not finite takes it from the
// sequential recurrence over the steps before its chunk instead, from
// memory; each column decides alone (columns are independent
// recurrences), whatever COLS is.

layout(constant_id = 3) const uint CHUNKS = 1;
layout(constant_id = 13) const uint COLS = 1;  // columns an invocation (1 or 2)

// A_ row views: A (binding 0) seen a second time as 16-byte vectors, and
// for 16-bit types a third time as 8-byte ones, so that a row of A can be
// read in whole words (see A_ROW below).
#if defined(DT_F32)
#define ESIZE 4u  // bytes an element
layout(std430, set = 0, binding = 0) readonly buffer Buf4_0 { vec4 A4_[]; };
#else
#define ESIZE 2u
layout(std430, set = 0, binding = 0) readonly buffer Buf4_0 { uvec4 A4_[]; };
layout(std430, set = 0, binding = 0) readonly buffer Buf2_0 { uvec2 A2_[]; };
#endif

const uint VI = V / COLS;                  // invocations a lane and chunk
const uint KC = K * COLS;                  // state floats an invocation
const uint LPW = WG / (VI * CHUNKS);       // lanes per workgroup
const uint NP = (K + VI - 1u) / VI;        // columns of P per invocation
const uint CHUNKED = 1u - 1u / CHUNKS;     // 0 when CHUNKS == 1, else 1

// Aggregates: P per (chunk, lane) as kxk row-major, S per column.
// Sized 1 when unchunked so that unchunked kernels need no shared memory.
shared float sh_P[CHUNKED * (WG / VI) * K * K + 1u];
shared float sh_S[CHUNKED * WG * KC + 1u];

struct Col {
    bool live;
    uint b, n;
    uint c;       // first column
    uint ci;      // invocation within the lane and chunk: c / COLS
    uint j;       // chunk
    uint local;   // lane within the workgroup
    uint t0, t1;  // steps [t0, t1) of the chunk
};

Col column_of_invocation() {
    Col r;
    uint lid = gl_LocalInvocationID.x;
    r.ci = lid % VI;
    r.c = r.ci * COLS;
    r.local = (lid / VI) % LPW;
    r.j = lid / (VI * LPW);
    uint lane = workgroup_index() * LPW + r.local;
    r.b = lane / pc.N;
    r.n = lane - r.b * pc.N;
    r.live = r.b < pc.B;
    uint len = (pc.T + CHUNKS - 1u) / CHUNKS;
    r.t0 = min(r.j * len, pc.T);
    r.t1 = min(r.t0 + len, pc.T);
    return r;
}

// Element offsets of step t's A block and of column 0 of its X block.
uint a_index(Col r, uint t) { return ((r.b * pc.T + t) * pc.N + r.n) * K * K; }
uint x_index(Col r, uint t) { return ((r.b * pc.T + t) * pc.N + r.n) * K * V; }
uint init_index(Col r) { return (r.b * pc.N + r.n) * K * V; }

// Shared-memory offsets of chunk k's aggregates for this invocation's lane
// and its column c + cc.
uint p_slot(Col r, uint k) { return (k * LPW + r.local) * K * K; }
uint s_slot(Col r, uint k, uint cc) { return ((k * LPW + r.local) * V + r.c + cc) * K; }

// An invocation's COLS columns of a kxv block or state are arrays of KC
// floats, column cc at [cc*K, cc*K + K): IDX(cc, i) is element i of column
// cc. (Arrays of KC floats are passed to macros, not functions: glslang
// does not reliably match array parameters whose size is an expression
// of specialization constants.)
#define IDX(cc, i) ((cc) * K + (i))

// LD_COLS(v, arr, e, i) sets element i of each of the invocation's
// columns in v from elements e .. e+COLS-1 of arr: one word for a 16-bit
// pair (LDW). ST_COLS(arr, e, v, i) stores them back alike (ST2: one
// plain store of a whole word where e is even).
#if defined(DT_F32)
#define LD_COLS(v, arr, e, i)                                           \
    {                                                                   \
        uint ldc_e_ = (e);                                              \
        for (uint cc_ = 0u; cc_ < COLS; cc_++) {                        \
            v[IDX(cc_, i)] = arr[ldc_e_ + cc_];                         \
        }                                                               \
    }
#else
#define LD_COLS(v, arr, e, i)                                           \
    {                                                                   \
        uint ldc_e_ = (e);                                              \
        if (COLS == 2u) {                                               \
            uint ldc_w_;                                                \
            LDW(ldc_w_, arr, ldc_e_);                                   \
            vec2 ldc_p_ = WIDEN2(ldc_w_);                               \
            v[IDX(0u, i)] = ldc_p_.x;                                   \
            v[IDX(1u % COLS, i)] = ldc_p_.y;                            \
        } else {                                                        \
            v[IDX(0u, i)] = LD(arr, ldc_e_);                            \
        }                                                               \
    }
#endif
#define ST_COLS(arr, e, v, i)                                           \
    {                                                                   \
        uint stc_e_ = (e);                                              \
        if (COLS == 2u) {                                               \
            ST2(arr, stc_e_, v[IDX(0u, i)], v[IDX(1u % COLS, i)]);      \
        } else {                                                        \
            ST(arr, stc_e_, v[IDX(0u, i)]);                             \
        }                                                               \
    }

// STORE_CHUNK(r, s, cols) stores this invocation's part of its chunk's
// aggregate in shared memory: its columns s of S (KC floats) and its
// columns cols of P (NP*K floats).
#define STORE_CHUNK(r, s, cols)                                         \
    {                                                                   \
        for (uint cc_ = 0u; cc_ < COLS; cc_++) {                        \
            for (uint i_ = 0u; i_ < K; i_++) {                          \
                sh_S[s_slot(r, r.j, cc_) + i_] = s[IDX(cc_, i_)];       \
            }                                                           \
        }                                                               \
        for (uint q_ = 0u; q_ < NP; q_++) {                             \
            uint m_ = r.ci + q_ * VI;                                   \
            if (m_ < K) {                                               \
                for (uint i_ = 0u; i_ < K; i_++) {                      \
                    sh_P[p_slot(r, r.j) + i_ * K + m_] = cols[q_ * K + i_]; \
                }                                                       \
            }                                                           \
        }                                                               \
    }

// APPLY_CHUNK(r, k, v) maps each column of v (KC floats) through chunk
// k's aggregate: v = P_k v + S_k.
#define APPLY_CHUNK(r, k, v)                                            \
    {                                                                   \
        uint apc_k_ = (k);                                              \
        for (uint cc_ = 0u; cc_ < COLS; cc_++) {                        \
            float apc_n_[K];                                            \
            for (uint i_ = 0u; i_ < K; i_++) {                          \
                float acc_ = sh_S[s_slot(r, apc_k_, cc_) + i_];         \
                for (uint m_ = 0u; m_ < K; m_++) {                      \
                    acc_ += sh_P[p_slot(r, apc_k_) + i_ * K + m_] * v[IDX(cc_, m_)]; \
                }                                                       \
                apc_n_[i_] = acc_;                                      \
            }                                                           \
            for (uint i_ = 0u; i_ < K; i_++) {                          \
                v[IDX(cc_, i_)] = apc_n_[i_];                           \
            }                                                           \
        }                                                               \
    }

// FINITE_COLS(fin, v) sets the bools fin[cc] to whether column cc of v is
// finite.
#define FINITE_COLS(fin, v)                                             \
    {                                                                   \
        for (uint cc_ = 0u; cc_ < COLS; cc_++) {                        \
            bool f_ = true;                                             \
            for (uint i_ = 0u; i_ < K; i_++) {                          \
                f_ = f_ && !isnan(v[IDX(cc_, i_)]) && !isinf(v[IDX(cc_, i_)]); \
            }                                                           \
            fin[cc_] = f_;                                              \
        }                                                               \
    }

// CHECK_FINITE(fin, all, v) declares the bools fin[COLS], whether each
// column of v is finite, and all, whether every one is.
#define CHECK_FINITE(fin, all, v)                                       \
    bool fin[COLS];                                                     \
    FINITE_COLS(fin, v);                                                \
    bool all = true;                                                    \
    for (uint cc = 0u; cc < COLS; cc++) {                               \
        all = all && fin[cc];                                           \
    }

// KEEP_FOLDED(v, folded, fin) puts back the folded carry-in of each
// finite column (fin) into v, after v was walked step by step.
#define KEEP_FOLDED(v, folded, fin)                                     \
    for (uint cc = 0u; cc < COLS; cc++) {                               \
        for (uint i = 0u; i < K; i++) {                                 \
            v[IDX(cc, i)] = fin[cc] ? folded[IDX(cc, i)] : v[IDX(cc, i)]; \
        }                                                               \
    }

// A_ROW(row, ai) sets row[m] = A[ai + m], m = 0..K-1: row i of a block
// of A when ai = a block's first element + i*K. Each of a lane's v
// invocations reads every row of A_t each step, so the load instructions
// of these rows bound the column layout; a row is read in the widest whole
// words its alignment allows. Such a row starts at an element index that
// is a multiple of K (the rows before it hold K elements each, and so
// does the slice's element offset inside its binding; see
// affine_rows.glsl): f32 rows of 4 or 8 elements are vec4 words, 16-bit
// rows of 8 or 16 uvec4 words (8 elements each), of 4 one uvec2 word, of
// 2 one 32-bit word. Other rows (f32 k = 2 and 16) are read element by
// element. The values are the same either way.
#if defined(DT_F32)
#define A_ROW(row, ai)                                                  \
    {                                                                   \
        uint arow_i_ = (ai);                                            \
        if (K == 4u || K == 8u) {                                       \
            for (uint q_ = 0u; q_ < K / 4u; q_++) {                     \
                vec4 w_ = A4_[arow_i_ / 4u + q_];                       \
                row[4u * q_] = w_.x;                                    \
                row[4u * q_ + 1u] = w_.y;                               \
                row[4u * q_ + 2u] = w_.z;                               \
                row[4u * q_ + 3u] = w_.w;                               \
            }                                                           \
        } else {                                                        \
            for (uint m_ = 0u; m_ < K; m_++) {                          \
                row[m_] = A_[arow_i_ + m_];                             \
            }                                                           \
        }                                                               \
    }
#else
#define A_ROW(row, ai)                                                  \
    {                                                                   \
        uint arow_i_ = (ai);                                            \
        if (K % 8u == 0u) {                                             \
            for (uint q_ = 0u; q_ < K / 8u; q_++) {                     \
                uvec4 w_ = A4_[arow_i_ / 8u + q_];                      \
                vec2 p0_ = WIDEN2(w_.x), p1_ = WIDEN2(w_.y);            \
                vec2 p2_ = WIDEN2(w_.z), p3_ = WIDEN2(w_.w);            \
                row[8u * q_] = p0_.x;                                   \
                row[8u * q_ + 1u] = p0_.y;                              \
                row[8u * q_ + 2u] = p1_.x;                              \
                row[8u * q_ + 3u] = p1_.y;                              \
                row[8u * q_ + 4u] = p2_.x;                              \
                row[8u * q_ + 5u] = p2_.y;                              \
                row[8u * q_ + 6u] = p3_.x;                              \
                row[8u * q_ + 7u] = p3_.y;                              \
            }                                                           \
        } else if (K == 4u) {                                           \
            uvec2 w_ = A2_[arow_i_ / 4u];                               \
            vec2 p0_ = WIDEN2(w_.x), p1_ = WIDEN2(w_.y);                \
            row[0] = p0_.x;                                             \
            row[1u % K] = p0_.y;                                        \
            row[2u % K] = p1_.x;                                        \
            row[3u % K] = p1_.y;                                        \
        } else if (K == 2u) {                                           \
            vec2 p_ = WIDEN2(A_[arow_i_ / 2u]);                         \
            row[0] = p_.x;                                              \
            row[1u % K] = p_.y;                                         \
        } else {                                                        \
            for (uint m_ = 0u; m_ < K; m_++) {                          \
                row[m_] = LD(A_, arow_i_ + m_);                         \
            }                                                           \
        }                                                               \
    }
#endif

// The ring. Each step of the column layout waits on its loads (A_t and
// the invocation's part of X_t or dH_t), and with the few lanes this
// layout serves (long T) the device holds few invocations, so a step
// costs about one memory round trip. Where RING > 0 (k = 4 or 8 only;
// the host's colRing takes 2 in f32 at k = 8), the loads of the next RING steps are issued ahead into
// registers, raw (16-bit elements are widened only when their step is
// computed), step t in slot (t - first) % RING of the walk: A_t's whole
// block (AW words, as 16-byte vectors: the block starts at a multiple of
// k*k elements, see A_ROW) and XW words of X_t (f32: the COLS elements of
// each row; 16-bit: each row's word holding them). RING = 0 reads each
// step's inputs where it is computed. Every index into the ring is a
// compile-time constant once the [[unroll]] loops are unrolled.
layout(constant_id = 8) const uint RING = 0;
#if defined(DT_F32)
#define RWORD float
#define RWORD4 vec4
const uint AW = K * K;
const uint XW = K * COLS;
#else
#define RWORD uint
#define RWORD4 uvec4
const uint AW = K * K / 2u;
const uint XW = K;
#endif
// Slots allocated: RING, at least 1. (The ring's arrays take one word
// more, so that none is empty where a block has no whole word: k = 1 in
// 16-bit types, which never has a ring.)
const uint RS = RING + 1u / (RING + 1u);

// RING_A(ra, u, ab) loads the block of A starting at element ab into slot
// u of ra.
#define RING_A(ra, u, ab)                                               \
    {                                                                   \
        uint rga_w_ = (ab) / (16u / ESIZE);                             \
        [[unroll]] for (uint q_ = 0u; q_ < AW / 4u; q_++) {             \
            RWORD4 w_ = A4_[rga_w_ + q_];                               \
            ra[(u) * AW + 4u * q_] = w_.x;                              \
            ra[(u) * AW + 4u * q_ + 1u] = w_.y;                         \
            ra[(u) * AW + 4u * q_ + 2u] = w_.z;                         \
            ra[(u) * AW + 4u * q_ + 3u] = w_.w;                         \
        }                                                               \
    }

// RING_X(rx, u, arr, e0) loads the invocation's part of a kxv block of
// arr (X or dH) whose column c of row 0 is element e0 into slot u of rx.
#if defined(DT_F32)
#define RING_X(rx, u, arr, e0)                                          \
    {                                                                   \
        uint rgx_e_ = (e0);                                             \
        [[unroll]] for (uint i_ = 0u; i_ < K; i_++) {                   \
            [[unroll]] for (uint cc_ = 0u; cc_ < COLS; cc_++) {         \
                rx[(u) * XW + i_ * COLS + cc_] = arr[rgx_e_ + i_ * V + cc_]; \
            }                                                           \
        }                                                               \
    }
#else
#define RING_X(rx, u, arr, e0)                                          \
    {                                                                   \
        uint rgx_e_ = (e0);                                             \
        [[unroll]] for (uint i_ = 0u; i_ < K; i_++) {                   \
            if (COLS == 2u) {                                           \
                LDW(rx[(u) * XW + i_], arr, rgx_e_ + i_ * V);           \
            } else {                                                    \
                rx[(u) * XW + i_] = arr[(rgx_e_ + i_ * V) >> 1];        \
            }                                                           \
        }                                                               \
    }
#endif

// RING_ROW(row, ra, u, i) widens row i of the block in slot u into
// row[0..K).
#if defined(DT_F32)
#define RING_ROW(row, ra, u, i)                                         \
    {                                                                   \
        [[unroll]] for (uint m_ = 0u; m_ < K; m_++) {                   \
            row[m_] = ra[(u) * AW + (i) * K + m_];                      \
        }                                                               \
    }
#else
#define RING_ROW(row, ra, u, i)                                         \
    {                                                                   \
        [[unroll]] for (uint q_ = 0u; q_ < K / 2u; q_++) {              \
            vec2 p_ = WIDEN2(ra[(u) * AW + (i) * (K / 2u) + q_]);       \
            row[2u * q_] = p_.x;                                        \
            row[2u * q_ + 1u] = p_.y;                                   \
        }                                                               \
    }
#endif

// RING_COLS(v, rx, u, i, e) widens row i of the invocation's part of the
// block in slot u into element i of each column of v; e is the row's
// element index (the half of a 16-bit word that one column uses).
#if defined(DT_F32)
#define RING_COLS(v, rx, u, i, e)                                       \
    {                                                                   \
        [[unroll]] for (uint cc_ = 0u; cc_ < COLS; cc_++) {             \
            v[IDX(cc_, i)] = rx[(u) * XW + (i) * COLS + cc_];           \
        }                                                               \
    }
#else
#define RING_COLS(v, rx, u, i, e)                                       \
    {                                                                   \
        if (COLS == 2u) {                                               \
            vec2 p_ = WIDEN2(rx[(u) * XW + (i)]);                       \
            v[IDX(0u, i)] = p_.x;                                       \
            v[IDX(1u % COLS, i)] = p_.y;                                \
        } else {                                                        \
            v[IDX(0u, i)] = WIDEN((rx[(u) * XW + (i)] >> (((e) & 1u) << 4)) & 0xffffu); \
        }                                                               \
    }
#endif

// A_DOT adds to acc the sum over m = 0..K-1, ascending, of A[ai + m] *
// xv[x0 + m]: a row of A times a vector.
#define A_DOT(acc, ai, xv, x0)                                          \
    {                                                                   \
        float adot_row_[K];                                             \
        A_ROW(adot_row_, ai);                                           \
        for (uint m_ = 0u; m_ < K; m_++) {                              \
            acc += adot_row_[m_] * xv[(x0) + m_];                       \
        }                                                               \
    }
