// fakecuda is a stand-in libcuda.so.1 that runs the package's kernels on
// the host (emu.h), so that the whole CUDA backend, its driver calls
// included, can be tested on a machine without a GPU: put the library's
// directory first in LD_LIBRARY_PATH and the backend's dlopen finds it.
// Device memory is host memory; allocations are tracked so that a copy,
// memset or free outside one fails like the driver would; kernels are
// looked up by name among the emulated ones and their parameters are read
// from CU_LAUNCH_PARAM_BUFFER_POINTER. The definitions are checked against
// cuda.h's prototypes.
//
// Build: g++ -std=c++20 -O1 -pthread -shared -fPIC -I<cuda.h dir> -o libcuda.so.1 fakecuda.cc
#include <cuda.h>

#include <chrono>
#include <map>
#include <mutex>

#include "emu.h"

namespace {

std::mutex mu;
std::map<uint64_t, size_t> allocs;  // base -> bytes
bool initialized;

struct event {
    double ms;
    bool recorded;
};

// inside reports whether [p, p+n) lies in one allocation.
bool inside(CUdeviceptr p, size_t n) {
    std::lock_guard<std::mutex> g(mu);
    auto it = allocs.upper_bound((uint64_t)p);
    if (it == allocs.begin()) return false;
    --it;
    return (uint64_t)p >= it->first && (uint64_t)p + n <= it->first + it->second;
}

double now_ms() {
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace

extern "C" {

CUresult cuInit(unsigned int flags) {
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    initialized = true;
    return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int* v) {
    *v = 12000;
    return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult r, const char** s) {
    switch (r) {
        case CUDA_SUCCESS: *s = "CUDA_SUCCESS"; break;
        case CUDA_ERROR_INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; break;
        case CUDA_ERROR_NOT_INITIALIZED: *s = "CUDA_ERROR_NOT_INITIALIZED"; break;
        case CUDA_ERROR_NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; break;
        case CUDA_ERROR_OUT_OF_MEMORY: *s = "CUDA_ERROR_OUT_OF_MEMORY"; break;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult r, const char** s) {
    const char* n;
    if (cuGetErrorName(r, &n) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_VALUE;
    *s = "fake libcuda";
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int* n) {
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    *n = 1;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice* d, int ordinal) {
    if (ordinal != 0) return CUDA_ERROR_INVALID_VALUE;
    *d = 0;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char* name, int len, CUdevice) {
    std::snprintf(name, len, "host emulation (fake libcuda.so.1)");
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(size_t* n, CUdevice d) {
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (d != 0) return CUDA_ERROR_INVALID_VALUE;
    *n = size_t(80) << 30;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) {
    switch (a) {
        case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = 2048; break;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *v = 32; break;
        case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *v = 65536; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice) {
    static int dummy;
    *ctx = (CUcontext)&dummy;
    return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx) { return ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }

CUresult cuCtxSynchronize(void) { return CUDA_SUCCESS; }

CUresult cuModuleLoadDataEx(CUmodule* m, const void* image, unsigned int, CUjit_option*, void**) {
    if (image == nullptr || std::strstr((const char*)image, ".visible .entry") == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // The module remembers its PTX, so that a kernel is found only in the
    // module that exports it.
    *m = (CUmodule)strdup((const char*)image);
    return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
    std::string entry = std::string(".entry ") + name + "(";
    if (std::strstr((const char*)m, entry.c_str()) == nullptr) return CUDA_ERROR_NOT_FOUND;
    static void* self = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    void* sym = self ? dlsym(self, name) : nullptr;
    if (sym == nullptr) return CUDA_ERROR_NOT_FOUND;
    *f = (CUfunction)sym;
    return CUDA_SUCCESS;
}

CUresult cuMemAlloc(CUdeviceptr* p, size_t n) {
    if (n == 0) return CUDA_ERROR_INVALID_VALUE;
    void* b = std::aligned_alloc(256, (n + 255) / 256 * 256);
    if (b == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
    std::memset(b, 0xa5, n);  // garbage, as fresh device memory may hold
    std::lock_guard<std::mutex> g(mu);
    allocs[(uint64_t)b] = n;
    *p = (CUdeviceptr)b;
    return CUDA_SUCCESS;
}

CUresult cuMemFree(CUdeviceptr p) {
    std::lock_guard<std::mutex> g(mu);
    auto it = allocs.find((uint64_t)p);
    if (it == allocs.end()) return CUDA_ERROR_INVALID_VALUE;
    std::free((void*)p);
    allocs.erase(it);
    return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t n) {
    if (!inside(dst, n)) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy((void*)dst, src, n);
    return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t n) {
    if (!inside(src, n)) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(dst, (const void*)src, n);
    return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream) {
    if (!inside(dst, n) || !inside(src, n)) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy((void*)dst, (const void*)src, n);
    return CUDA_SUCCESS;
}

CUresult cuMemsetD32(CUdeviceptr p, unsigned int v, size_t n) {
    if (!inside(p, 4 * n)) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < n; i++) ((unsigned int*)p)[i] = v;
    return CUDA_SUCCESS;
}

CUresult cuMemsetD32Async(CUdeviceptr p, unsigned int v, size_t n, CUstream) {
    return cuMemsetD32(p, v, n);
}

CUresult cuMemsetD16(CUdeviceptr p, unsigned short v, size_t n) {
    if (!inside(p, 2 * n)) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < n; i++) ((unsigned short*)p)[i] = v;
    return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                        unsigned int by, unsigned int bz, unsigned int shared, CUstream, void** params,
                        void** extra) {
    if (f == nullptr || gx == 0 || gy != 1 || gz != 1 || bz != 1 || bx * by == 0 || bx * by > 1024 ||
        shared > 48 * 1024 || params != nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    uint64_t p[12] = {0};
    if (extra != nullptr) {
        void* buf = nullptr;
        size_t size = 0;
        for (int i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
            if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buf = extra[i + 1];
            else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) size = *(size_t*)extra[i + 1];
            else return CUDA_ERROR_INVALID_VALUE;
        }
        if (buf == nullptr || size % 8 != 0 || size > sizeof(p)) return CUDA_ERROR_INVALID_VALUE;
        std::memcpy(p, buf, size);
    }
    run_grid((kernel_fn)f, gx, bx, by, shared, p);
    return CUDA_SUCCESS;
}

CUresult cuEventCreate(CUevent* e, unsigned int) {
    *e = (CUevent) new event{0, false};
    return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent e, CUstream) {
    ((event*)e)->ms = now_ms();
    ((event*)e)->recorded = true;
    return CUDA_SUCCESS;
}

CUresult cuMemGetAddressRange(CUdeviceptr* base, size_t* size, CUdeviceptr p) {
    std::lock_guard<std::mutex> g(mu);
    auto it = allocs.upper_bound((uint64_t)p);
    if (it == allocs.begin()) return CUDA_ERROR_NOT_FOUND;
    --it;
    if ((uint64_t)p >= it->first + it->second) return CUDA_ERROR_NOT_FOUND;
    if (base) *base = (CUdeviceptr)it->first;
    if (size) *size = it->second;
    return CUDA_SUCCESS;
}

// Every allocation is in the one context cuDevicePrimaryCtxRetain gives.
CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attr, CUdeviceptr p) {
    if (attr != CU_POINTER_ATTRIBUTE_CONTEXT) return CUDA_ERROR_INVALID_VALUE;
    CUdeviceptr base;
    if (cuMemGetAddressRange(&base, nullptr, p) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_VALUE;
    CUcontext ctx;
    cuDevicePrimaryCtxRetain(&ctx, 0);
    *(CUcontext*)data = ctx;
    return CUDA_SUCCESS;
}

CUresult cuEventDestroy(CUevent e) {
    if (e == nullptr) return CUDA_ERROR_INVALID_VALUE;
    delete (event*)e;
    return CUDA_SUCCESS;
}

// Streams: every launch runs to completion when it is made, so a stream
// is only a handle to check.
struct stream {
    int live;
};

CUresult cuStreamCreate(CUstream* s, unsigned int flags) {
    if (flags != CU_STREAM_DEFAULT && flags != CU_STREAM_NON_BLOCKING) return CUDA_ERROR_INVALID_VALUE;
    *s = (CUstream) new stream{1};
    return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream s) {
    return s == nullptr || ((stream*)s)->live == 1 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuStreamDestroy(CUstream s) {
    if (s == nullptr || ((stream*)s)->live != 1) return CUDA_ERROR_INVALID_VALUE;
    ((stream*)s)->live = 0;  // kept, so that a use after destroy is caught
    return CUDA_SUCCESS;
}

CUresult cuStreamGetCtx(CUstream s, CUcontext* ctx) {
    if (s == nullptr || ((stream*)s)->live != 1) return CUDA_ERROR_INVALID_HANDLE;
    return cuDevicePrimaryCtxRetain(ctx, 0);
}

// A wait on an event that was never recorded, or by a destroyed stream,
// is an error.
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags) {
    if (flags != 0 || e == nullptr || !((event*)e)->recorded) return CUDA_ERROR_INVALID_VALUE;
    return s == nullptr || ((stream*)s)->live == 1 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuEventSynchronize(CUevent e) {
    return ((event*)e)->recorded ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent stop) {
    event *a = (event*)start, *b = (event*)stop;
    if (!a->recorded || !b->recorded) return CUDA_ERROR_INVALID_VALUE;
    *ms = (float)(b->ms - a->ms);
    return CUDA_SUCCESS;
}

}  // extern "C"
