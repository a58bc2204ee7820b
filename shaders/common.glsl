// Shared declarations for every scan kernel.
//
// Element type: exactly one of DT_F32, DT_F16, DT_BF16 is defined on the
// glslc command line. f32 tensors are float arrays; f16 and bf16 tensors are
// uint arrays holding two 16-bit elements per word (element i in bits
// 16*(i&1) .. 16*(i&1)+15 of word i>>1), so no 16-bit storage feature is
// needed. Arithmetic is always f32. LD widens an element to float exactly;
// ST rounds to nearest even (NaN stays NaN) and stores; for f16 either in
// integer arithmetic (f16.glsl) or with the device's own instructions where
// the host's probes found them exact (constant 10 below). A 16-bit store
// touches one half of a word that a neighbouring invocation may be writing
// at the same time, so it uses two atomics (clear the half, then set it);
// ST2 stores a pair of adjacent elements as one whole word where it can.
//
// Push constants: the sizes of the slice of the batch being processed and,
// per binding, the element offset of the slice's first element inside the
// bound range (bindings start at aligned byte offsets, so a slice may begin
// inside the range).

#if defined(DT_F32)
#define ELEM float
#elif defined(DT_F16) || defined(DT_BF16)
#define ELEM uint
#else
#error "define DT_F32, DT_F16 or DT_BF16"
#endif

layout(push_constant) uniform PushConstants {
    uint B;      // batch entries in this slice
    uint T;      // time steps
    uint N;      // channels (D) or blocks (N)
    uint flags;  // bit 0: the optional initial state is bound
    uint off[12];
} pc;

#define HAS_INIT ((pc.flags & 1u) != 0u)

// +Inf. |x| < POS_INF is one ordered comparison that is false for NaN and
// both infinities: the finiteness test of the chunk folds.
#define POS_INF uintBitsToFloat(0x7f800000u)

// Specialization constants shared by every module. Constant 0 is the
// workgroup size (local_size_x_id = 0).
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;
layout(constant_id = 1) const uint K = 1;
layout(constant_id = 2) const uint V = 1;
// Constant 7: nonzero when the host guarantees that every word access of a
// 16-bit kernel is whole (every element index passed to LDW, LDV, STV and
// ST2 is even and the unit's second channel exists). The word paths then
// compile without the branches for a misaligned index, which would
// otherwise sit between a step's loads and keep the compiler from issuing
// them back to back. (Ignored by f32 modules.)
layout(constant_id = 7) const uint ALIGNED_WORDS = 0;
#define ALIGNED (ALIGNED_WORDS != 0u)
// Constant 10: the f16 conversions the device's own instructions may do
// exactly, as bit flags found by the host's probes when it opened the
// device. (Ignored by f32 and bf16 modules.)
//   bit 0: unpackHalf2x16 gave the exact widening of every one of the 65536
//          f16 values (a NaN as some NaN; shaders/f16probe.comp). The f16
//          widenings are then that one instruction, with no test for
//          zeros, subnormals, Inf and NaN.
//   bit 1: packHalf2x16 rounded every one of the 2^32 f32 bit patterns to
//          nearest even, as f32_to_f16 does (a NaN to some NaN;
//          shaders/f16narrowprobe.comp). Every f16 store (NARROW, NARROW2,
//          so ST, ST2 and STV) is then that one instruction instead of the
//          integer rounding. The host never sets it on a CPU device, where
//          the probe would take too long.
layout(constant_id = 10) const uint HW_F16 = 0;
#define HW_F16_WIDEN ((HW_F16 & 1u) != 0u)
#define HW_F16_NARROW ((HW_F16 & 2u) != 0u)

// The index of this workgroup in a dispatch that may use two dimensions
// (maxComputeWorkGroupCount[0] can be as small as 65535).
uint workgroup_index() {
    return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
}

#include "f16.glsl"

float bf16_to_f32(uint h) {
    return uintBitsToFloat(h << 16);
}

// bf16_round_bits returns the bits of f rounded to nearest even in their
// upper 16 bits (the lower 16 are junk): add 0x7fff plus the lowest kept
// bit, so a carry rounds up. A NaN (one float comparison) first has its
// lower half cleared and its quiet bit set, so the addition cannot carry
// out of it: it stays a quiet NaN with its sign and upper payload. About
// half the integer operations of testing the exponent bits for NaN and
// forming that result apart, which counts where a 16-bit kernel is bound
// by its instruction issue.
uint bf16_round_bits(float f) {
    uint b = floatBitsToUint(f);
    b = isnan(f) ? ((b & 0xffff0000u) | 0x00400000u) : b;
    return b + 0x7fffu + bitfieldExtract(b, 16, 1);
}

// bf16_round_bits_num is bf16_round_bits for an f that is not NaN.
uint bf16_round_bits_num(float f) {
    uint b = floatBitsToUint(f);
    return b + 0x7fffu + bitfieldExtract(b, 16, 1);
}

// Round to nearest even; NaN stays a quiet NaN (sign and upper payload
// kept, as scans.BF16FromFloat32 does).
uint f32_to_bf16(float f) {
    return bf16_round_bits(f) >> 16;
}

