package vk

import (
	"github.com/mingru/scans"
)

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
// Measured on an H200 (scanbench --sweep givens), f32, k = 8:
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
