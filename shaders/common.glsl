// Shared declarations for every scan kernel.
//
// Element type: exactly one of DT_F32, DT_F16, DT_BF16 is defined on the
// glslc command line. f32 tensors are float arrays; f16 and bf16 tensors are
// uint arrays holding two 16-bit elements per word (element i in bits
// 16*(i&1) .. 16*(i&1)+15 of word i>>1), so no 16-bit storage feature is
// needed. Arithmetic is always f32. LD widens an element to float exactly;
// ST rounds to nearest even (NaN stays NaN) and stores. A 16-bit store
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

// Specialization constants shared by every module. Constant 0 is the
// workgroup size (local_size_x_id = 0).
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;
layout(constant_id = 1) const uint K = 1;
layout(constant_id = 2) const uint V = 1;

// The index of this workgroup in a dispatch that may use two dimensions
// (maxComputeWorkGroupCount[0] can be as small as 65535).
uint workgroup_index() {
    return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
}

float f16_to_f32(uint h) {
    uint sign = (h & 0x8000u) << 16;
    uint e = (h >> 10) & 0x1fu;
    uint m = h & 0x3ffu;
    if (e == 0x1fu) {
        return uintBitsToFloat(sign | 0x7f800000u | (m << 13));
    }
    if (e == 0u) {
        float f = float(m) * (1.0 / 16777216.0); // m * 2^-24, exact
        return (sign != 0u) ? -f : f;
    }
    return uintBitsToFloat(sign | ((e + 112u) << 23) | (m << 13));
}

// Round to nearest even; overflow goes to Inf, NaN stays a quiet NaN.
uint f32_to_f16(float f) {
    uint b = floatBitsToUint(f);
    uint sign = (b >> 16) & 0x8000u;
    int e = int((b >> 23) & 0xffu);
    uint man = b & 0x7fffffu;
    if (e == 0xff) {
        if (man != 0u) {
            return sign | 0x7e00u | (man >> 13);
        }
        return sign | 0x7c00u;
    }
    int he = e - 127 + 15;
    if (he >= 0x1f) {
        return sign | 0x7c00u;
    }
    if (he <= 0) {
        if (he < -10) {
            return sign;
        }
        uint mm = man | 0x800000u;
        uint shift = uint(14 - he);
        uint half_ = mm >> shift;
        uint rem = mm & ((1u << shift) - 1u);
        uint mid = 1u << (shift - 1u);
        if (rem > mid || (rem == mid && (half_ & 1u) == 1u)) {
            half_ += 1u;
        }
        return sign | half_;
    }
    uint half_ = (uint(he) << 10) | (man >> 13);
    uint rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half_ & 1u) == 1u)) {
        half_ += 1u;
    }
    return sign | half_;
}

float bf16_to_f32(uint h) {
    return uintBitsToFloat(h << 16);
}

uint f32_to_bf16(float f) {
    uint b = floatBitsToUint(f);
    if ((b & 0x7fffffffu) > 0x7f800000u) {
        return (b >> 16) | 0x40u;
    }
    b += 0x7fffu + ((b >> 16) & 1u);
    return b >> 16;
}

#if defined(DT_F32)
#define LD(arr, i) (arr[(i)])
#define ST(arr, i, v) arr[(i)] = (v)
#else
#if defined(DT_F16)
#define WIDEN(h) f16_to_f32(h)
#define NARROW(f) f32_to_f16(f)
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
        if ((st2_i_ & 1u) == 0u) {                                      \
            arr[st2_i_ >> 1] = NARROW(v0) | (NARROW(v1) << 16);         \
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
