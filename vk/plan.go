package vk

import (
	"fmt"

	"github.com/mingru/scans"
)

// The specialization constants of every module, by constant ID.
const (
	specWG       = iota // workgroup size (local_size_x_id)
	specK               // block rows k
	specV               // block columns v
	specChunks          // elementwise kernels: chunks of T per channel
	specTile            // elementwise kernels: channels per workgroup
	specPhase           // block backward: 0 scan, 1 outer products
	specWriteG32        // block backward: also write G in f32
	specAligned         // tiled 16-bit kernels: every word access is whole
	specRing            // row and column layouts of matrix_affine_scan: steps of loads in flight
	specDepth           // subgroup Givens kernels: steps of loads in flight
	specHWF16           // f16 kernels: the exact hardware conversions (hwWiden, hwNarrow)
	specPairs           // subgroup Givens backward: lanes sharing angle words pair in a subgroup
	specAngles          // Givens kernels: the reduction their angles need (angles.Range)
	specCols            // column layout of matrix_affine_scan: columns an invocation (blockCols)
	numSpec
)

// The bits of specHWF16 (constant 10 of shaders/common.glsl).
const (
	hwWiden  = 1 << 0 // unpackHalf2x16 widens every f16 value exactly
	hwNarrow = 1 << 1 // packHalf2x16 rounds every f32 value to nearest even
)

// maxBindings is the number of storage-buffer bindings of the one
// descriptor-set layout every module shares.
const maxBindings = 12

// operand is one binding of a kernel: a tensor or an internal buffer, with
// the number of elements per batch entry (its stride over B) so that it can
// be bound one slice of the batch at a time.
type operand struct {
	buf    *buffer
	stride int64 // elements per batch entry
	esize  int64 // bytes per element
	out    bool  // written by the kernel (poisoned by the test knob)
	poison uint32
}

// kernel is one dispatch of a module over the whole batch; the device
// splits it into slices of the batch when a binding is too large.
type kernel struct {
	module string
	spec   [numSpec]uint32
	flags  uint32 // bit 0: optional initial state bound
	T, N   uint32
	binds  [maxBindings]operand
	// Workgroups for a slice of bs batch entries: bs*groupsPerBatch when
	// groupsPerBatch > 0, else ceil(bs*invPerBatch / WG).
	groupsPerBatch int64
	invPerBatch    int64
	// wordAligned: a tiled 16-bit kernel whose element indices are all
	// even once every bound operand starts at an even element (its rows
	// have an even number of channels, or it is matrix_scan). The device
	// then sets specAligned for each slice whose operands do, which
	// compiles the kernel without the branches for a misaligned word
	// (shaders/common.glsl).
	wordAligned bool
}

func (k *kernel) groups(bs int64) int64 {
	if k.groupsPerBatch > 0 {
		return bs * k.groupsPerBatch
	}
	wg := int64(k.spec[specWG])
	return (bs*k.invPerBatch + wg - 1) / wg
}

// The elementwise layout (linear_scan, parallel_scan_log). A lane is a
// batch entry and a tile of TILE contiguous units (a unit is a channel, or
// two adjacent channels of a 16-bit type, or a 2x2 block of matrix_scan;
// see elementwiseUnits). TILE starts at the smallest power of two >= the
// units of a row, at most 32, and halves, down to minTile, while there are
// fewer than minLanes lanes: with few lanes (long T, small B*D) the
// workgroups would otherwise sit on a few of the device's multiprocessors
// (132 on an H200) with a deep serial chain of segments each, and a
// narrower tile gives more workgroups and room for more chunks per
// workgroup, so fewer segments. (Eight units are still a 32-byte sector per
// row and step.) The workgroup walks T in segments of
// CHUNKS*stepsPerInvocation steps, each invocation holding its
// stepsPerInvocation steps in registers so that every input is read once
// (see shaders/chunks.glsl). The chunk count doubles, starting at 1, while
// all of these hold:
//   - a segment is still shorter than T: chunks*stepsPerInvocation < T;
//   - the device is not yet full: lanes*TILE*chunks*2*per <=
//     targetInvocations (about what a large GPU keeps resident at the
//     register use of these kernels, so that the workgroups run in one
//     wave), per being the channels an invocation carries (unitChannels: 2
//     in the 16-bit linear_scan and parallel_scan_log kernels).
//   - the workgroup TILE*chunks*2 stays within maxElementwiseWG (maxLogWG
//     for parallel_scan_log and the 16-bit linear_scan; see
//     tiledWorkgroupCap) and the device's limit.
//
// At B=16 T=1024 D=64 (f32 linear_scan) the tile is 8 channels and 32
// chunks of 16 steps: 128 workgroups of 256 invocations, T in 2 segments (a
// tile of 32 would give 32 workgroups and 8 segments). DESIGN.md records
// the measurements.
const (
	stepsPerInvocation = 16 // L in shaders/chunks.glsl
	targetInvocations  = 1 << 17
	minLanes           = 128
	minTile            = 8
	maxElementwiseWG   = 256
	maxLogWG           = 512
	blockWG            = 64
	givensWG           = 32
)

