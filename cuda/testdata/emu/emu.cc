// emu runs one of the package's CUDA kernels on the host (see emu.h), for
// tests on machines without a GPU.
//
// Usage: emu KERNEL GRID BX BY SHARED PARAM...
// where each PARAM is "null" (a null pointer), "in:FILE" (a buffer read
// from FILE), "out:FILE:BYTES" (a buffer of BYTES bytes filled with 0xff,
// a NaN in f32, f16 and bf16, written to FILE afterwards) or "i:N" (a
// 64-bit integer). Build: g++ -std=c++20 -O1 -pthread -rdynamic emu.cc.
#include "emu.h"

#include <dlfcn.h>

#include <string>

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
    run_grid(fn, grid, bx, by, shared, p);
    for (auto& o : outs) {
        FILE* f = std::fopen(o.file.c_str(), "wb");
        if (!f || std::fwrite(o.buf, 1, o.bytes, f) != o.bytes) die("cannot write", o.file.c_str());
        std::fclose(f);
    }
    return 0;
}
