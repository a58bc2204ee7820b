// Package cuda runs the minGRU scans on an NVIDIA GPU through the CUDA
// driver API. It implements scans.Backend and scans.Instrumented; most
// programs reach it through package dispatch (MINGRU_SCAN=cuda or auto)
// rather than directly.
//
// # Building
//
// The CUDA backend is compiled only with the build tag cuda:
//
//	go build -tags cuda ./...
//
// Without the tag, New returns a backend whose Status says
// "CUDA not built in: rebuild with -tags cuda" and whose operations return a
// *scans.UnavailableError. With the tag, the package needs CUDA's cuda.h at
// build time (Debian's nvidia-cuda-dev, or scripts/cuda-headers.sh, which
// fetches CUDA 11.8's header into .cuda/ and prints the CGO_CFLAGS to use).
// It does not link libcuda: it opens libcuda.so.1 with dlopen the first time
// the backend is used, so a binary built with the tag starts on any machine
// and reports why CUDA is missing ("CUDA not available: cuInit:
// CUDA_ERROR_NO_DEVICE ...") instead of failing to load or exiting.
//
// The driver API is called directly rather than through gorgonia.org/cu
// v0.9.6, because that package calls cuInit in its init function and exits
// the process when it fails: merely importing it would end every program
// on a machine without a GPU, which the library's contract forbids
// (importing must not touch a driver, and a missing GPU is a status, not a
// crash). gorgonia.org/cu v0.9.6 also does not compile against CUDA 13's
// cuda.h: CUDA 13 maps cuCtxCreate to cuCtxCreate_v4 (which takes a
// CUctxCreateParams argument) and replaced cuMemAdvise and
// cuMemPrefetchAsync by their _v2 forms (which take a CUmemLocation instead
// of a device); cu's cgo calls to them fail. This package uses the primary
// context and none of those calls, and builds against CUDA 11.8 or 12
// headers.
//
// # Kernels
//
// The kernels are CUDA C++ in kernels/*.cu, compiled by nvcc 11.8 to PTX
// (nvcc -ptx -arch=compute_80 -O3, PTX ISA 7.8) by go generate and embedded
// in the binary; the driver JIT-compiles the PTX for the GPU it finds
// (sm_80, sm_90, ...) when an operation first needs a module. A manifest
// (ptx/manifest.txt) records the SHA-256 of every source and the nvcc
// version, and a test fails when the embedded PTX is stale.
//
// Every kernel follows one design: one thread block per lane, the
// recurrence's state in registers, f32 arithmetic throughout (plain FMA,
// never TF32 or tensor cores), and T cut into chunks inside the block. A
// chunk is scanned twice: once from a zero state to get its aggregate (the
// affine map it applies), and, after the aggregates are joined in shared
// memory, again from its carry-in, storing outputs. No block ever waits on
// another. f16 and bf16 elements are read as 16-bit words and widened by
// hand; outputs are rounded to nearest even at the store (NaN stays NaN).
//
//   - linear_scan and parallel_scan_log: a lane is a batch row and a tile
//     of 32 contiguous channels, so a warp's loads are coalesced; the block
//     is 32 x C threads. T is walked in segments of C chunks of 8 or 16
//     steps each; a chunk's steps stay in registers between the aggregate
//     and the re-scan, so every input is read once (kernels/elementwise.cuh).
//   - matrix_scan and matrix_affine_scan with v > 1: a lane is one block
//     (b, n). The v columns of H are independent recurrences sharing A_t,
//     so thread j of a chunk owns column j (k registers) and needs no
//     communication in the forward; the backward joins the columns'
//     contributions to dA_t in shared memory, one barrier per step. A
//     chunk's aggregate includes its transition product, carried as
//     k*ceil(k/v) registers; where that exceeds 64 (k=16 with v < 4) the
//     lane is one chunk.
//   - matrix_scan (k=2, v=1) and matrix_affine_scan with v = 1: a lane is
//     a batch row and a tile of W contiguous blocks n, one thread per
//     block (k registers of state), so a warp's loads of A_t are one
//     contiguous run; the block is W x C threads. W is 32 (or the power
//     of two just above N when N is smaller), halved down to 1 while the
//     grid would give an SM fewer than two blocks (see affineTile). The
//     backward forms dA_t = G_t h_{t-1}^T in the thread.
//   - givens_scan: a lane is a batch row and a tile of W contiguous blocks
//     n (W as for v = 1 above), one thread per block and chunk holding the
//     k channels; rotations are recomputed in registers, never formed as
//     a matrix, and the backward never divides by sigma. Chunking carries
//     a k*k transition product, so k=16 runs as one chunk.
//   - The number of chunks C (a power of two up to 32) grows while each
//     chunk keeps at least 16 steps and the blocks the GPU holds at once
//     still leave room for more threads (see chunkCount): one chunk when T
//     is short or lanes are plentiful, up to 32 for a few long sequences.
//   - The block sizes k and v are template parameters, instantiated for
//     every member of the envelope (k, v in {1,2,4,8,16}; givens k in
//     {2,4,8,16}) and exported under names such as
//     matrix_affine_scan_fwd_f32_k8_v8. Other sizes return a
//     *scans.ScanFallback and run nothing.
//
// kernels/ptxas-sm90.txt, written by go generate, lists each kernel's
// registers and spills when compiled for sm_90.
//
// # Testing without a GPU
//
// Besides the untagged checks (envelope, kernel names, PTX freshness), two
// tests run the kernels themselves on the host when g++ is installed:
// TestKernelsEmulated compiles kernels/*.cu as C++ (testdata/emu: one OS
// thread per CUDA thread, a std::barrier for __syncthreads) and runs the
// project's conformance matrix against eager; with the cuda tag,
// TestFakeDriver builds a stand-in libcuda.so.1 on the same emulation and
// reruns the GPU tests through the real driver calls. Outputs start as NaN,
// so an element a kernel never writes fails. They check index math,
// chunking, barriers and the host code, not the GPU's arithmetic; on a GPU
// the tagged tests run for real:
//
//	go test -c -tags cuda -o .build/cuda.test ./cuda
//	./.build/cuda.test -test.v        # on the GPU machine, from the repository root
//
// # Example
//
//	b := cuda.New()
//	if st := b.Status(); !st.Available {
//		log.Fatal(st.Reason)
//	}
//	a, _ := b.Upload(aHost) // (B,T,D)
//	x, _ := b.Upload(xHost)
//	h, err := b.LinearScan(a, x, nil)
//	if err != nil {
//		log.Fatal(err)
//	}
//	out, _ := b.Download(h)
//	b.Release(a)
//	b.Release(x)
//	b.Release(h)
//
// Every method is safe for concurrent use: one goroutine, locked to an OS
// thread, owns the CUDA context and runs every driver call in turn.
package cuda