// minChunkSteps is the shortest chunk of the block kernels, and
// blockTargetInvocations their device-filling bound. DESIGN.md records the
// measurements.
const (
	minChunkSteps          = 16
	blockTargetInvocations = 1 << 18
)

func elementwiseLayout(B, T, D int, maxWG int) (tile, chunks int) {
	return tiledLayout(B, T, D, tiledWorkgroupCap(scans.OpLinearScan, scans.F32, maxWG), stepsPerInvocation, 1)
}

// tiledWorkgroupCap is the largest workgroup the tiled kernels of op may
// take in element type dt on a device whose limit is maxWG: maxLogWG for
// parallel_scan_log and for the 16-bit linear_scan, else maxElementwiseWG.
// DESIGN.md records the measurements.
func tiledWorkgroupCap(op scans.Op, dt scans.DType, maxWG int) int {
	limit := maxElementwiseWG
	if op == scans.OpParallelScanLog || (op == scans.OpLinearScan && dt.Size() == 2) {
		limit = maxLogWG
	}
	return min(limit, maxWG)
}

// matrixScanSteps is the steps per invocation of the matrix_scan kernels,
// which lay out 2x2 blocks as the elementwise kernels lay out channels
// (a tile of contiguous blocks, segments of T held in registers) with the
// same rule, 8 steps of six inputs per invocation; matrixScanSteps16 is
// that of the 16-bit kernels, which hold 16 steps in the same registers
// (three words of two elements per step).
const (
	matrixScanSteps   = 8
	matrixScanSteps16 = 16
)

// elementwiseUnits is the number of units of a row of n channels (or
// blocks) and the steps per invocation of the tiled kernels: an invocation
// of linear_scan or parallel_scan_log serves one f32 channel or two
// adjacent 16-bit channels (one 32-bit word), an invocation of matrix_scan
// one 2x2 block.
func elementwiseUnits(op scans.Op, dt scans.DType, n int) (units, steps int) {
	if op == scans.OpMatrixScan {
		if dt.Size() == 2 {
			return n, matrixScanSteps16
		}
		return n, matrixScanSteps
	}
	if dt.Size() == 2 {
		return (n + 1) / 2, stepsPerInvocation
	}
	return n, stepsPerInvocation
}

// unitChannels is the number of channels an invocation of the tiled
// kernels of op carries per step in element type dt, as tiledLayout
// counts them against targetInvocations: two for the 16-bit linear_scan
// and parallel_scan_log kernels (one word), else one (a matrix_scan block
// counts as one).
func unitChannels(op scans.Op, dt scans.DType) int {
	if op != scans.OpMatrixScan && dt.Size() == 2 {
		return 2
	}
	return 1
}

// wholeWords reports whether every word a tiled kernel of op loads or
// stores for rows of n channels (or blocks) is whole once each operand
// starts at an even element: a 16-bit type and an even n (an invocation's
// two channels then share one word, and rows start on word boundaries),
// or matrix_scan, whose blocks and vectors have 4 and 2 elements.
func wholeWords(op scans.Op, dt scans.DType, n int) bool {
	return dt.Size() == 2 && (op == scans.OpMatrixScan || n%2 == 0)
}

