package cuda

import "github.com/mingru/scans"

// Chunking of T inside a lane (one thread block).
const (
	tile      = 32 // channels per lane of the elementwise scans (kernels/elementwise.cuh TILE)
	maxChunks = 32 // chunks per lane
	minChunk  = 16 // steps per chunk below which splitting T does not pay
	maxShared = 48 << 10
)

// elementwisePairs reports whether an elementwise scan runs with two
// channels per thread: the 16-bit forwards where N is even, so that every
// pair of channels is one aligned 32-bit word. DESIGN.md records the
// measurements.
func elementwisePairs(op scans.Op, dir scans.Direction, n int, dt scans.DType) bool {
	elementwise := op == scans.OpLinearScan || logScan(op)
	return elementwise && dir == scans.Forward && dt != scans.F32 && n%2 == 0
}

// occupancy is what a device keeps in flight at once, over all its SMs:
// threads and thread blocks, its number of SMs, and the registers of one
// SM (0: not known, no limit).
type occupancy struct {
	threads, blocks, sms, regs int
	// layout, where not nil, imposes a layout experiment's choices
	// (Sweep) in place of the rules' own.
	layout *layoutRules
}

// layoutRules are the layout choices a layout experiment imposes: each
// non-nil function replaces the rule of the same name.
type layoutRules struct {
	givensTile        func(b, n, k int, occ occupancy) int
	givensChunks      func(b, t, n, k int, occ occupancy) int
	elementwiseChunks func(op scans.Op, bwd bool, T, lanes, esize, ch int, occ occupancy) int
	matrixScanLayout  func(b, t, n int, dt scans.DType, bwd bool, occ occupancy) (w, c int)
}

// h200 is an NVIDIA H200's occupancy: 132 SMs of 2048 threads, 32 blocks
// and 65536 registers each. Tests plan launches with it.
var h200 = occupancy{threads: 132 * 2048, blocks: 132 * 32, sms: 132, regs: 65536}

// atRegisters is occ for a kernel whose threads take r registers each:
// its threads are at most the SMs' registers over r.
func (occ occupancy) atRegisters(r int) occupancy {
	if occ.regs > 0 && r > 0 {
		occ.threads = min(occ.threads, occ.sms*(occ.regs/r))
	}
	return occ
}

// chunkCount is the number of chunks C into which a scan cuts T, for
// lanes lanes (thread blocks) of width threads per chunk on a device of
// occupancy occ, chunks of at least steps steps; fits reports whether C
// chunks fit the kernel's other limits (shared memory). C doubles, up to
// 32, while
//
//   - each chunk keeps at least steps steps (T >= steps*2C),
//   - the block stays within 1024 threads (width*2C),
//   - the blocks the device runs at once, min(lanes, occ.blocks), still
//     have no more threads than it keeps in flight (x width*2C <=
//     occ.threads),
//
// so C is 1 when T is short or lanes are plentiful, and grows when a few
// long sequences would leave the GPU idle. In the block scans each extra
// chunk costs one more read of its inputs (the aggregate pass) and a fold
// of at most 31 aggregates; the elementwise scans hold a chunk's steps in
// registers and pay only the folds and two barriers per segment.
func chunkCount(T, steps, lanes, width int, occ occupancy, fits func(c int) bool) int {
	live := int64(min(lanes, occ.blocks))
	c := 1
	for c < maxChunks && T >= steps*2*c && width*2*c <= 1024 &&
		live*int64(width)*2*int64(c) <= int64(occ.threads) && (fits == nil || fits(2*c)) {
		c *= 2
	}
	return c
}

// affineChunkable mirrors kernels/affine.cuh's AFFINE_CHUNKABLE: the
// forward of matrix_affine_scan chunks T only where carrying the chunk's
// transition product takes at most 64 registers.
func affineChunkable(k, v int) bool { return k*((k+v-1)/v) <= 64 }

// givensMaxThreads mirrors kernels/givens_scan.cu's GIVENS_MAX_THREADS,
// the kernels' __launch_bounds__: the largest block the host may launch.
const givensMaxThreads = 128

