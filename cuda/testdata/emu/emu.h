// Host emulation of the package's CUDA kernels, shared by emu.cc (one
// launch per process) and fakecuda.cc (a stand-in libcuda.so.1): the
// kernel sources (kernels/*.cu) compile as C++ against the definitions
// below. Every thread of a block is a fiber (ucontext) on one OS thread,
// run until it reaches __syncthreads or returns; once every thread has
// reached the barrier, the next round begins. Rounds alternate between
// ascending and descending thread order, so a read of another thread's
// write that lacks a barrier sees stale data (shared memory starts as
// NaN) in one order or the other. Blocks run one after the other. It
// checks the kernels' index math, chunking and barriers, not the GPU's
// arithmetic (the host's libm differs from CUDA's in the last bits).
#pragma once
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <sys/mman.h>
#include <ucontext.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define EMU_ASAN 1
#else
#define EMU_ASAN 0
#endif

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
static float* emu_shared;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define DYNAMIC_SHARED(name) float* name = emu_shared

static void emu_yield(bool done);
inline void __syncthreads() { emu_yield(false); }
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

// A thread of a block: its context and stack, its index, whether its
// kernel returned, and its copies of the variables the kernels' host
// branches keep per thread (thread_local there, but every fiber runs on
// the same OS thread).
struct emu_fiber {
    ucontext_t ctx;
    char* stack;
    unsigned x, y;
    bool done;
    int gv_phase;
    void* asan_fake;
};
static const size_t emu_stack_bytes = 256 << 10;
static ucontext_t emu_main;
static emu_fiber* emu_cur;
static kernel_fn emu_fn;
static const uint64_t* emu_p;
static const void* emu_main_bottom;
static size_t emu_main_size;

// emu_yield returns from the running fiber to run_grid: at a barrier, or
// for good once its kernel has returned (done).
static void emu_yield(bool done) {
    emu_fiber* f = emu_cur;
#if EMU_ASAN
    __sanitizer_start_switch_fiber(done ? nullptr : &f->asan_fake, emu_main_bottom, emu_main_size);
#endif
    swapcontext(&f->ctx, &emu_main);
#if EMU_ASAN
    __sanitizer_finish_switch_fiber(f->asan_fake, &emu_main_bottom, &emu_main_size);
#endif
}

static void emu_fiber_main() {
#if EMU_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &emu_main_bottom, &emu_main_size);
#endif
    const uint64_t* p = emu_p;
    emu_fn(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11]);
    emu_cur->done = true;
    emu_yield(true);
}

static void emu_die(const char* msg) {
    std::fprintf(stderr, "emu: %s\n", msg);
    std::abort();
}

// run_grid runs fn on grid blocks of bx x by threads with shared bytes of
// dynamic shared memory; p holds the kernel's parameters (each 8 bytes,
// unused ones 0). One launch runs at a time.
static void run_grid(kernel_fn fn, unsigned grid, unsigned bx, unsigned by, size_t shared, const uint64_t p[12]) {
    static std::mutex launch_mu;
    std::lock_guard<std::mutex> lock(launch_mu);
    // Exactly the dynamic shared memory the launch asked for, so that an
    // address sanitizer build catches a kernel that uses more.
    std::vector<float> sh(shared / 4);
    const unsigned n = bx * by;
    // Each stack has an inaccessible page below it: an overflow faults.
    const size_t page = 4096, span = emu_stack_bytes + page;
    char* stacks = (char*)mmap(nullptr, span * n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (stacks == MAP_FAILED) emu_die("cannot map the threads' stacks");
    std::vector<emu_fiber> fibers(n);
    for (unsigned i = 0; i < n; i++) {
        mprotect(stacks + i * span, page, PROT_NONE);
        fibers[i].stack = stacks + i * span + page;
        fibers[i].x = i % bx;
        fibers[i].y = i / bx;
    }
    emu_fn = fn;
    emu_p = p;
    for (unsigned g = 0; g < grid; g++) {
        blockIdx.x = g;
        blockDim.x = bx;
        blockDim.y = by;
        blockDim.z = 1;
        std::fill(sh.begin(), sh.end(), NAN);
        emu_shared = sh.data();
        for (auto& f : fibers) {
            getcontext(&f.ctx);
            f.ctx.uc_stack.ss_sp = f.stack;
            f.ctx.uc_stack.ss_size = emu_stack_bytes;
            f.ctx.uc_link = nullptr;
            makecontext(&f.ctx, emu_fiber_main, 0);
            f.done = false;
            f.gv_phase = 0;
            f.asan_fake = nullptr;
        }
        for (unsigned round = 0;; round++) {
            unsigned waiting = 0, done = 0;
            for (unsigned k = 0; k < n; k++) {
                emu_fiber& f = fibers[round % 2 == 0 ? k : n - 1 - k];
                emu_cur = &f;
                threadIdx.x = f.x;
                threadIdx.y = f.y;
                gv_phase = f.gv_phase;
#if EMU_ASAN
                void* fake = nullptr;
                __sanitizer_start_switch_fiber(&fake, f.stack, emu_stack_bytes);
#endif
                swapcontext(&emu_main, &f.ctx);
#if EMU_ASAN
                __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
                f.gv_phase = gv_phase;
                if (f.done) {
                    done++;
                } else {
                    waiting++;
                }
            }
            if (waiting == 0) break;
            if (done > 0) emu_die("some threads of a block returned while others wait at __syncthreads");
        }
    }
    munmap(stacks, span * n);
}
