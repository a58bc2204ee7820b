// matrix_scan: h_t = A_t h_{t-1} + b_t per 2x2 block, A (B,T,N,2,2),
// b and h (B,T,N,2), h0 (B,N,2) or null. Its layout is matrix_affine_scan's
// with K = 2, V = 1, so it is that kernel (affine.cuh), exported as
// matrix_scan_{fwd,bwd}_{f32,f16,bf16}.
#include "affine.cuh"

#define MATRIX_SCAN(NAME, DT)                                                                   \
    extern "C" __global__ void __launch_bounds__(AFFINE_MAX_THREADS(2, 1), 1)                                          \
        matrix_scan_fwd_##NAME(const void* A, const void* b, const void* h0, void* h, i64 T,    \
                               i64 N) {                                                         \
        affine_fwd<DT, 2, 1>(A, b, h0, h, T, N);                                                \
    }                                                                                           \
    extern "C" __global__ void __launch_bounds__(AFFINE_MAX_THREADS(2, 1), 1)                                          \
        matrix_scan_bwd_##NAME(const void* A, const void* h0, const void* h, const void* dh,    \
                               void* dA, void* db, void* dh0, i64 T, i64 N) {                   \
        affine_bwd<DT, 2, 1>(A, h0, h, dh, dA, db, dh0, T, N);                                  \
    }

MATRIX_SCAN(f32, DT_F32)
MATRIX_SCAN(f16, DT_F16)
MATRIX_SCAN(bf16, DT_BF16)
