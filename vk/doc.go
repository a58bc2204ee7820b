// Package vk runs the minGRU scan kernels on a Vulkan device: GLSL compute
// shaders (package shaders, compiled to SPIR-V by glslc and embedded in the
// binary) driven through github.com/vulkan-go/vulkan.
//
// # Using it
//
// New returns a *Backend implementing scans.Backend and
// scans.Instrumented. It touches no driver: the first call to Status or to
// an operation opens libvulkan.so.1 with dlopen (the runtime loader; the
// development package is not needed), creates an instance and a device,
// and remembers the outcome. A machine without a loader or a device gets a
// human-readable reason from Status ("Vulkan not available: ..."), never a
// crash; built without cgo (CGO_ENABLED=0) the backend reports exactly
// that.
//
//	b := vk.New()
//	if st := b.Status(); !st.Available {
//		log.Fatal(st.Reason)
//	}
//	a, _ := b.Upload(aHost) // *scans.Host -> *vk.Tensor
//	x, _ := b.Upload(xHost)
//	h, err := b.LinearScan(a, x, nil)
//	if err != nil { ... }
//	hHost, _ := b.Download(h)
//	b.Release(a); b.Release(x); b.Release(h)
//
// Operations accept only *Tensor values of the same backend (anything else
// is a *scans.ArgError naming the argument), check shapes with the scans
// package's Check functions, and return a *scans.ScanFallback without
// running anything for shapes outside the kernel envelope (see Supports).
// Failures of the device (out of memory, device lost) come back as
// *scans.KernelError. Every method is safe for concurrent use: each call
// records into its own reused command buffer and descriptor pool, and
// submissions to the one compute queue are serialized.
//
// # Environment
//
//	MINGRU_VK_DEVICE      choose the physical device: an index into the
//	                      driver's enumeration, or a case-insensitive
//	                      substring of its name. Unset: discrete GPU, then
//	                      integrated, virtual, CPU (the first on ties).
//	MINGRU_VK_VALIDATION  1 enables the Khronos validation layer, with
//	                      synchronization validation, and a debug-report
//	                      callback that records every warning and error
//	                      (this package's tests fail on any).
//	MINGRU_VK_PIPELINE_LOG  a file to which each compute pipeline is
//	                      appended as it is built: module, specialization
//	                      constants, build time and, where the device has
//	                      VK_KHR_pipeline_executable_properties, the
//	                      driver's statistics of the compiled code, under
//	                      its own names (the extension is enabled only
//	                      while this is set). Pipelines are built on first
//	                      use of a (kernel, shape class) pair and kept
//	                      while the backend lives (0.1 s to 4 s each on an
//	                      NVIDIA H200; drivers cache builds too).
//
// All three are read by New.
//
// # Tensors and memory
//
// A *Tensor is a device buffer holding the elements densely in row-major
// order: f32 as 32-bit floats, f16 and bf16 as 16-bit patterns packed two
// to a 32-bit word (the kernels need no 16-bit storage feature). On a
// device with unified memory (integrated GPUs, CPU devices) buffers live in
// host-visible device memory and Upload and Download copy directly;
// otherwise they go through a reused staging buffer in pieces of up to
// 64 MiB. PeakBytes counts tensors and kernel scratch, not staging.
//
// # Kernels
//
// One pipeline per (operation, direction, element type) module and
// specialization (workgroup size, k, v, chunk layout), built on first use
// and cached. Each operation is one or two dispatches (per slice of the
// batch, see below) between two timestamps (LastKernelTime). Arithmetic is
// f32; 16-bit outputs are rounded to nearest even at the store (NaN stays
// NaN; for f16 see below). f16 inputs are widened exactly: when it opens a
// device the backend widens all 65536 f16 values with the device's
// unpackHalf2x16 and compares each with the exact widening; where all
// agree (a NaN as some NaN) the f16 kernels use that one instruction,
// elsewhere a software path for zeros, subnormals, Inf and NaN (Vulkan
// lets a device flush 16-bit subnormals). A device may also flush f32
// subnormals in arithmetic (the NVIDIA driver does), so a bf16 or f32
// result below 2^-126 can come out as zero there; that error is inside
// every tolerance gate. Two 16-bit elements share a 32-bit word, so the
// kernels give each invocation whole words where the layout allows: an
// invocation of
// linear_scan or parallel_scan_log serves two adjacent 16-bit channels,
// matrix_scan's 2-vectors and 2x2 blocks, the Givens states and gradients
// (k even) and the affine rows are written as whole words with plain
// stores. A lone 16-bit store (a row that starts at an odd element, odd
// D's last channel, the dtheta word two lanes share where they do not run
// in one subgroup) is two atomics (clear the half, set it), so that a
// neighbouring invocation's half is never lost. Where every word of a
// tiled kernel or of the subgroup Givens kernels is whole (D even,
// matrix_scan, k even), its pipeline is specialized without the branches
// for a misaligned word: on an H200 those branches between a step's loads
// cost 1.5x to 4x. No
// kernel waits on another workgroup. Only the subgroup Givens kernels use
// subgroup operations, and only on a device that reports them (below);
// every other kernel is correct at any subgroup size.
//
// The f16 narrowing is chosen like the widening, because Vulkan leaves the
// rounding of packHalf2x16 open. On a GPU the backend narrows all 2^32 f32
// bit patterns with it when it opens the device (16 dispatches of 2^28
// patterns, once per process) and compares each with rounding to nearest
// even; where all agree (a NaN may become any NaN: results are only ever
// checked for being NaN), the f16 kernels store with that one instruction,
// elsewhere they round in integer arithmetic (on an H200 that left
// matrix_affine_scan about 1.5x slower in f16 than in bf16). A CPU device
// (lavapipe) keeps the integer rounding without the probe, which would
// take it over ten seconds on two cores; its packHalf2x16 does round to
// nearest even, and the package's tests check a sample of it and run the
// f16 kernels through it. Status().Notes names both f16 paths and how long
// the probe took, for example "f16 widening: unpackHalf2x16 (exact on all
// 65536 values); f16 narrowing: packHalf2x16 (round to nearest even on all
// 2^32 f32 values, probed in ...)".
//
// linear_scan and parallel_scan_log: a workgroup owns one lane, a batch
// entry and a tile of TILE contiguous channels (the smallest power of two
// >= D, at most 32, halved down to 8 while there are fewer than 128 lanes,
// so that few long sequences spread over more compute units), so loads are
// coalesced. The workgroup walks T in
// segments of CHUNKS*16 steps (in reverse for the backward): in a
// segment, each invocation loads its 16 steps of one channel into
// registers, once, computes their aggregate map from a zero carry, the
// aggregates meet in shared memory after one barrier, and each invocation
// folds the aggregates before its own onto the segment's carry and applies
// its steps from registers, writing the outputs; the fold over all chunks
// is the next segment's carry. Every input element is read once. In the
// forwards, and in the backwards but the f32 parallel_scan_log one, a
// chunk whose steps all lie inside T loads and stores them without a test
// per step (on an H200 that took the 16-bit linear_scan forward from 276
// to 249 µs at the large shape; the f32 log-space backward ran 6% slower
// with it and keeps the test). The
// chunk count doubles from 1 while a segment stays shorter than T, the
// device holds at most 2^17 channels in all (an invocation of a 16-bit
// kernel counts its two), and the workgroup stays
// within 256 invocations: short T or many lanes give one chunk (the
// sequential recurrence), long T with few lanes up to 256/TILE chunks.
// Composing chunk aggregates is not IEEE-identical to the sequential
// recurrence once one is infinite or NaN (it can form inf - inf), so a
// segment of a channel with such an aggregate, or whose carry is not
// finite, is walked sequentially instead: NaN and Inf propagate as in the
// eager reference (every chunked kernel follows this rule).
//
// The parallel_scan_log forward forms a chunk's aggregate and re-scans
// its steps in closed form rather than one logaddexp after another (two
// exponentials a step, chained only by sums; the recurrence, from memory,
// where the form is not as good: large exponents, a state far below its
// inputs, an output past the float range), stores each output as it is
// formed, and in 16 bits loads the next segment's steps while it folds,
// re-scans and stores the current one (shaders/parallel_scan_log_fwd.comp;
// on an H200 at the large shape f16 455 to 254 µs, bf16 484 to 268 µs).
//
// matrix_scan: the elementwise layout with a 2x2 block for a channel: a
// workgroup owns a batch entry and a tile of contiguous blocks (so
// neighbouring invocations read neighbouring blocks), each invocation holds
// 8 steps of A and b in registers, and the chunk aggregates are 2x2 affine
// maps; the same segment rule with 8 steps per invocation.
//
// matrix_affine_scan has two layouts, chosen by shape. The row layout
// (k >= 2 and v >= 2, with at least 2^13 row invocations b*n*k, or
// wherever the column layout below would not chunk T): one invocation per
// row of a block's kxv state (v floats in registers), 64/k blocks per
// workgroup in the f32 forward and 32/k in the 16-bit forwards and every
// backward (each the fastest of 32, 64 and 128 invocations on an H200),
// T walked in one piece. Each step an invocation reads its rows
// of A_t and X_t (the backward: A_t, dH_t, H_{t-1}), contiguous and read
// once, whole 16-byte vectors where the row allows, with the loads of the
// next steps (up to 8) already in flight in registers; the rows of
// H_{t-1} (backward: G_t, A_t and, in 16-bit types, H_{t-1}) are
// exchanged through shared memory, one barrier per step. The walk is the
// sequential recurrence, so NaN and Inf propagate as in the reference, and
// the backward forms dA_t in the same pass: in f32 an invocation forms
// column i of dA_t from the rows of G_t it reads for the carry and its own
// row of H_{t-1}; in 16-bit types, where a column would split 32-bit
// words between invocations, row i from the lane's H_{t-1}.
//
// The column layout (one-column states, and few lanes with long T, such as
// the long-T benchmark shape): each of a block's v columns evolves on its
// own; one invocation keeps one column (k floats) in registers in f32, two
// adjacent columns in 16-bit types with v even, whose elements of a row of
// X or H are then one 32-bit word, loaded and stored whole (one column an
// invocation would store its half of a shared word with two atomics), and
// every row of A_t it reads serves both. Rows of A are read as whole
// words: 16-byte vectors in f32 with k = 4 or 8 and in 16-bit types with
// k = 8 or 16, 8 and 4 bytes for 16-bit k = 4 and 2. With the few lanes
// this layout serves the device holds few invocations and each step would
// wait a memory round trip for its loads, so in f32 at k = 8 an
// invocation keeps the loads of its next 2 steps in flight in a ring of
// registers (A_t's whole block and its part of X_t; colRing in plan.go
// says why no other case takes one). T is chunked when
// ceil(k/v) <= 4: pass 1
// computes each chunk's aggregate from a zero carry (its kxk transition
// product built column by column across the lane's invocations, about
// 1 + ceil(k/v) plain steps), the aggregates meet in shared memory, and
// pass 2 rescans each chunk with its carry-in. The chunk count doubles from
// 1 while each chunk keeps at least 16 steps, the device holds fewer than
// 2^18 invocations (a second pass over A and X costs less than the latency
// it hides: measured on an H200), the workgroup stays within 256 invocations and the
// aggregates within 32 KiB of shared memory; otherwise, and for short T or
// many lanes, an invocation walks all of T. A column whose carry-in is not
// finite is rescanned sequentially. The backward is the same reverse
// scan per column; for v > 1, dA_t = G_t H_{t-1}^T sums over columns, so a
// second dispatch computes it from G read back in f32.
//
// givens_scan takes the sine and cosine of each angle after subtracting
// its nearest multiple of 2 pi (shaders/sincos.glsl): GLSL's sin and cos
// need be accurate only within [-pi, pi], and on NVIDIA GPUs they lose
// about |theta| 2^-24 beyond, so angles of trained models, which leave one
// turn, would otherwise miss the tolerance gates (bench.TestGivensAngles).
// Every finite angle is reduced exactly: below 2^18 (some 42000 turns;
// every f16 angle) by a three-part Cody and Waite reduction with exact
// products and no fused multiply-add assumed; beyond, by Payne and
// Hanek's, with the 96 bits of 1/(2 pi) that the angle's exponent
// selects. The second is a branch at each angle that made the f32 and
// bf16 kernels up to 2.1x slower on an H200 even where no angle took it,
// and a second walk of the lanes that met such an angle (noted in the
// walk, voted on by the subgroup) still cost some rows 7% to 41%; so the
// host chooses. Upload classifies a tensor's values as it copies them
// (one pass on the CPU), and givens_scan specializes its kernels to the
// class of theta: every angle within pi rounded to f32, whose nearest
// multiple of 2 pi is 0, runs with no reduction at all (the same values;
// 2% to 8% faster on an H200); a finite angle of 2^18 or more, or a theta
// an operation wrote (the host does not know its values), with both
// reductions; every other theta with Cody and Waite's alone. The
// benchmark's angles, uniform in (-pi, pi), take the first.
//
// givens_scan, on a device whose compute shaders have subgroup shuffles
// (Vulkan 1.1, VkPhysicalDeviceSubgroupProperties) in subgroups of at least
// k/2 invocations: k/2 invocations of one subgroup per block, each holding
// a pair of channels (2q, 2q+1), so the first layer of rotations is local
// and the second exchanges one value each way between neighbouring
// invocations by shuffles; each invocation computes two sines and cosines
// per step and owns whole words of the 16-bit states and gradients. A
// lane's k-1 angles are an odd number, so in 16-bit types two neighbouring
// lanes share a word of angle gradients at each step; where the two always
// meet in one subgroup (T in one chunk, N even, subgroups of k or more
// invocations) the backward stores that word whole from the lower lane,
// one store a step with no branch (on an H200 the large 16-bit forward and
// backward took 40% less than with the general case's branches and
// atomics, which serve the other shapes). Each
// keeps a ring of steps of inputs in registers (the loads of step t+D
// issued at step t), so that many loads are in flight while the
// recurrence runs: D = 16 where the invocations fill the device (8192 or
// more; 24 in the 16-bit forwards, whose steps take fewer registers), D =
// 4 where they are fewer, which an H200 runs faster there (lab shape 12.7
// us against 18.1 us forward). A chunked step costs about 5 unchunked
// ones there, so T is chunked only for few invocations (1024 or fewer) and
// into 16 to 64 chunks of at least 16 steps (the long-T shape takes 64):
// pass 1 builds each chunk's kxk transition product and offset (each
// invocation two rows, about k + 1 steps of work), the aggregates meet in
// shared memory, an inclusive scan over the chunks composes them (log2 of
// the chunk count rounds), and each chunk rescans from its carry-in, the
// composed aggregate of the chunks before it. The chunked kernels are
// modules of their own (givens_scan_sgc_*), so the unchunked ones carry
// none of that code. The lab and large shapes walk all of T in one chunk,
// reading every input once. Elsewhere: one
// invocation per block and chunk of T, the rotations recomputed in
// registers, never divided by sigma. T is chunked only for k <= 8 and
// while lanes x chunks < 4096: the same two passes, one invocation
// building the whole product and folding the aggregates of the chunks
// before its own into its carry-in. Chunking the large shape (4096 lanes)
// measured 3.5x slower on an H200, so many lanes walk all of T in one
// chunk. The inputs of several steps are loaded into registers before
// they are applied, so that their loads are in flight at once.
//
// Tensors larger than maxStorageBufferRange are processed in slices of the
// batch: each slice binds ranges starting at aligned offsets and passes the
// remaining element offset to the kernel. Only a single batch entry larger
// than the range is declined (ScanFallback).
//
// Mesa's CPU driver (lavapipe/llvmpipe) ends a shader invocation after
// 65535 loop iterations in all. The kernels keep their per-step loops
// unrollable so that the conformance lengths (T up to 4096) run there;
// T beyond about 65535 steps per invocation is a limit of that driver,
// not of GPUs.
package vk