// tiledLayout is the rule above for steps steps per invocation and
// workgroups of at most maxWG invocations (tiledWorkgroupCap).
func tiledLayout(B, T, D int, maxWG int, steps, per int) (tile, chunks int) {
	tile = 1
	for tile < D && tile < 32 {
		tile *= 2
	}
	lanes := int64(B) * int64((D+tile-1)/tile)
	for tile > minTile && lanes < minLanes {
		tile /= 2
		lanes = int64(B) * int64((D+tile-1)/tile)
	}
	chunks = 1
	for tile*chunks*2 <= maxWG &&
		int64(chunks)*int64(steps) < int64(T) &&
		lanes*int64(tile*chunks*2*per) <= targetInvocations {
		chunks *= 2
	}
	return tile, chunks
}

// The block layout (matrix_affine_scan's column layout, see
// shaders/affine.glsl). An invocation holds cols adjacent columns of a
// lane's state (blockCols), so a lane and chunk take VI = V/cols
// invocations. Without chunks a workgroup of blockWG invocations holds
// blockWG/VI lanes. Chunking T costs pass 1 about 1 + ceil(k/v) plain
// steps (the kxk product of the chunk's transitions is built column by
// column), so only shapes with ceil(k/v) <= maxBlockCost are chunked. The
// chunk count doubles from 1 while each chunk keeps at least
// minChunkSteps steps, the device is not yet full (lanes*VI*chunks <
// blockTargetInvocations), the workgroup (LPW*VI*chunks, LPW = max(1,
// 32/(VI*chunks)) lanes) stays within maxElementwiseWG and the device's
// limit, and the aggregates fit in shared memory.
const maxBlockCost = 4

// blockCols is the number of columns an invocation of the column layout
// holds for element type dt and v columns: two for 16-bit types with v
// even, else one. A pair's elements of each row of X and H (and of dH, dX
// and H0) are then one 32-bit word, loaded and stored whole, where one
// column an invocation stores its 16-bit half of a word shared with its
// neighbour with two atomics; and each row of A_t read serves both columns.
// DESIGN.md records the measurements.
func blockCols(dt scans.DType, V int) int {
	if dt.Size() == 2 && V%2 == 0 {
		return 2
	}
	return 1
}

// colRing is the number of steps whose loads the column layout keeps in
// flight (RING in shaders/affine.glsl; 0 loads each step where it is
// computed): 2 for f32 at k = 8, else 0. DESIGN.md records the
// measurements.
func colRing(K, esize int) int {
	if esize == 4 && K == 8 {
		return 2
	}
	return 0
}

func blockLayout(B, T, N, K, V, cols, maxWG, maxShared int) (wg, chunks int) {
	if (K+V-1)/V > maxBlockCost {
		return blockWG, 1
	}
	lanes := int64(B) * int64(N)
	limit := maxElementwiseWG
	if maxWG < limit {
		limit = maxWG
	}
	chunks = 1
	for {
		c := 2 * chunks
		w, sh := blockChunkLayout(K, V, cols, c)
		if w > limit || sh > maxShared || int64(T) < int64(2*c*minChunkSteps) ||
			lanes*int64(V/cols*chunks) >= blockTargetInvocations {
			break
		}
		chunks = c
	}
	wg, _ = blockChunkLayout(K, V, cols, chunks)
	return wg, chunks
}

// blockChunkLayout is the workgroup and the shared memory in bytes (the
// shader's sh_P and sh_S) of the block layout with chunks chunks of T,
// kxv blocks and cols columns an invocation: blockWG invocations
// unchunked, else LPW = max(1, 32/(VI*chunks)) lanes of VI*chunks
// invocations, VI = V/cols.
func blockChunkLayout(K, V, cols, chunks int) (wg, shared int) {
	if chunks <= 1 {
		return blockWG, 4 * 2 // the arrays' one word each
	}
	vi := V / cols
	wg = max(1, 32/(vi*chunks)) * vi * chunks
	return wg, 4 * (wg/vi*K*K + 1 + wg*cols*K + 1)
}

