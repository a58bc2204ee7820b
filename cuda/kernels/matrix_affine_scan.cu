// matrix_affine_scan: H_t = A_t H_{t-1} + X_t per (K,K) x (K,V) block, for
// every K, V in {1,2,4,8,16} and every element type, exported as
// matrix_affine_scan_{fwd,bwd}_{f32,f16,bf16}_k<K>_v<V>. See affine.cuh.
#include "affine.cuh"

#define AFFINE_KV(NAME, DT, K, V)                                                               \
    extern "C" __global__ void __launch_bounds__(AFFINE_MAX_THREADS(K, V), 1)                                     \
        matrix_affine_scan_fwd_##NAME##_k##K##_v##V(const void* A, const void* X,               \
                                                    const void* H0, void* H, i64 T, i64 N) {    \
        affine_fwd<DT, K, V>(A, X, H0, H, T, N);                                                \
    }                                                                                           \
    extern "C" __global__ void __launch_bounds__(AFFINE_MAX_THREADS(K, V), 1)                                     \
        matrix_affine_scan_bwd_##NAME##_k##K##_v##V(const void* A, const void* H0,              \
                                                    const void* H, const void* dH, void* dA,    \
                                                    void* dX, void* dH0, i64 T, i64 N) {        \
        affine_bwd<DT, K, V>(A, H0, H, dH, dA, dX, dH0, T, N);                                  \
    }

#define AFFINE_K(NAME, DT, K) \
    AFFINE_KV(NAME, DT, K, 1) \
    AFFINE_KV(NAME, DT, K, 2) \
    AFFINE_KV(NAME, DT, K, 4) \
    AFFINE_KV(NAME, DT, K, 8) \
    AFFINE_KV(NAME, DT, K, 16)

#define AFFINE(NAME, DT)  \
    AFFINE_K(NAME, DT, 1) \
    AFFINE_K(NAME, DT, 2) \
    AFFINE_K(NAME, DT, 4) \
    AFFINE_K(NAME, DT, 8) \
    AFFINE_K(NAME, DT, 16)

// The PTX is generated one module per element type and K (SCAN_DT_NAME,
// SCAN_DT and SCAN_K defined on nvcc's command line), so that the driver
// JIT-compiles only the kernels a program uses; without them the file
// instantiates everything (the register report compiles it that way).
#if defined(SCAN_K)
AFFINE_K(SCAN_DT_NAME, SCAN_DT, SCAN_K)
#else
AFFINE(f32, DT_F32)
AFFINE(f16, DT_F16)
AFFINE(bf16, DT_BF16)
#endif