// givensTile is the number W of contiguous lanes (blocks n of one batch
// row) that one thread block of the Givens kernels serves, with one
// thread per channel: W*K threads, whole warps (W*K >= 32) of at most
// givensMaxThreads. W starts at givensMaxThreads/K, is halved (not
// below 32/K) while W/2 lanes still cover n, then while the grid, b *
// ceil(n/W) blocks, would give fewer than two blocks to each SM: few
// lanes then spread over more SMs. The kernels do not cut T, so the
// grid holds b*n*k threads whatever the rule.
func givensTile(b, n, k int, occ occupancy) int {
	sms := max(occ.sms, 1)
	lo := max(32/k, 1)
	w := max(givensMaxThreads/k, lo)
	for w > lo && w/2 >= n {
		w /= 2
	}
	for w > lo && b*((n+w-1)/w) < 2*sms {
		w /= 2
	}
	return w
}

// givensTileOf is the tile rule planFor applies to the unchunked Givens
// kernels: givensTile, or the tile a layout experiment imposes.
func givensTileOf(b, n, k int, occ occupancy) int {
	if occ.layout != nil && occ.layout.givensTile != nil {
		return occ.layout.givensTile(b, n, k, occ)
	}
	return givensTile(b, n, k, occ)
}

// givensChunkedMaxThreads mirrors kernels/givens_scan.cu's
// GIVENS_CHUNKED_MAX_THREADS, the largest block of the chunked Givens
// kernels. givensMinChunks and givensMinChunkSteps bound where chunking
// pays (givensChunks).
const (
	givensChunkedMaxThreads = 256
	givensMinChunks         = 8
	givensMinChunkSteps     = 8
)

// givensChunks is the number C of chunks into which the Givens kernels cut
// T: 1, or a power of two from 8 to 32.
//
// The unchunked kernels run b*n*k threads, each walking all of T with its
// next steps' loads in flight. A chunked kernel's step costs several
// unchunked ones (its first pass carries k+1 vectors through the chunk,
// then the chunk is read again), so chunking pays only with 8 chunks or
// more, and only where the unchunked threads are too few to keep the device
// busy. So T is cut only when the b*n*k threads are at most 1/64 of what
// the device keeps in flight (occ.threads: 32 threads per SM), and then
// into as many chunks as fit: up to 32, a lane's k*C threads within one
// block, each chunk of at least 8 steps where the threads are at most 1/128
// of the device's, else of at least 16. DESIGN.md records the measurements.
func givensChunks(b, t, n, k int, occ occupancy) int {
	threads := int64(b) * int64(n) * int64(k)
	if threads*64 > int64(occ.threads) {
		return 1
	}
	steps := givensMinChunkSteps
	if threads*128 > int64(occ.threads) {
		steps *= 2
	}
	c := 1
	for c < maxChunks && t >= steps*2*c && k*2*c <= givensChunkedMaxThreads {
		c *= 2
	}
	if c < givensMinChunks {
		return 1
	}
	return c
}

// givensStageRound mirrors kernels/givens_scan.cu's GIVENS_STAGE_ROUND:
// the steps of a round of the unchunked f32 backward, which stages its
// inputs in shared memory.
const givensStageRound = 8

// givensStageBytes is the unchunked f32 backward's dynamic shared memory
// for blocks of bx threads: two halves of a round's four inputs a thread,
// as floats.
func givensStageBytes(bx int) int { return 2 * 4 * givensStageRound * bx * 4 }

// givensChunksOf is the chunk rule planFor applies: givensChunks, or
// the chunk count a layout experiment imposes.
func givensChunksOf(b, t, n, k int, occ occupancy) int {
	if occ.layout != nil && occ.layout.givensChunks != nil {
		return occ.layout.givensChunks(b, t, n, k, occ)
	}
	return givensChunks(b, t, n, k, occ)
}

// givensChunkTile is the number W of contiguous lanes that one block of
// the chunked Givens kernels serves with c chunks of k threads each: 1,
// or as many as make the block one whole warp when k*c < 32.
func givensChunkTile(k, c int) int { return max(32/(k*c), 1) }

// affineShared is the dynamic shared memory in bytes of the affine
// kernels with c chunks and tiles of w lanes (w = 1 when v > 1): the
// chunks' aggregates, c * w * (k*k + k*v) floats when c > 1, and for the
// backward with v > 1 the per-step buffers of dA_t, c * 4 * k*v floats.
func affineShared(k, v, w, c int, bwd bool) int {
	n := 0
	if c > 1 {
		n = c * w * (k*k + k*v)
	}
	if bwd && v > 1 {
		n += c * 4 * k * v
	}
	return 4 * n
}

