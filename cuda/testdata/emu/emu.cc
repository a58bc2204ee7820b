// emu runs one of the package's CUDA kernels on the host, for tests on
// machines without a GPU: the kernel sources (kernels/*.cu) are compiled
// as C++ against the definitions below, every thread of a block is an OS
// thread, __syncthreads is a std::barrier, and blocks run one after the
// other. It checks the kernels' index math, chunking and barriers, not
// the GPU's arithmetic (the host's libm differs from CUDA's in the last
// bits).
//
// Usage: emu KERNEL GRID BX BY SHARED PARAM...
// where each PARAM is "null" (a null pointer), "in:FILE" (a buffer read
// from FILE), "out:FILE:BYTES" (a buffer of BYTES bytes filled with 0xff,
// a NaN in f32, f16 and bf16, written to FILE afterwards) or "i:N" (a
// 64-bit integer). Build: g++ -std=c++20 -O1 -pthread -rdynamic emu.cc.
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

struct dim3 {
    unsigned x = 0, y = 0, z = 0;
};
thread_local dim3 threadIdx;
dim3 blockIdx, blockDim;
static std::barrier<>* emu_barrier;
static float* emu_shared;

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define DYNAMIC_SHARED(name) float* name = emu_shared

inline void __syncthreads() { emu_barrier->arrive_and_wait(); }
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
#include "../../kernels/parallel_scan_log.cu"
#include "../../kernels/util.cu"

typedef void (*kernel_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                          uint64_t, uint64_t, uint64_t, uint64_t);

static void die(const char* msg, const char* arg) {
    std::fprintf(stderr, "emu: %s %s\n", msg, arg);
    std::exit(2);
}

int main(int argc, char** argv) {
    if (argc < 6) die("usage: emu KERNEL GRID BX BY SHARED PARAM...", "");
    void* sym = dlsym(RTLD_DEFAULT, argv[1]);
    if (sym == nullptr) die("no kernel", argv[1]);
    kernel_fn fn = (kernel_fn)sym;
    unsigned grid = std::strtoul(argv[2], nullptr, 10);
    unsigned bx = std::strtoul(argv[3], nullptr, 10);
    unsigned by = std::strtoul(argv[4], nullptr, 10);
    size_t shared = std::strtoul(argv[5], nullptr, 10);
    uint64_t p[12] = {0};
    struct out {
        std::string file;
        void* buf;
        size_t bytes;
    };
    std::vector<out> outs;
    if (argc - 6 > 12) die("too many parameters", "");
    for (int i = 6; i < argc; i++) {
        std::string a = argv[i];
        uint64_t v = 0;
        if (a == "null") {
        } else if (a.rfind("i:", 0) == 0) {
            v = (uint64_t)std::strtoll(a.c_str() + 2, nullptr, 10);
        } else if (a.rfind("in:", 0) == 0) {
            FILE* f = std::fopen(a.c_str() + 3, "rb");
            if (!f) die("cannot open", a.c_str());
            std::fseek(f, 0, SEEK_END);
            long n = std::ftell(f);
            std::fseek(f, 0, SEEK_SET);
            void* buf = std::malloc(n > 0 ? n : 1);
            if (std::fread(buf, 1, n, f) != (size_t)n) die("short read", a.c_str());
            std::fclose(f);
            v = (uint64_t)buf;
        } else if (a.rfind("out:", 0) == 0) {
            size_t colon = a.rfind(':');
            size_t bytes = std::strtoull(a.c_str() + colon + 1, nullptr, 10);
            void* buf = std::malloc(bytes);
            std::memset(buf, 0xff, bytes);
            outs.push_back({a.substr(4, colon - 4), buf, bytes});
            v = (uint64_t)buf;
        } else {
            die("bad parameter", a.c_str());
        }
        p[i - 6] = v;
    }
    std::vector<float> sh(shared / 4 + 1);
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
    for (auto& o : outs) {
        FILE* f = std::fopen(o.file.c_str(), "wb");
        if (!f || std::fwrite(o.buf, 1, o.bytes, f) != o.bytes) die("cannot write", o.file.c_str());
        std::fclose(f);
    }
    return 0;
}
