// Package cuda runs the minGRU scans on an NVIDIA GPU through the CUDA
// driver API. It implements scans.Backend, scans.Instrumented and
// scans.QueuedTimer; most programs reach it through package dispatch
// (MINGRU_SCAN=cuda or auto) rather than directly.
//
// Every operation is one kernel launch between two events, so
// LastKernelTime is always available. By default those events also hold
// the host's time to submit the launch (a few microseconds); with
// SetQueuedTiming(true), as scanbench runs, each launch waits in the queue
// behind a short busy kernel and the events hold the device's work alone.
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
// (sm_80, sm_90, ...) when an operation first needs a module: the
// elementwise ops and matrix_scan have one module each, matrix_affine_scan
// and givens_scan one per element type and k. A first call pays that
// compilation: on an H200 the first Givens call of an element type and k
// took 4.6 s to 11 s, the other modules under 4.5 s each (the driver's JIT
// cache, on by default, keeps the result across processes). A manifest
// (ptx/manifest.txt) records the SHA-256 of every source and the nvcc
// version, and a test fails when the embedded PTX is stale.
//
// The kernels share one rule: no thread block ever waits on another, every
// input element is read from memory once where the layout allows it, f32
// arithmetic throughout (plain FMA, never TF32 or tensor cores). Where T is
// cut into chunks inside a block, each chunk computes its aggregate (the
// affine map its steps apply) from a zero state, the aggregates meet in
// shared memory, and each chunk re-scans its steps from its carry-in,
// storing outputs. When a fold of aggregates is not finite (NaN or Inf in
// the inputs, or an overflow), the affected chunk takes its carry-in from
// the step-by-step recurrence instead, so NaN and Inf come out exactly as
// in the sequential reference. f16 and bf16 elements are read as 16-bit
// words and widened with the GPU's conversion instructions (exact); the
// kernels that keep coming steps in registers (matrix_scan's forward,
// givens_scan) keep them as loaded and widen them where a step uses them,
// since a widening waits for its load;
// outputs are rounded to nearest even at the store (the hardware's
// rounding; a NaN keeps its sign and payload as the software conversion
// does).
//
// A thread's loads held in registers are all tracked by one of the warp's
// few dependency counters, so the first use of any of them waits for the
// youngest: a ring of coming steps in registers, refilled a step at a
// time, leaves each round of steps waiting for the load issued just
// before it. Where that cost the most (read with cuobjdump and Nsight
// Compute on an H200), the kernels copy coming steps into shared memory
// instead, with sm_80's asynchronous copies (cp.async), whose groups are
// waited for one at a time: the affine row layout keeps U - 1 steps in
// flight that way, and the f32 Givens backward stages each next round
// while it runs the current one.
//
// The elementwise kernels' whole chunks and the unchunked givens_scan
// forward step a byte address by the stride of a step (one 64-bit add a
// load or store): an address formed from the step's index took up to ten
// instructions a load, a third of the 16-bit parallel_scan_log and
// givens_scan forwards' instructions, and those kernels are bound by their
// instructions at the large shape.
//
//   - linear_scan and parallel_scan_log: a lane is a batch row and a tile
//     of 32 contiguous channels, so a warp's loads are coalesced; the block
//     is 32 x C threads. T is walked in segments of C chunks of 16 (8 for
//     the backwards) steps each, held in registers, so every input is read
//     once (kernels/elementwise.cuh). linear_scan's 16-bit forward at an
//     even number of channels takes two channels per thread (a tile of
//     64, chunks of 12 steps), each step of both loaded and stored as one
//     32-bit word, where its lanes, half as many, can take twice the
//     chunks (linearPairs: so at the large shape, not at long-T, whose
//     few lanes already take the most chunks). The f32 linear_scan kernels take chunks as if the
//     device held twice its threads (16 chunks rather than 8 at the large
//     shape: 6% faster forward on an H200, where the 16-bit ones lose
//     40%). The log-space scan uses the GPU's fast exp2/log2 and
//     forms a chunk's aggregate in closed form (one exponential per step,
//     one logarithm per chunk); its forward takes fewer chunks where the
//     lanes alone keep 8 MiB of inputs in flight, since each chunk costs
//     every thread a logaddexp in the fold (logFwdChunks). Its 16-bit
//     forwards also re-scan a chunk in closed form (two exponentials a
//     step, no chain of them; the recurrence where the form is not
//     trusted), load the next segment's steps ahead, and take two channels
//     a thread where the lanes nearly fill the device (logPairs).
//   - matrix_scan (k=2, v=1): a lane is a batch row and a tile of W
//     contiguous blocks n, one thread per block with 8 steps of A and b
//     (dh backward) in registers, held as loaded in 16-bit (where the
//     forward keeps 12), the layout of the elementwise scans
//     (kernels/matrix_scan.cu). W is affineTile's but at least 4 (whole
//     32-byte sectors a step), chunks hold at least 8 steps, and the
//     forward counts the device full at the threads its registers allow
//     (matrixScanLayout). The f32 backward also holds each step's
//     h_{t-1}, loaded with the segment, in blocks of at most 512 threads.
//   - matrix_affine_scan with v > 1 and many lanes (v <= 8 for the
//     backward; see affineRows): the row layout. Thread i of a lane owns
//     row i of H, reads its rows of A_t and X_t (coalesced, once, copied
//     into a ring of up to 16 coming steps in shared memory, 512 bytes a
//     thread) and exchanges the rows of H_{t-1} through shared memory, one
//     barrier per step; T is not cut. The 16-bit stores narrow a row
//     without the NaN patch unless one of its values is NaN. (k = 1 in
//     16-bit, whose rows are too short to copy, keeps the column layout.)
//   - matrix_affine_scan with v > 1 and few lanes: the column layout. The
//     v columns of H are independent recurrences sharing A_t, so thread j
//     of a chunk owns column j (k registers) and T is chunked; a chunk's
//     aggregate includes its transition product, carried as k*ceil(k/v)
//     registers (where that exceeds 64, k=16 with v < 4, the lane is one
//     chunk). Each chunk reads its inputs twice.
//   - matrix_affine_scan with v = 1: a lane is a batch row and a tile of W
//     contiguous blocks n, one thread per block, W x C threads; W is 32
//     (or the power of two just above N when N is smaller), halved down to
//     1 while the grid would give an SM fewer than two blocks (affineTile).
//   - givens_scan: one thread per channel; the k threads of a lane sit in
//     one warp and exchange the rotated pairs with shuffles, each thread
//     computing one angle's sine and cosine per step: with f32 inputs the
//     accurate single-precision reduction and polynomials, inlined; with
//     f16 and bf16 inputs the special function unit's (sin.approx,
//     cos.approx: absolute error at most 2^-21.4, a thousandth of an f16
//     unit in the last place) of theta reduced by its nearest multiple of
//     2 pi, up to the bound of the library's fast path (the library's
//     function beyond). The unchunked forward runs each round of steps on
//     the fast path and, when one of the round's angles was beyond it,
//     runs the round again on the exact path (rewriting its outputs);
//     the other kernels choose a round's path by its angles first, and f16
//     angles, all within the bound, always take the fast one. Upload
//     notes whether every value of a tensor lies within pi rounded to f32
//     (the multiple of 2 pi is then 0); the unchunked forward and
//     backward of such a theta (the benchmark's, uniform in (-pi, pi))
//     run the _turn kernels, which test no angle and, in 16-bit types,
//     leave out the reduction (on an H200 the forwards 1% to 10% faster,
//     the 16-bit forwards and backwards 4% to 11%). A ring of 16
//     steps of inputs (32 in the 16-bit forward), held as loaded, keeps
//     loads in flight; the f32 backward instead stages rounds of 8 steps
//     in shared memory (asynchronous copies, two halves). A block is
//     W*k threads for W contiguous lanes (givensTile), and T is not cut
//     unless the b*n*k threads are at most 1/64 of what the device keeps
//     in flight (givensChunks: a chunked step costs several unchunked
//     ones, so chunking pays only with 8 chunks or more and few lanes);
//     then the _chunked kernels cut T into 8 to 32 chunks of at least 8
//     steps (16 above 1/128 of the device's threads), walked in rounds of
//     4 steps with no tail variant (a body
//     small enough for the instruction cache, on which the few warps of
//     such shapes otherwise stall): each thread first carries its row of
//     the chunk's transition product (k+1 values per step), the chunks
//     fold the aggregates before them (after them, backward) into their
//     carry-in, then re-scan their steps from it, reading the inputs a
//     second time; a carry-in that is not finite is walked sequentially.
//     Rotations are recomputed in registers, never formed as a matrix, and
//     the backward never divides by sigma: it reads h_{t-1} from the
//     stored forward output.
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