// elementwiseChunks is the chunk count of the elementwise kernels of op,
// backward or not, over lanes lanes (blocks of tile threads a chunk, ch
// channels a thread) of T steps of esize-byte elements: chunkCount's,
// lowered by logFwdChunks for the log-space forwards (logScan) and kept
// within their 16-bit kernels' blocks.
//
// The f32 linear_scan kernels take chunks as if the device held twice the
// threads it does (linearF32Oversubscribe): at the large shape, 1024 lanes,
// 16 chunks rather than 8, so that the blocks fill the device about twice
// over. DESIGN.md records the measurements.
func elementwiseChunks(op scans.Op, bwd bool, T, lanes, esize, ch int, occ occupancy) int {
	// mingru_scan's f32 forward runs in linear_scan's form (kernels/
	// mingru_scan.cu), so it takes linear_scan's rule.
	linear := op == scans.OpLinearScan || op == scans.OpMingruScan && !bwd && esize == 4
	if linear && esize == 4 {
		occ.threads *= linearF32Oversubscribe
	}
	c := chunkCount(T, minChunk, lanes, tile, occ, nil)
	if logScan(op) && !bwd && !linear {
		if esize == 2 {
			// The 16-bit forwards hold two segments of ch channels: the
			// current one and the next, loaded ahead.
			c = logFwdChunks(c, lanes, esize*ch*2)
			c = min(c, logFwd16MaxThreads(ch)/tile)
		} else {
			c = logFwdChunks(c, lanes, esize)
		}
	}
	return c
}

// linearF32Oversubscribe is how many times over the f32 linear_scan
// kernels' chunks may fill the threads the device keeps in flight
// (elementwiseChunks).
const linearF32Oversubscribe = 2

// linearPairs reports whether the 16-bit linear_scan forward at b x n
// channels over T steps runs with two channels a thread (elementwisePairs
// allows it): where the two-channel kernel's lanes, half as many, take
// enough chunks that the device holds as many threads as with one channel a
// thread. Where the chunk count is capped (by maxChunks, or by T), two
// channels a thread halve the threads, which the few lanes of a small shape
// cannot spare. DESIGN.md records the measurements.
func linearPairs(b, T, n int, occ occupancy) bool {
	one := b * ((n + tile - 1) / tile)
	two := b * ((n + 2*tile - 1) / (2 * tile))
	c1 := elementwiseChunksOf(scans.OpLinearScan, false, T, one, 2, 1, occ)
	c2 := elementwiseChunksOf(scans.OpLinearScan, false, T, two, 2, 2, occ)
	return two*c2 >= one*c1
}

// logPairsMaxChunks is the most chunks the one-channel 16-bit
// parallel_scan_log forward may take where its two-channel kernel runs
// instead (logPairs).
const logPairsMaxChunks = 4

// logPairs reports whether the 16-bit parallel_scan_log forward at b x n
// channels over T steps runs with two channels a thread (elementwisePairs
// allows it): where the one-channel kernel would take at most
// logPairsMaxChunks chunks, that is where the lanes themselves nearly fill
// the device. DESIGN.md records the measurements.
func logPairs(op scans.Op, b, T, n int, occ occupancy) bool {
	lanes := b * ((n + tile - 1) / tile)
	return elementwiseChunksOf(op, false, T, lanes, 2, 1, occ) <= logPairsMaxChunks
}

// logScan reports whether op runs on the log-space scan's kernels
// (kernels/logscan.cuh): parallel_scan_log, and mingru_scan, which forms
// its log coefficients and values from its gates as it loads them (but
// for its f32 forward, which runs in linear form: kernels/mingru_scan.cu).
func logScan(op scans.Op) bool {
	return op == scans.OpParallelScanLog || op == scans.OpMingruScan
}

// elementwiseChunksOf is the rule planFor applies: elementwiseChunks, or
// the chunk count a layout experiment imposes.
func elementwiseChunksOf(op scans.Op, bwd bool, T, lanes, esize, ch int, occ occupancy) int {
	if occ.layout != nil && occ.layout.elementwiseChunks != nil {
		return occ.layout.elementwiseChunks(op, bwd, T, lanes, esize, ch, occ)
	}
	return elementwiseChunks(op, bwd, T, lanes, esize, ch, occ)
}

