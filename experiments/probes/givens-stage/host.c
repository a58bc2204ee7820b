// Host side of the Givens forward probe (probe.cu): loads the three PTX
// modules (f32, f16, bf16; k = 8), fills theta uniform in (-pi, pi),
// sigma uniform in (0.5, 1) and x standard normal (the benchmark's
// distributions) at B x T x N, checks that every variant writes every
// element of h (poisoned first) and what it writes against the library's
// _turn kernel, then times the variants in turn (median of the repeats)
// against the device's copy bandwidth.
// Usage: probe <ptx dir> [B T N reps]
#include <cuda.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                               \
    do {                                                                    \
        CUresult e_ = (x);                                                  \
        if (e_ != CUDA_SUCCESS) {                                           \
            const char* s_ = "";                                            \
            cuGetErrorString(e_, &s_);                                      \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_); \
            exit(1);                                                        \
        }                                                                   \
    } while (0)

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double unif(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((rng >> 11) + 0.5) / 9007199254740992.0;
}
static double normal(void) { return sqrt(-2 * log(unif())) * cos(2 * M_PI * unif()); }

static int cmpf(const void* a, const void* b) {
    float x = *(const float*)a, y = *(const float*)b;
    return x < y ? -1 : x > y;
}
static float median(float* v, int n) {
    qsort(v, n, sizeof(float), cmpf);
    return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

// f16 and bf16 patterns to double, for the comparison.
static double wide(int dt, const void* p, size_t i) {
    if (dt == 0) return ((const float*)p)[i];
    uint16_t h = ((const uint16_t*)p)[i];
    if (dt == 2) {
        uint32_t b = (uint32_t)h << 16;
        float f;
        memcpy(&f, &b, 4);
        return f;
    }
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

#define NV 13
// The variants: kernel, lanes a block (the library's tile at the large
// shape is 8), kind (0 the reference, 1 a forward, 2 memory traffic
// alone, 3 arithmetic alone), and the index of its shared memory a warp in
// probe_stage_bytes (-1: none).
typedef struct {
    const char* name;
    int lanes, kind, bytes;
} Var;
static const char* dtn[3] = {"f32", "f16", "bf16"};

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: probe <ptx dir> [B T N reps]\n");
        return 2;
    }
    long B = argc > 2 ? atol(argv[2]) : 32, T = argc > 3 ? atol(argv[3]) : 4096, N = argc > 4 ? atol(argv[4]) : 128;
    int reps = argc > 5 ? atoi(argv[5]) : 30;
    const long K = 8;
    CK(cuInit(0));
    CUdevice dev;
    CK(cuDeviceGet(&dev, 0));
    char name[256];
    CK(cuDeviceGetName(name, sizeof name, dev));
    int drv;
    CK(cuDriverGetVersion(&drv));
    int sms;
    CK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    CUcontext ctx;
    CK(cuCtxCreate(&ctx, 0, dev));
    printf("device %s, %d SMs, CUDA driver API %d; B=%ld T=%ld N=%ld k=%ld, %d repeats\n", name, sms, drv, B, T, N,
           K, reps);

    const size_t ne = (size_t)B * T * N * K, na = (size_t)B * T * N * (K - 1);
    CUevent e0, e1;
    CK(cuEventCreate(&e0, 0));
    CK(cuEventCreate(&e1, 0));

    // Copy bandwidth: a device-to-device copy of 1 GiB, read plus written.
    const size_t cb = (size_t)1 << 30;
    CUdeviceptr ca, cbuf;
    CK(cuMemAlloc(&ca, cb));
    CK(cuMemAlloc(&cbuf, cb));
    CK(cuMemsetD8(ca, 1, cb));
    float ct[20];
    for (int i = 0; i < 22; i++) {
        CK(cuEventRecord(e0, 0));
        CK(cuMemcpyDtoD(cbuf, ca, cb));
        CK(cuEventRecord(e1, 0));
        CK(cuEventSynchronize(e1));
        if (i >= 2) CK(cuEventElapsedTime(&ct[i - 2], e0, e1));
    }
    const double copy = 2.0 * cb / (median(ct, 20) * 1e-3) / 1e9;
    printf("copy bandwidth %.0f GB/s\n\n", copy);
    CK(cuMemFree(ca));
    CK(cuMemFree(cbuf));

    float* hf = malloc(ne * sizeof(float));
    float* ha = malloc(na * sizeof(float));
    void* got = malloc(ne * 4);
    void* want = malloc(ne * 4);
    printf("| type | kernel | shared bytes a block | median | bytes | %% of copy | vs _turn | h against _turn |\n|---|---|---:|---:|---:|---:|---:|---|\n");
    double f32turn = 0;
    for (int dt = 0; dt < 3; dt++) {
        const int es = dt == 0 ? 4 : 2;
        char path[1024];
        snprintf(path, sizeof path, "%s/probe_%s.ptx", argv[1], dtn[dt]);
        CUmodule mod;
        CK(cuModuleLoad(&mod, path));
        char turn[64];
        snprintf(turn, sizeof turn, "givens_scan_fwd_%s_k8_turn", dtn[dt]);
        // probe_stage_bytes order: fwd2, fwd3, fwd32_2, fwd32_3, mem2, mem3, alu.
        const Var vars[NV] = {
            {turn, 8, 0, -1},          {turn, 4, 1, -1},          {turn, 16, 1, -1},
            {"probe_turn256", 32, 1, -1}, {"probe_fwd2", 8, 1, 0},   {"probe_fwd32_2", 8, 1, 2},
            {"probe_fwd3", 8, 1, 1},      {"probe_fwd2", 32, 1, 0},  {"probe_ring_mem", 8, 2, -1},
            {"probe_mem2", 8, 2, 4},      {"probe_mem3", 8, 2, 5},   {"probe_mem2", 32, 2, 4},
            {"probe_alu", 8, 3, 6},
        };
        const char* names[NV];
        int kind[NV];
        for (int i = 0; i < NV; i++) {
            names[i] = vars[i].name;
            kind[i] = vars[i].kind;
        }
        CUfunction fn[NV], conv, bytesfn;
        for (int i = 0; i < NV; i++) CK(cuModuleGetFunction(&fn[i], mod, names[i]));
        CK(cuModuleGetFunction(&conv, mod, "probe_from_f32"));
        CK(cuModuleGetFunction(&bytesfn, mod, "probe_stage_bytes"));

        CUdeviceptr th, sg, x, h, hw, tmp, ib;
        CK(cuMemAlloc(&th, na * es));
        CK(cuMemAlloc(&sg, ne * es));
        CK(cuMemAlloc(&x, ne * es));
        CK(cuMemAlloc(&h, ne * es));
        CK(cuMemAlloc(&hw, ne * es));
        CK(cuMemAlloc(&tmp, ne * 4));
        CK(cuMemAlloc(&ib, 4 * NV));
        // Inputs: drawn in f32, rounded on the device to the type.
        for (int q = 0; q < 3; q++) {
            size_t n = q == 0 ? na : ne;
            float* src = q == 0 ? ha : hf;
            for (size_t i = 0; i < n; i++) {
                src[i] = q == 0 ? (float)(M_PI * (2 * unif() - 1)) : q == 1 ? (float)(0.5 + 0.5 * unif()) : (float)normal();
            }
            CK(cuMemcpyHtoD(tmp, src, n * 4));
            CUdeviceptr dst = q == 0 ? th : q == 1 ? sg : x;
            long long nn = (long long)n;
            void* args[] = {&tmp, &dst, &nn};
            CK(cuLaunchKernel(conv, (unsigned)((n + 255) / 256), 1, 1, 256, 1, 1, 0, 0, args, 0));
        }
        void* zargs[] = {&ib};
        CK(cuLaunchKernel(bytesfn, 1, 1, 1, 1, 1, 1, 0, 0, zargs, 0));
        int warpBytes[NV];
        CK(cuMemcpyDtoH(warpBytes + 1, ib, 4 * (NV - 1)));
        warpBytes[0] = 0;

        unsigned shared[NV], threadsOf[NV], blocksOf[NV];
        for (int i = 0; i < NV; i++) {
            threadsOf[i] = (unsigned)(vars[i].lanes * K);
            blocksOf[i] = (unsigned)(B * ((N + vars[i].lanes - 1) / vars[i].lanes));
            shared[i] = vars[i].bytes < 0 ? 0 : threadsOf[i] / 32 * warpBytes[vars[i].bytes + 1];
            if (shared[i]) CK(cuFuncSetAttribute(fn[i], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared[i]));
        }
        CUdeviceptr nul = 0;
        long long TT = T, NN = N;
        void* args[] = {&th, &sg, &x, &nul, &hw, &TT, &NN};
        void* argsRef[] = {&th, &sg, &x, &nul, &h, &TT, &NN};

        // Check: h poisoned (all ones: NaN in every type), then run.
        CK(cuMemsetD8(h, 0xff, ne * es));
        CK(cuLaunchKernel(fn[0], blocksOf[0], 1, 1, threadsOf[0], 1, 1, 0, 0, argsRef, 0));
        CK(cuCtxSynchronize());
        CK(cuMemcpyDtoH(want, h, ne * es));
        char verdict[NV][160];
        for (int v = 0; v < NV; v++) {
            size_t bad = 0, diff = 0;
            double maxd = 0;
            if (v == 0) {
                for (size_t i = 0; i < ne; i++) bad += isnan(wide(dt, want, i));
                snprintf(verdict[v], sizeof verdict[v], "reference; %zu unwritten or NaN", bad);
                continue;
            }
            CK(cuMemsetD8(hw, 0xff, ne * es));
            CK(cuLaunchKernel(fn[v], blocksOf[v], 1, 1, threadsOf[v], 1, 1, shared[v], 0, args, 0));
            CK(cuCtxSynchronize());
            CK(cuMemcpyDtoH(got, hw, ne * es));
            if (kind[v] == 3) {  // the arithmetic alone: only the last step's h, for no check
                snprintf(verdict[v], sizeof verdict[v], "not comparable (timing only)");
                continue;
            }
            for (size_t i = 0; i < ne; i++) {
                double a = wide(dt, got, i), b = wide(dt, want, i);
                if (isnan(a)) {
                    bad++;
                } else if (memcmp((char*)got + i * es, (char*)want + i * es, es) != 0) {
                    diff++;
                    if (fabs(a - b) > maxd) maxd = fabs(a - b);
                }
            }
            if (kind[v] == 1) {
                snprintf(verdict[v], sizeof verdict[v], "%zu unwritten or NaN, %zu differ (max %.3g)", bad, diff, maxd);
            } else {
                snprintf(verdict[v], sizeof verdict[v], "%zu unwritten or NaN (other values)", bad);
            }
        }

        // Timing: the four kernels in turn, each repeat.
        float* tv = malloc(sizeof(float) * NV * reps);
        for (int r = -3; r < reps; r++) {
            for (int v = 0; v < NV; v++) {
                CK(cuEventRecord(e0, 0));
                CK(cuLaunchKernel(fn[v], blocksOf[v], 1, 1, threadsOf[v], 1, 1, shared[v], 0, v ? args : argsRef, 0));
                CK(cuEventRecord(e1, 0));
                CK(cuEventSynchronize(e1));
                if (r >= 0) CK(cuEventElapsedTime(&tv[v * reps + r], e0, e1));
            }
        }
        const double bytes = (double)(na + 3 * ne) * es;
        double tturn = 0;
        for (int v = 0; v < NV; v++) {
            const double us = median(tv + v * reps, reps) * 1e3;
            if (v == 0) tturn = us;
            if (v == 0 && dt == 0) f32turn = us;
            printf("| %s | %s, %d lanes a block | %u | %.1f µs | %.0f MB | %.1f%% | %.3f | %s |\n", dtn[dt], names[v], vars[v].lanes, shared[v], us, bytes / 1e6,
                   100 * bytes / (us * 1e-6) / 1e9 / copy, us / tturn, verdict[v]);
        }
        if (dt > 0) printf("| %s | speedup of _turn over f32 _turn | | %.2fx | | | | |\n", dtn[dt], f32turn / tturn);
        free(tv);
        CK(cuMemFree(th));
        CK(cuMemFree(sg));
        CK(cuMemFree(x));
        CK(cuMemFree(h));
        CK(cuMemFree(hw));
        CK(cuMemFree(tmp));
        CK(cuMemFree(ib));
        CK(cuModuleUnload(mod));
    }
    return 0;
}