// The row layout of matrix_affine_scan (shaders/affine_rows.glsl): one
// invocation per row of a lane's kxv state, R = wg/k lanes per workgroup
// (rowWorkgroup), T walked in one piece with the loads of the next ring
// steps in flight (rowRing). Every input element is read once, in
// contiguous rows, where the column layout reads A_t in each of its v
// invocations and, when it chunks T, reads A and X twice.
//
// blockRows is the choice between the two (k >= 2 and v >= 2 only: a
// one-column state is the column layout's single invocation per lane, and k
// = 1 has nothing to exchange). The row layout has no chunks, so each lane
// is one chain of T dependent steps, each a barrier and a kxv product (a
// few hundred cycles); the column layout cuts that chain into chunks at the
// price of the extra reads. So the row layout is taken
//   - whenever the column layout would not chunk either (short T, or lanes
//     enough to fill the device, or a pass 1 too costly), and
//   - whenever there are at least rowsMinInvocations row invocations
//     (b*n*k): the loads in flight then keep the memory busy, and a chain of
//     T steps at a few hundred cycles each stays within what the bytes take
//     anyway.
//
// At the benchmark shapes (k = v = 8): large (4096 lanes, 32768
// invocations) and lab (1024 lanes, 8192 invocations, T = 64) take the row
// layout; long-T (128 lanes, 1024 invocations, T = 1024) keeps the column
// layout with 32 chunks of 32 steps, whose chain is 30 times shorter.
//
// A workgroup holds rowsWGFwd invocations in the f32 forward (rowsWGFwd/k
// lanes) and rowsWG in the 16-bit forwards and every backward, or rowsWG
// wherever the device cannot hold the larger (rowWorkgroup). DESIGN.md
// records the measurements.
const (
	rowsWG             = 32
	rowsWGFwd          = 64
	rowsMinInvocations = 1 << 13
)

// rowWorkgroup is the workgroup size of the row layout in the given
// direction for elements of esize bytes (see rowsWGFwd).
func rowWorkgroup(V, esize int, bwd bool, maxWG, maxShared int) int {
	if !bwd && esize == 4 && rowsWGFwd <= maxWG && rowsShared(rowsWGFwd, 0, V, false) <= maxShared {
		return rowsWGFwd
	}
	return rowsWG
}

// rowsShared is the shared memory, in bytes, of the row kernels in
// workgroups of wg invocations: two buffers of the workgroup's H_{t-1}
// forward; of G_t, H_{t-1} and A_t backward, A_t's K planes padded to
// wg + 1 words (shaders/affine_rows.glsl). The f32 backward, which does
// not publish H_{t-1}, uses less; the bound is the 16-bit kernels'.
func rowsShared(wg, K, V int, bwd bool) int {
	if !bwd {
		return 4 * 2 * wg * V
	}
	return 4 * 2 * (2*wg*V + K*(wg+1))
}

func blockRows(B, T, N, K, V, cols, maxWG, maxShared int) bool {
	if K < 2 || V < 2 || K > rowsWG || rowsShared(rowsWG, K, V, true) > maxShared || rowsWG > maxWG {
		return false
	}
	if int64(B)*int64(N)*int64(K) >= rowsMinInvocations {
		return true
	}
	_, chunks := blockLayout(B, T, N, K, V, cols, maxWG, maxShared)
	return chunks == 1
}

// rowRing is the number of steps whose loads the row kernels keep in
// flight: the largest power of two up to 8 whose ring (steps times the
// 32-bit words of an invocation's rows per step: k + v forward, k + 2v
// backward, half that for 16-bit types) stays within 128 words forward and
// 96 backward, and whose unrolled steps (k*v multiply-adds each forward,
// 2*k*v backward) stay within 512 multiply-adds, which bounds the code
// size (and the time a driver takes to compile it). At k = v = 8, f32: 8
// steps forward (128 registers, 512 bytes in flight per invocation), 4
// backward (96 registers, 384 bytes); at k = v = 16 2 and 1, with 256 and
// 192 bytes per step.
func rowRing(K, V, esize int, bwd bool) int {
	words, budget, fma := K+V, 128, K*V
	if bwd {
		words, budget, fma = K+2*V, 96, 2*K*V
	}
	words = words * esize / 4
	u := 8
	for u > 1 && (u*words > budget || u*fma > 512) {
		u /= 2
	}
	return u
}