#if defined(DT_F32)
#define LD(arr, i) (arr[(i)])
#define ST(arr, i, v) arr[(i)] = (v)
#else
#if defined(DT_F16)
// WIDEN widens the f16 bits h (the low 16 bits of a uint); NARROW rounds
// f to the f16 bits in the low 16 bits of its result.
float WIDEN(uint h) {
    return HW_F16_WIDEN ? unpackHalf2x16(h).x : f16_to_f32(h);
}
uint NARROW(float f) {
    return HW_F16_NARROW ? (packHalf2x16(vec2(f, 0.0)) & 0xffffu) : f32_to_f16(f);
}
#else
#define WIDEN(h) bf16_to_f32(h)
#define NARROW(f) f32_to_bf16(f)
#endif
#define LD(arr, i) WIDEN((arr[(i) >> 1] >> (((i) & 1u) << 4)) & 0xffffu)
#define ST(arr, i, v)                                                   \
    {                                                                   \
        uint st_i_ = (i);                                               \
        uint st_sh_ = (st_i_ & 1u) << 4;                                \
        atomicAnd(arr[st_i_ >> 1], ~(0xffffu << st_sh_));               \
        atomicOr(arr[st_i_ >> 1], NARROW(v) << st_sh_);                 \
    }

// WIDEN2 widens the two elements of a word (low half in x). For f16 on a
// device whose probe found unpackHalf2x16 exact (HW_F16_WIDEN), that
// alone. Else the hardware conversion serves the common case, and a word
// with a zero, subnormal, Inf or NaN half takes the exact software path,
// because Vulkan lets an implementation flush 16-bit subnormals and leaves
// the NaN payload open. That branch is uniform unless a warp mixes such values with
// ordinary ones, but it costs: on an NVIDIA H200 the f16 kernels with it
// ran at about half the speed of the bf16 ones.
#if defined(DT_F16)
vec2 WIDEN2(uint w) {
    if (HW_F16_WIDEN) {
        return unpackHalf2x16(w);
    }
    uint e0 = w & 0x7c00u;
    uint e1 = w & 0x7c000000u;
    if (e0 == 0u || e0 == 0x7c00u || e1 == 0u || e1 == 0x7c000000u) {
        return vec2(f16_to_f32(w & 0xffffu), f16_to_f32(w >> 16));
    }
    return unpackHalf2x16(w);
}
#else
vec2 WIDEN2(uint w) {
    return vec2(uintBitsToFloat(w << 16), uintBitsToFloat(w & 0xffff0000u));
}
#endif
// NARROW2 narrows a vec2 to a word (x in the low half). For f16 on a
// device whose probe found packHalf2x16 to round to nearest even
// (HW_F16_NARROW), that alone; else the integer rounding, with one test of
// both elements for the ordinary case.
#if defined(DT_F16)
uint NARROW2(vec2 v) {
    if (HW_F16_NARROW) {
        return packHalf2x16(v);
    }
    uint b0 = floatBitsToUint(v.x);
    uint b1 = floatBitsToUint(v.y);
    uint a0 = b0 & 0x7fffffffu;
    uint a1 = b1 & 0x7fffffffu;
    if (F16_ORDINARY(a0) && F16_ORDINARY(a1)) {
        return ((b0 >> 16) & 0x8000u) | F16_ROUND(a0) | (b1 & 0x80000000u) | (F16_ROUND(a1) << 16);
    }
    return f32_to_f16_any(v.x) | (f32_to_f16_any(v.y) << 16);
}
#else
// Two roundings and one merge of their upper halves (a byte permute on
// most GPUs).
uint NARROW2(vec2 v) {
    return (bf16_round_bits(v.x) >> 16) | (bf16_round_bits(v.y) & 0xffff0000u);
}
#endif
// NARROW2_NUM is NARROW2 for a v with no NaN: a bf16 rounding without the
// NaN test (what it gives for a NaN is not NaN).
#if defined(DT_BF16)
uint NARROW2_NUM(vec2 v) {
    return (bf16_round_bits_num(v.x) >> 16) | (bf16_round_bits_num(v.y) & 0xffff0000u);
}
#else
#define NARROW2_NUM(v) NARROW2(v)
#endif

// LDW sets the uint w to the word of elements i and i+1 (i in the low
// half): one load for i even, two neighbouring loads for i odd (never
// under ALIGNED). Both elements must exist.
#define LDW(w, arr, i)                                                  \
    {                                                                   \
        uint ldw_i_ = (i);                                              \
        w = arr[ldw_i_ >> 1];                                           \
        if (!ALIGNED && (ldw_i_ & 1u) != 0u) {                          \
            w = (w >> 16) | (arr[(ldw_i_ >> 1) + 1u] << 16);            \
        }                                                               \
    }
#endif

// ST2 stores the adjacent elements i and i+1. For 16-bit types with i even
// they fill one whole 32-bit word that no other invocation touches, so it
// is one plain store, no atomics; with i odd it falls back to ST twice.
#if defined(DT_F32)
#define ST2(arr, i, v0, v1)                                             \
    {                                                                   \
        uint st2_i_ = (i);                                              \
        arr[st2_i_] = (v0);                                             \
        arr[st2_i_ + 1u] = (v1);                                        \
    }
#else
#define ST2(arr, i, v0, v1)                                             \
    {                                                                   \
        uint st2_i_ = (i);                                              \
        if (ALIGNED || (st2_i_ & 1u) == 0u) {                           \
            arr[st2_i_ >> 1] = NARROW2(vec2((v0), (v1)));               \
        } else {                                                        \
            ST(arr, st2_i_, v0);                                        \
            ST(arr, st2_i_ + 1u, v1);                                   \
        }                                                               \
    }
#endif

// A storage buffer of tensor elements at binding b named name.
#define IN_BUFFER(b, name) \
    layout(std430, set = 0, binding = b) readonly buffer Buf##b { ELEM name[]; };
#define OUT_BUFFER(b, name) \
    layout(std430, set = 0, binding = b) buffer Buf##b { ELEM name[]; };
