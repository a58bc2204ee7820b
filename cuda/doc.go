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
// Every kernel follows one design: one thread block per lane, with the
// recurrence's state held in registers and f32 arithmetic throughout (plain
// FMA, never TF32 or tensor cores). f16 and bf16 elements are read as
// 16-bit words and widened by hand; outputs are rounded to nearest even at
// the store (NaN stays NaN).
//
//   - linear_scan and parallel_scan_log: a lane is a batch row and a tile of
//     32 contiguous channels, so the loads of a warp are coalesced. T is cut
//     into chunks (blockDim.y of them): each thread scans its chunk once to
//     get the chunk's affine aggregate, the aggregates are joined in shared
//     memory, and each chunk re-scans from its carry-in and stores. The
//     number of chunks grows when lanes are few and T is long (see
//     chunkCount).
//   - matrix_scan, matrix_affine_scan and givens_scan: a lane is one block
//     (b, n). matrix_affine_scan's v columns are independent recurrences
//     sharing A_t, so thread j of the lane's block owns column j (k
//     registers) and needs no communication in the forward; the backward
//     joins the columns' contributions to dA_t in shared memory. These
//     block ops scan T as one chunk per lane.
//   - The block sizes k and v are template parameters, instantiated for
//     every member of the envelope (k, v in {1,2,4,8,16}; givens k in
//     {2,4,8,16}) and exported under names such as
//     matrix_affine_scan_fwd_f32_k8_v8. Other sizes return a
//     *scans.ScanFallback and run nothing.
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