// The Givens layout (givens_scan, see shaders/givens.glsl). A lane is a
// block (b, n), walked by one invocation per chunk of T. Chunking costs
// pass 1 about k + 1 plain steps of arithmetic (the kxk product of the
// chunk's transitions is built column by column in registers) plus a
// second read of the inputs, so only k <= maxGivensChunkedK is chunked,
// and only while lanes are few. The chunk count doubles from 1 while each
// chunk keeps at least givensMinChunk steps, the device is not yet full
// (lanes*chunks < givensTargetInvocations), and the workgroup (LPW*chunks,
// LPW = max(1, givensWG/chunks) lanes) stays within maxElementwiseWG and
// the device's limit with its aggregates (about WG*(k*k+k+9) words) in
// shared memory. Unchunked, a workgroup holds givensWG lanes: small workgroups
// spread the few invocations over more compute units.
const (
	maxGivensChunkedK       = 8
	givensMinChunk          = 16
	givensTargetInvocations = 1 << 12
)

func givensLayout(B, T, N, K, maxWG, maxShared int) (wg, chunks int) {
	if K > maxGivensChunkedK {
		return givensWG, 1
	}
	lanes := int64(B) * int64(N)
	limit := maxElementwiseWG
	if maxWG < limit {
		limit = maxWG
	}
	layout := func(c int) (wg, shared int) {
		lpw := givensWG / c
		if lpw < 1 {
			lpw = 1
		}
		wg = lpw * c
		return wg, 4 * (wg*(K*K+4) + 1 + wg*(K+4) + 1 + wg + 1) // the shader's sh_P, sh_S and sh_F
	}
	chunks = 1
	for {
		c := 2 * chunks
		w, sh := layout(c)
		if w > limit || sh > maxShared || int64(T) < int64(c*givensMinChunk) ||
			lanes*int64(chunks) >= givensTargetInvocations {
			break
		}
		chunks = c
	}
	wg, _ = layout(chunks)
	return wg, chunks
}

// The subgroup Givens layout (givens_scan_sg_*, see
// shaders/givens_sg.glsl), used where the device's subgroups have shuffles
// in compute shaders and hold at least F = k/2 invocations (width, the
// device's smallest subgroup size, >= F); otherwise givensLayout's kernels
// run. A lane is served by F invocations of one subgroup (one per pair of
// channels), per chunk of T. The workgroup is givensSGWG invocations, or
// the reported subgroup size (align) if larger, or F*chunks if larger still
// (LPW = WG/(F*chunks) lanes), so it is always a whole number of subgroups.
//
// A chunked step costs about 5 unchunked ones on an H200 (pass 1 carries
// the chunk's k x k transition product, then the chunk is read again), so T
// is cut only where the B*N*F invocations are few (givensSGFewInvocations)
// and then into as many chunks as fit: up to givensSGMaxChunks, each of at
// least givensSGMinChunk steps, the workgroup within maxElementwiseWG and
// the device's limits, its aggregates (about (WG/F)*(k*k+k+8) words) in
// shared memory. Fewer than givensSGMinChunks chunks do not pay, and the
// lane runs unchunked. The ring of loads in flight is givensSGDepth steps
// deep where the invocations fill the device (givensSGDeepRing or more, the
// bandwidth-bound regime), givensSGShallowDepth where they are fewer.
// Measured on an H200 (vk/sweep_test.go, the givens set), f32, k = 8:
// DESIGN.md records the measurements.
const (
	givensSGDepth          = 16
	givensSGDepthF16       = 24
	givensSGDepthBF16      = 20
	givensSGShallowDepth   = 4
	givensSGDepthCPU       = 4 // a CPU device compiles the unrolled ring much faster
	givensSGWG             = 64
	givensSGMinChunk       = 16
	givensSGMinChunks      = 16
	givensSGMaxChunks      = 64
	givensSGFewInvocations = 1 << 10
	givensSGDeepRing       = 1 << 13
)

// givensSGForwardRing is the ring depth of the subgroup Givens forward in
// element type dt, given the layout's depth: where that is the deep ring,
// the 16-bit forwards take deeper rings (givensSGDepthF16 steps for f16,
// givensSGDepthBF16 for bf16), since a step of their inputs is four
// registers, not six. The backwards, which hold more per step, keep the
// layout's depth. DESIGN.md records the measurements.
func givensSGForwardRing(depth int, dt scans.DType) int {
	if depth != givensSGDepth {
		return depth
	}
	switch dt {
	case scans.F16:
		return givensSGDepthF16
	case scans.BF16:
		return givensSGDepthBF16
	}
	return depth
}