// logFwdChunks lowers the chunk count c of the parallel_scan_log forward
// over lanes lanes of threads that hold esize bytes a step and input while
// half as many chunks still keep logFwdInFlight bytes of inputs loaded
// ahead (every thread holds segLogFwd steps of two inputs). Its chunks meet
// in a fold that costs each thread an exponential and a logarithm per chunk
// and segment, so where the lanes fill the device, fewer chunks are
// cheaper. Few lanes (lab, long-T) keep their chunks. DESIGN.md records the
// measurements.
func logFwdChunks(c, lanes, esize int) int {
	for c > 1 && int64(lanes)*tile*int64(c/2)*segLogFwd*2*int64(esize) >= logFwdInFlight {
		c /= 2
	}
	return c
}

// segLogFwd mirrors kernels/elementwise.cuh's SEG_LOG_FWD, the steps a
// thread of the parallel_scan_log forward holds; logFwdInFlight is the
// bytes its loads ahead should reach (about what an H200 needs in flight
// to run at its copy bandwidth).
const (
	segLogFwd      = 16
	logFwdInFlight = 8 << 20
)

// logFwd16MaxThreads mirrors kernels/parallel_scan_log.cu's
// LOG_FWD16_MAX_THREADS and LOG_FWD16_PAIRS_MAX_THREADS, the
// __launch_bounds__ of the 16-bit forwards with ch channels a thread.
func logFwd16MaxThreads(ch int) int {
	if ch == 2 {
		return logFwd16PairsMax
	}
	return logFwd16Max
}

const (
	logFwd16Max      = 512
	logFwd16PairsMax = 256
)

// matrixScanLayout is the tile W and chunk count C of the matrix_scan
// kernels for b x n blocks over t steps, backward or not, in element type
// dt. W is affineTile's, but at least msMinTile (where n has that many
// blocks): a warp's loads of one step then fill whole 32-byte sectors (4
// blocks of A are 64 bytes, of b 32). DESIGN.md records the measurements.
func matrixScanLayout(b, t, n int, dt scans.DType, bwd bool, occ occupancy) (w, c int) {
	w = affineTile(b, n, occ)
	for w < msMinTile && w < n {
		w *= 2
	}
	lanes := b * ((n + w - 1) / w)
	if !bwd {
		occ = occ.atRegisters(msFwdRegisters)
	}
	c = chunkCount(t, msSeg, lanes, w, occ, func(c int) bool {
		return matrixScanShared(w, c) <= maxShared && (!bwd || w*c <= msMaxThreadsBwd(dt))
	})
	return w, c
}

// msSeg mirrors kernels/matrix_scan.cu's MS_SEG, the steps of a chunk a
// thread holds in registers (the 16-bit forwards hold half as many
// again); msMinTile is the narrowest tile of the matrix_scan kernels;
// msFwdRegisters is what the forwards take a thread (the 64 that their
// __launch_bounds__ of 1024 threads allow; kernels/ptxas-sm90.txt).
const (
	msSeg          = 8
	msMinTile      = 4
	msFwdRegisters = 64
)

// matrixScanLayoutOf is the layout planFor applies: matrixScanLayout, or
// the one a layout experiment imposes.
func matrixScanLayoutOf(b, t, n int, dt scans.DType, bwd bool, occ occupancy) (w, c int) {
	if occ.layout != nil && occ.layout.matrixScanLayout != nil {
		return occ.layout.matrixScanLayout(b, t, n, dt, bwd, occ)
	}
	return matrixScanLayout(b, t, n, dt, bwd, occ)
}

// matrixScanShared is the dynamic shared memory in bytes of the
// matrix_scan kernels with c chunks and tiles of w lanes: the chunks'
// aggregates (a 2x2 map and a 2-vector), 6 * c * w floats when c > 1.
func matrixScanShared(w, c int) int {
	if c == 1 {
		return 0
	}
	return 4 * 6 * c * w
}

