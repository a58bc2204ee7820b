// Host emulation of the package's CUDA kernels, shared by emu.cc (one
// launch per process) and fakecuda.cc (a stand-in libcuda.so.1): the
// kernel sources (kernels/*.cu) compile as C++ against the definitions
// below, every thread of a block is an OS thread, __syncthreads is a
// std::barrier, and blocks run one after the other. It checks the
// kernels' index math, chunking and barriers, not the GPU's arithmetic
// (the host's libm differs from CUDA's in the last bits).
#pragma once
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <dlfcn.h>

struct float4 {
    float x, y, z, w;
};
struct uint4 {
    unsigned x, y, z, w;
};
struct uint2 {
    unsigned x, y;
};
struct dim3 {
    unsigned x = 0, y = 0, z = 0;
};
thread_local dim3 threadIdx;
dim3 blockIdx, blockDim;
static std::barrier<>* emu_barrier;
static float* emu_shared;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define DYNAMIC_SHARED(name) float* name = emu_shared

inline void __syncthreads() { emu_barrier->arrive_and_wait(); }
// __syncthreads_or: a barrier that returns whether any thread of the block
// passed a nonzero predicate. The flag is cleared after a third barrier,
// before any thread can reach the next call.
static std::atomic<int> emu_or;
inline int __syncthreads_or(int p) {
    __syncthreads();
    if (p) emu_or.store(1);
    __syncthreads();
    const int r = emu_or.load();
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) emu_or.store(0);
    return r;
}
template <class T>
inline T __ldg(const T* p) {
    return *p;
}
inline unsigned __float_as_uint(float f) {
    unsigned u;
    std::memcpy(&u, &f, 4);
    return u;
}
inline float __uint_as_float(unsigned u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

#include "../../kernels/givens_scan.cu"
#include "../../kernels/linear_scan.cu"
#include "../../kernels/matrix_affine_scan.cu"
#include "../../kernels/matrix_scan.cu"
#include "../../kernels/mingru_scan.cu"
#include "../../kernels/parallel_scan_log.cu"
#include "../../kernels/util.cu"

typedef void (*kernel_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                          uint64_t, uint64_t, uint64_t, uint64_t);

// run_grid runs fn on grid blocks of bx x by threads with shared bytes of
// dynamic shared memory; p holds the kernel's parameters (each 8 bytes,
// unused ones 0).
static void run_grid(kernel_fn fn, unsigned grid, unsigned bx, unsigned by, size_t shared, const uint64_t p[12]) {
    // Exactly the dynamic shared memory the launch asked for, so that an
    // address sanitizer build catches a kernel that uses more.
    std::vector<float> sh(shared / 4);
    for (unsigned g = 0; g < grid; g++) {
        blockIdx.x = g;
        blockDim.x = bx;
        blockDim.y = by;
        blockDim.z = 1;
        std::fill(sh.begin(), sh.end(), NAN);
        emu_shared = sh.data();
        std::barrier<> bar(bx * by);
        emu_barrier = &bar;
        auto body = [&](unsigned x, unsigned y) {
            threadIdx.x = x;
            threadIdx.y = y;
            fn(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11]);
        };
        if (bx * by == 1) {
            body(0, 0);
            continue;
        }
        std::vector<std::thread> ts;
        for (unsigned y = 0; y < by; y++) {
            for (unsigned x = 0; x < bx; x++) {
                ts.emplace_back(body, x, y);
            }
        }
        for (auto& t : ts) t.join();
    }
}