func givensSGLayout(B, T, N, K, width, align, maxWG, maxShared int) (wg, chunks, depth int, ok bool) {
	f := K / 2
	if K < 2 || K%2 != 0 || width < f {
		return 0, 0, 0, false
	}
	base := givensSGWG
	if align > base {
		base = align
	}
	limit := maxElementwiseWG
	if maxWG < limit {
		limit = maxWG
	}
	if base > maxWG {
		return 0, 0, 0, false
	}
	inv := int64(B) * int64(N) * int64(f)
	layout := func(c int) (wg, shared int) {
		wg = base
		if f*c > wg {
			wg = f * c
		}
		return wg, givensSGShared(K, wg, c)
	}
	chunks = 1
	if inv <= givensSGFewInvocations {
		for chunks < givensSGMaxChunks {
			c := 2 * chunks
			w, sh := layout(c)
			if w > limit || sh > maxShared || int64(T) < int64(c*givensSGMinChunk) {
				break
			}
			chunks = c
		}
		if chunks < givensSGMinChunks {
			chunks = 1
		}
	}
	depth = givensSGShallowDepth
	if inv >= givensSGDeepRing {
		depth = givensSGDepth
	}
	wg, _ = layout(chunks)
	return wg, chunks, depth, true
}

// givensSGChunksWG is the workgroup of the subgroup Givens kernels when a
// chunk count is imposed (the backend's test and sweep knob) on a layout
// whose workgroup is wg: whole lanes times the chunks (F = K/2 invocations
// each) in whole subgroups of the device's largest size (align), and no
// smaller than one such unit or than wg rounded down to one. For the
// layout's own chunk counts, powers of two, this is the layout's
// workgroup or F*chunks.
func givensSGChunksWG(wg, K, chunks, align int) int {
	unit := K / 2 * chunks
	if align > 1 {
		a, b := unit, align
		for b != 0 {
			a, b = b, a%b
		}
		unit = unit / a * align
	}
	return max(unit, wg/unit*unit)
}

// givensSGShared is the shared memory, in bytes, of a chunked subgroup
// Givens kernel (givens_scan_sgc_*) for k = K in workgroups of wg
// invocations and the given chunks: the shaders' sh_P, sh_S and sh_ok
// (givens_sg.glsl). The unchunked kernels have none.
func givensSGShared(K, wg, chunks int) int {
	gpw := wg / (K / 2)
	return 4 * (gpw*(K*K+4) + gpw*(K+4) + gpw/chunks)
}

func moduleName(op scans.Op, dir scans.Direction, dt scans.DType) string {
	d := "fwd"
	if dir == scans.Backward {
		d = "bwd"
	}
	return fmt.Sprintf("%s_%s_%s", op, d, dt)
}

// poisonPattern is a 32-bit word of NaNs of the type.
func poisonPattern(dt scans.DType) uint32 {
	switch dt {
	case scans.F16:
		return 0x7e007e00
	case scans.BF16:
		return 0x7fc07fc0
	}
	return 0x7fc00000
}

// supports is the kernel envelope (see Backend.Supports): the contract's
// (scans.CheckEnvelope) and dimensions that fit the kernels' 32-bit
// indices.
func supports(op scans.Op, d scans.Dims, dt scans.DType) error {
	if err := scans.CheckEnvelope("vulkan", op, d, dt); err != nil {
		return err
	}
	const maxU32 = 1<<32 - 1
	if int64(d.T)+1 > maxU32 || int64(d.N) > maxU32 || int64(d.B) > maxU32 {
		return &scans.ScanFallback{Backend: "vulkan", Op: op, Reason: fmt.Sprintf("a dimension of %v does not fit in 32 bits", d)}
	}
	return nil
}

// evenSlices is the slice size for B batch entries of which at most bs fit
// at once: the fewest slices, of sizes as equal as they can be. A short
// last slice would run alone, a few lanes walking all of T while the rest
// of the device idles (32 entries that fit 31 at a time go as 16 and 16).
func evenSlices(B, bs int64) int64 {
	n := (B + bs - 1) / bs
	return (B + n - 1) / n
}