// affineRows reports whether matrix_affine_scan with v > 1 (v <= 8 for
// the backward) over lanes lanes (b*n) of k x k transitions uses the row layout
// (one thread per row of H, T walked in one piece, every input read once)
// rather than chunking T in the column layout (each chunk's inputs read
// twice): when the lanes' k threads each, with the next steps' loads in
// flight, fill a sixteenth of the device's threads. It does whenever the
// column layout would not chunk either.
func affineRows(lanes, k int, occ occupancy) bool {
	return int64(lanes)*int64(k)*16 >= int64(occ.threads)
}

// affineRowShared is the dynamic shared memory in bytes of the row
// layout with r lanes per block (r*k threads) and elements of esize
// bytes: two buffers per lane of the rows the threads exchange each step,
// H_{t-1} (k*v floats) forward, G_t and H_{t-1} (2*k*v) and A_t (k*k)
// backward; then the ring of the next affineRingSteps steps' input rows
// (A_t and X_t forward; A_t, dH_t and H_{t-1} backward), each input's
// rows of a step padded to 16 bytes (kernels/affine.cuh, RowRing).
func affineRowShared(k, v, r, esize int, bwd bool) int {
	n, rows := k*v, k+v
	if bwd {
		n, rows = 2*k*v+k*k, k+2*v
	}
	threads := r * k
	slot := pad16(threads*k*esize) + pad16(threads*v*esize)
	if bwd {
		slot += pad16(threads * v * esize)
	}
	return pad16(4*2*r*n) + affineRingSteps(rows, esize)*slot
}

// affineRingBytes mirrors kernels/affine.cuh's AFFINE_RING_BYTES: the
// bytes of a thread's rows that the row layout's ring holds at most.
const affineRingBytes = 512

// affineRingSteps mirrors affine_ring_steps: the ring's steps for rows of
// w elements a step of esize bytes each, the largest power of two up to
// 16 within affineRingBytes, at least 2.
func affineRingSteps(w, esize int) int {
	u := 16
	for u > 2 && u*w*esize > affineRingBytes {
		u /= 2
	}
	return u
}

// affineRowsFit reports whether the row layout can serve k x k
// transitions with v > 1 columns in elements of esize bytes (v <= 8 for
// the backward; AFFINE_ROWS and AFFINE_ROWS_BWD): its ring copies rows of
// at least 4 bytes.
func affineRowsFit(k, v, esize int, bwd bool) bool {
	return v > 1 && k*esize >= 4 && (!bwd || v <= 8)
}

// pad16 rounds n bytes up to a multiple of 16, as the kernels' pad16.
func pad16(n int) int { return (n + 15) / 16 * 16 }

// affineRowLanes is the number R of lanes that one block of the row
// layout serves (R*k threads): the largest power of two with R*k <= 32
// that divides lanes, so that every thread of the grid has a lane.
func affineRowLanes(lanes, k int) int {
	r := max(32/k, 1)
	for r > 1 && lanes%r != 0 {
		r /= 2
	}
	return r
}

// msMaxThreadsBwd mirrors kernels/matrix_scan.cu's MS_MAX_THREADS_BWD,
// the backward's __launch_bounds__ (the forward's is chunkCount's 1024).
func msMaxThreadsBwd(dt scans.DType) int {
	if dt == scans.F32 {
		return 512
	}
	return 1024
}

// affineMaxThreads mirrors kernels/affine.cuh's AFFINE_MAX_THREADS, the
// kernels' __launch_bounds__: the largest block the host may launch.
func affineMaxThreads(k, v int) int {
	switch {
	case v > 1:
		return v * 32
	case k <= 2:
		return 1024
	case k == 4:
		return 512
	case k == 8:
		return 128
	}
	return 32
}

// affineTile is the number W of contiguous lanes (blocks n of one batch
// row) that one thread block of the affine kernels (when v = 1) and of the
// Givens kernels serves, one thread per lane, so that a warp's loads of A_t and X_t are contiguous.
// W is 32, or the smallest power of two >= n when n is smaller, halved
// (down to 1) while the grid, b * ceil(n/W) blocks, would give fewer than
// two blocks to each SM: few lanes then spread over the whole GPU, their
// T cut into more chunks instead.
func affineTile(b, n int, occ occupancy) int {
	sms := max(occ.sms, 1)
	w := tile
	for w > 1 && w/2 >= n {
		w /= 2
	}
	for w > 1 && b*((n+w-1)/w) < 2*sms {
		w /= 2
	}
	return w
}
