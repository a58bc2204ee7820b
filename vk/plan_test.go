package vk

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mingru/scans"
)

func TestElementwiseLayout(t *testing.T) {
	for _, c := range []struct {
		B, T, D, maxWG int
		tile, chunks   int
	}{
		{1, 1, 1, 1024, 1, 1},
		{1, 16, 1, 1024, 1, 1},        // one segment of 16 steps
		{1, 17, 1, 1024, 1, 2},        //
		{1, 1000, 1, 1024, 1, 64},     // 64*16 = 1024 >= T
		{3, 1000, 67, 1024, 8, 32},    // 9 lanes: tile down to 8, workgroup cap 256/8
		{3, 63, 67, 1024, 8, 4},       // one segment of 4*16 steps
		{128, 64, 64, 1024, 32, 4},    // lab: 256 lanes, one segment
		{16, 1024, 64, 1024, 8, 32},   // long-T: 128 lanes of 8, 2 segments
		{16, 1024, 32, 1024, 8, 32},   // long-T 16-bit: 32 units (64 channels)
		{64, 1024, 64, 1024, 32, 8},   // 128 lanes of 32 already
		{32, 4096, 1024, 1024, 32, 4}, // large: 1024 lanes*32*4 = 2^17
		{32, 4096, 512, 1024, 32, 8},  // large 16-bit: 512 units, 512 lanes*32*8 = 2^17
		{4096, 4096, 1024, 1024, 32, 1},
		{3, 1000, 67, 64, 8, 8},   // device workgroup limit
		{1, 1000, 5, 1024, 8, 32}, // workgroup 8*32 = 256
	} {
		tile, chunks := elementwiseLayout(c.B, c.T, c.D, c.maxWG)
		if tile != c.tile || chunks != c.chunks {
			t.Errorf("B=%d T=%d D=%d maxWG=%d: tile %d chunks %d, want %d %d", c.B, c.T, c.D, c.maxWG, tile, chunks, c.tile, c.chunks)
		}
		if tile*chunks > 256 || tile*chunks > c.maxWG {
			t.Errorf("workgroup %d too large", tile*chunks)
		}
	}
}

func TestMatrixScanLayout(t *testing.T) {
	for _, c := range []struct {
		B, T, N      int
		tile, chunks int
	}{
		{32, 4096, 512, 32, 8}, // large: 512 lanes*32*8 = 2^17
		{16, 1024, 32, 8, 32},  // long-T: 64 lanes of 8 blocks, 4 segments of 256 steps
		{128, 64, 32, 32, 8},   // lab: one segment
		{1, 8, 3, 4, 1},        // one segment of 8 steps
		{1, 9, 3, 4, 2},
	} {
		tile, chunks := tiledLayout(c.B, c.T, c.N, tiledWorkgroupCap(scans.OpMatrixScan, scans.F32, 1024), matrixScanSteps, 1)
		if tile != c.tile || chunks != c.chunks {
			t.Errorf("%+v: tile %d chunks %d", c, tile, chunks)
		}
	}
	// 16-bit: 16 steps per invocation in the same registers.
	if units, steps := elementwiseUnits(scans.OpMatrixScan, scans.BF16, 512); units != 512 || steps != 16 {
		t.Errorf("matrix_scan bf16: %d units, %d steps", units, steps)
	}
	if tile, chunks := tiledLayout(32, 4096, 512, tiledWorkgroupCap(scans.OpMatrixScan, scans.F32, 1024), matrixScanSteps16, 1); tile != 32 || chunks != 8 {
		t.Errorf("large matrix_scan 16-bit: tile %d chunks %d", tile, chunks)
	}
}

// TestElementwiseUnits: an invocation serves one f32 channel or a word of
// two 16-bit channels.
func TestWholeWords(t *testing.T) {
	for _, c := range []struct {
		op   scans.Op
		dt   scans.DType
		n    int
		want bool
	}{
		{scans.OpLinearScan, scans.F16, 64, true},
		{scans.OpLinearScan, scans.BF16, 67, false},
		{scans.OpParallelScanLog, scans.BF16, 2, true},
		{scans.OpParallelScanLog, scans.F16, 1, false},
		{scans.OpMatrixScan, scans.F16, 5, true},
		{scans.OpLinearScan, scans.F32, 64, false},
		{scans.OpMatrixScan, scans.F32, 4, false},
	} {
		if got := wholeWords(c.op, c.dt, c.n); got != c.want {
			t.Errorf("wholeWords(%v, %v, %d) = %v, want %v", c.op, c.dt, c.n, got, c.want)
		}
	}
}

func TestElementwiseUnits(t *testing.T) {
	for _, c := range []struct {
		op           scans.Op
		dt           scans.DType
		n            int
		units, steps int
	}{
		{scans.OpLinearScan, scans.F32, 67, 67, 16},
		{scans.OpLinearScan, scans.F16, 67, 34, 16},
		{scans.OpParallelScanLog, scans.BF16, 64, 32, 16},
		{scans.OpMatrixScan, scans.F32, 5, 5, 8},
		{scans.OpMatrixScan, scans.F16, 5, 5, 16},
	} {
		units, steps := elementwiseUnits(c.op, c.dt, c.n)
		if units != c.units || steps != c.steps {
			t.Errorf("%v %v n=%d: %d units %d steps, want %d %d", c.op, c.dt, c.n, units, steps, c.units, c.steps)
		}
	}
}

func TestBlockLayout(t *testing.T) {
	for _, c := range []struct {
		B, T, N, K, V, cols int
		wg, chunks          int
	}{
		{3, 1000, 5, 2, 1, 1, 32, 16},    // k=2 v=1: 2 lanes per workgroup
		{3, 63, 5, 2, 1, 1, 64, 1},       // too short to chunk
		{3, 64, 5, 2, 1, 1, 32, 2},       //
		{3, 1000, 5, 16, 1, 1, 64, 1},    // ceil(16/1) = 16: pass 1 too costly
		{3, 1000, 5, 16, 16, 1, 64, 4},   // shared memory: 8 chunks of a 16x16 P plus S would exceed 16 KiB
		{3, 1000, 5, 8, 8, 1, 128, 16},   //
		{32, 4096, 512, 2, 1, 1, 32, 16}, // k=2 v=1, 16384 lanes: 16 chunks reach 2^18 invocations
		{32, 4096, 128, 8, 8, 1, 64, 8},  // large matrix_affine_scan: 4096 lanes*8 columns*8 chunks = 2^18
		{32, 4096, 128, 8, 8, 2, 64, 16}, // two columns an invocation: 4096 lanes*4*16 = 2^18
		{16, 1024, 8, 8, 8, 1, 128, 16},  // long-T matrix_affine_scan: shared memory caps the chunks
		{16, 1024, 8, 8, 8, 2, 64, 16},   // the same, two columns an invocation
		{3, 1000, 5, 4, 2, 2, 32, 16},    // one invocation a lane and chunk; T caps the chunks
		{128, 64, 32, 2, 1, 1, 32, 2},    // k=2 v=1 at the lab shape
		{1 << 14, 1000, 16, 2, 1, 1, 64, 1},
	} {
		wg, chunks := blockLayout(c.B, c.T, c.N, c.K, c.V, c.cols, 1024, 16<<10)
		if wg != c.wg || chunks != c.chunks {
			t.Errorf("%+v: wg %d chunks %d", c, wg, chunks)
		}
		if chunks > 1 {
			vi := c.V / c.cols
			lpw := wg / (vi * chunks)
			if lpw < 1 || lpw*vi*chunks != wg {
				t.Errorf("%+v: workgroup %d is not whole lanes times chunks", c, wg)
			}
			if sh := 4 * (lpw*chunks*c.K*c.K + 1 + wg*c.cols*c.K + 1); sh > 16<<10 {
				t.Errorf("%+v: %d bytes of shared memory", c, sh)
			}
		}
	}
}

// TestBlockCols: two columns an invocation for 16-bit types with v even.
func TestBlockCols(t *testing.T) {
	for _, c := range []struct {
		dt   scans.DType
		v, n int
	}{
		{scans.F32, 8, 1}, {scans.F16, 8, 2}, {scans.BF16, 2, 2}, {scans.BF16, 1, 1}, {scans.F16, 3, 1},
	} {
		if got := blockCols(c.dt, c.v); got != c.n {
			t.Errorf("%s v=%d: %d columns, want %d", c.dt, c.v, got, c.n)
		}
	}
}

func TestSupportsEnvelope(t *testing.T) {
	d := func(K, V int) scans.Dims { return scans.Dims{B: 2, T: 5, N: 3, K: K, V: V} }
	var fb *scans.ScanFallback
	for _, k := range []int{1, 2, 4, 8, 16} {
		for _, v := range []int{1, 2, 4, 8, 16} {
			if err := supports(scans.OpMatrixAffineScan, d(k, v), scans.F16); err != nil {
				t.Errorf("affine k=%d v=%d: %v", k, v, err)
			}
		}
	}
	for _, kv := range [][2]int{{3, 1}, {1, 3}, {32, 1}, {0, 1}} {
		if err := supports(scans.OpMatrixAffineScan, d(kv[0], kv[1]), scans.F32); !errors.As(err, &fb) || fb.Backend != "vulkan" {
			t.Errorf("affine %v: %v, want ScanFallback", kv, err)
		}
	}
	for _, k := range []int{1, 3, 6, 32} {
		if err := supports(scans.OpGivensScan, d(k, 1), scans.F32); !errors.As(err, &fb) {
			t.Errorf("givens k=%d: %v, want ScanFallback", k, err)
		}
	}
	if err := supports(scans.OpMatrixScan, d(3, 1), scans.F32); !errors.As(err, &fb) {
		t.Errorf("matrix_scan k=3: %v", err)
	}
	if err := supports(scans.OpLinearScan, d(1, 1), scans.DType(9)); !errors.As(err, &fb) {
		t.Errorf("bad dtype: %v", err)
	}
}

// TestBlockLayoutSharedBudget: with the 32 KiB budget devices get, the
// long-T matrix_affine_scan shape (k = v = 8) takes 32 chunks of 32 steps,
// with one column an invocation (f32) and two (16-bit types).
func TestBlockLayoutSharedBudget(t *testing.T) {
	for _, c := range []struct{ cols, wg int }{{1, 256}, {2, 128}} {
		wg, chunks := blockLayout(16, 1024, 8, 8, 8, c.cols, 1024, 32<<10)
		if wg != c.wg || chunks != 32 {
			t.Errorf("%d columns: wg %d chunks %d, want %d 32", c.cols, wg, chunks, c.wg)
		}
		if sh := 4 * (chunks*8*8 + 1 + wg*c.cols*8 + 1); sh > 32<<10 {
			t.Errorf("%d columns: %d bytes of shared memory", c.cols, sh)
		}
	}
}

// TestBlockRows: matrix_affine_scan takes the row layout at the large and
// lab benchmark shapes and wherever the column layout would not chunk T;
// long-T keeps the chunked column layout.
func TestBlockRows(t *testing.T) {
	for _, c := range []struct {
		B, T, N, K, V int
		rows          bool
	}{
		{32, 4096, 128, 8, 8, true}, // large: 32768 row invocations
		{128, 64, 8, 8, 8, true},    // lab: 8192 row invocations
		{16, 1024, 8, 8, 8, false},  // long-T: 1024, the column layout chunks
		{3, 40, 3, 4, 2, true},      // too short for the column layout to chunk
		{3, 1000, 5, 8, 8, false},   //
		{3, 1000, 5, 16, 2, true},   // ceil(k/v) = 8: the column layout does not chunk
		{1 << 14, 1000, 8, 2, 1, false},
		{1 << 14, 1000, 8, 1, 8, false},
	} {
		if got := blockRows(c.B, c.T, c.N, c.K, c.V, 1, 1024, 32<<10); got != c.rows {
			t.Errorf("%+v: rows %v", c, got)
		}
	}
	if blockRows(32, 4096, 128, 8, 8, 1, 16, 32<<10) {
		t.Errorf("rows with workgroups limited to 16 invocations")
	}
}

// TestRowWorkgroup: the row layout's f32 forward takes workgroups of 64
// where the device allows them; the 16-bit forwards and the backwards
// keep 32.
func TestRowWorkgroup(t *testing.T) {
	for _, c := range []struct {
		V, esize  int
		bwd       bool
		maxWG     int
		maxShared int
		wg        int
	}{
		{8, 4, false, 1024, 32 << 10, 64},
		{8, 4, true, 1024, 32 << 10, 32},
		{8, 2, false, 1024, 32 << 10, 32},
		{8, 4, false, 32, 32 << 10, 32},   // the device's workgroup limit
		{16, 4, false, 1024, 6 << 10, 32}, // its shared memory: 2*64*16 floats do not fit
	} {
		if got := rowWorkgroup(c.V, c.esize, c.bwd, c.maxWG, c.maxShared); got != c.wg {
			t.Errorf("%+v: workgroup %d", c, got)
		}
	}
}

func TestRowRing(t *testing.T) {
	for _, c := range []struct {
		K, V, esize int
		bwd         bool
		ring        int
	}{
		{8, 8, 4, false, 8}, {8, 8, 4, true, 4},
		{8, 8, 2, false, 8}, {8, 8, 2, true, 4},
		{16, 16, 4, false, 2}, {16, 16, 4, true, 1},
		{16, 4, 4, false, 4}, {2, 2, 2, true, 8},
	} {
		if got := rowRing(c.K, c.V, c.esize, c.bwd); got != c.ring {
			t.Errorf("%+v: ring %d", c, got)
		}
	}
}

func TestEvenSlices(t *testing.T) {
	for _, c := range [][3]int64{{32, 31, 16}, {32, 32, 32}, {32, 40, 32}, {7, 2, 2}, {9, 4, 3}, {1, 1, 1}, {100, 33, 25}} {
		if got := evenSlices(c[0], c[1]); got != c[2] {
			t.Errorf("evenSlices(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
}

func TestGivensSGLayout(t *testing.T) {
	for _, c := range []struct {
		B, T, N, K, width, shared int
		wg, chunks, depth         int
	}{
		{32, 4096, 128, 8, 32, 32 << 10, 64, 1, 16},    // large: 16384 invocations, unchunked, deep ring
		{64, 4096, 32, 8, 32, 32 << 10, 64, 1, 16},     // 8192 invocations: deep ring
		{128, 64, 8, 8, 32, 32 << 10, 64, 1, 4},        // lab: 4096 invocations, unchunked, shallow ring
		{16, 1024, 8, 8, 32, 32 << 10, 256, 64, 4},     // long-T: 512 invocations x 64 chunks of 16 steps
		{32, 1024, 8, 8, 32, 32 << 10, 256, 64, 4},     // 1024 invocations: the most that chunk
		{33, 1024, 8, 8, 32, 32 << 10, 64, 1, 4},       // 1056: too many to chunk
		{3, 1000, 5, 2, 8, 32 << 10, 64, 32, 4},        // k = 2: one invocation per lane, 32 chunks of 31 steps
		{3, 1000, 3, 16, 8, 32 << 10, 128, 16, 4},      // k = 16: 8 invocations per lane, 32 KiB of aggregates
		{3, 1000, 3, 16, 8, 16 << 10, 64, 1, 4},        // k = 16 in 16 KiB: 8 chunks fit, too few to pay
		{3, 255, 5, 8, 32, 32 << 10, 64, 1, 4},         // too short for 16 chunks of 16 steps
		{3, 256, 5, 8, 32, 32 << 10, 64, 16, 4},        //
		{1, 1 << 20, 1, 4, 64, 32 << 10, 128, 64, 4},   // at most 64 chunks
		{1, 1 << 20, 1, 16, 128, 32 << 10, 128, 16, 4}, // k = 16: 32 chunks' aggregates exceed 32 KiB
	} {
		wg, chunks, depth, ok := givensSGLayout(c.B, c.T, c.N, c.K, c.width, c.width, 1024, c.shared)
		if !ok || wg != c.wg || chunks != c.chunks || depth != c.depth {
			t.Errorf("%+v: wg %d chunks %d depth %d ok %v", c, wg, chunks, depth, ok)
		}
		f := c.K / 2
		gpw := wg / f
		if wg%c.width != 0 || wg%(f*chunks) != 0 || (chunks > 1 && 4*(gpw*(c.K*c.K+c.K+8)+gpw/chunks) > c.shared) {
			t.Errorf("%+v: workgroup %d is not whole subgroups of whole lanes times chunks within shared memory", c, wg)
		}
	}
	// The 16-bit forwards take a deeper ring where the layout's is deep;
	// f32, the shallow ring and the backwards keep the layout's.
	for _, c := range []struct {
		depth int
		dt    scans.DType
		want  int
	}{
		{givensSGDepth, scans.F16, 24}, {givensSGDepth, scans.BF16, 20},
		{givensSGDepth, scans.F32, givensSGDepth}, {givensSGShallowDepth, scans.F16, givensSGShallowDepth},
	} {
		if got := givensSGForwardRing(c.depth, c.dt); got != c.want {
			t.Errorf("givensSGForwardRing(%d, %s) = %d, want %d", c.depth, c.dt, got, c.want)
		}
	}
	// A subgroup narrower than k/2, or no shuffles (width 0): the kernels
	// of givensLayout.
	for _, c := range []struct{ K, width int }{{16, 4}, {4, 0}, {2, 0}, {8, 2}} {
		if _, _, _, ok := givensSGLayout(3, 100, 5, c.K, c.width, c.width, 1024, 32<<10); ok {
			t.Errorf("k=%d width %d: subgroup layout chosen", c.K, c.width)
		}
	}
	if _, _, _, ok := givensSGLayout(3, 100, 5, 16, 8, 8, 1024, 32<<10); !ok {
		t.Errorf("k=16 width 8: subgroup layout declined")
	}
	// Subgroups of 8 to 32 invocations (a compiler that chooses): the
	// workgroup is a whole number of the largest.
	if wg, _, _, ok := givensSGLayout(3, 100, 5, 16, 8, 128, 1024, 32<<10); !ok || wg%128 != 0 {
		t.Errorf("k=16 width 8 align 128: wg %d ok %v", wg, ok)
	}
}

// TestLogWorkgroupCap: the tiled layout of parallel_scan_log and of the
// 16-bit linear_scan may take workgroups of maxLogWG, the other tiled
// kernels maxElementwiseWG, both within the device's limit; only few
// lanes over long T reach either.
func TestLogWorkgroupCap(t *testing.T) {
	// The 16-bit linear_scan and parallel_scan_log kernels count two
	// channels an invocation: at the large shape they take the f32 kernels'
	// 4 chunks (not 8), at lab and long-T the same layout as f32.
	for _, op := range []scans.Op{scans.OpLinearScan, scans.OpParallelScanLog} {
		for _, dt := range scans.DTypes {
			for _, c := range []struct{ B, T, D, tile, chunks int }{
				{32, 4096, 1024, 32, 4}, {128, 64, 64, 32, 4}, {16, 1024, 64, 8, 32},
			} {
				if (op == scans.OpParallelScanLog || dt.Size() == 2) && c.T == 1024 {
					c.chunks = 64 // workgroups of 512
				}
				units, steps := elementwiseUnits(op, dt, c.D)
				tile, chunks := tiledLayout(c.B, c.T, units, tiledWorkgroupCap(op, dt, 1024), steps, unitChannels(op, dt))
				if tile != c.tile || chunks != c.chunks {
					t.Errorf("%s %s B=%d T=%d D=%d: tile %d chunks %d, want %d %d", op, dt, c.B, c.T, c.D, tile, chunks, c.tile, c.chunks)
				}
			}
		}
	}
	for _, c := range []struct {
		op           scans.Op
		B, T, D      int
		maxWG        int
		tile, chunks int
	}{
		{scans.OpParallelScanLog, 16, 1024, 64, 1024, 8, 64}, // long-T: T in one segment, workgroups of 512
		{scans.OpLinearScan, 16, 1024, 64, 1024, 8, 32},      // long-T: two segments, workgroups of 256
		{scans.OpParallelScanLog, 16, 1024, 64, 256, 8, 32},  // the device's limit
		{scans.OpParallelScanLog, 128, 64, 64, 1024, 32, 4},  // lab: unchanged
		{scans.OpParallelScanLog, 32, 4096, 1024, 1024, 32, 4},
	} {
		tile, chunks := tiledLayout(c.B, c.T, c.D, tiledWorkgroupCap(c.op, scans.F32, c.maxWG), stepsPerInvocation, 1)
		if tile != c.tile || chunks != c.chunks {
			t.Errorf("%s B=%d T=%d D=%d maxWG=%d: tile %d chunks %d, want %d %d", c.op, c.B, c.T, c.D, c.maxWG, tile, chunks, c.tile, c.chunks)
		}
	}
}

// TestGivensSGChunksWG: an imposed chunk count gets a workgroup of whole
// lanes times chunks in whole subgroups; the layout's own counts (powers
// of two) keep the workgroup they always had.
func TestGivensSGChunksWG(t *testing.T) {
	for _, K := range []int{2, 4, 8, 16} {
		for chunks := 1; chunks <= 70; chunks++ {
			for _, align := range []int{0, 1, 8, 32, 64} {
				wg := givensSGChunksWG(64, K, chunks, align)
				f := K / 2 * chunks
				if wg%f != 0 || (align > 1 && wg%align != 0) || wg < f {
					t.Errorf("k=%d chunks %d align %d: workgroup %d", K, chunks, align, wg)
				}
				if chunks&(chunks-1) == 0 && align <= 64 && wg != max(64, f) {
					t.Errorf("k=%d chunks %d align %d: workgroup %d, want %d", K, chunks, align, wg, max(64, f))
				}
			}
		}
	}
}

// TestGivensSGNumbering holds the subgroup Givens kernels' numbering of
// invocations (thread_of_invocation in shaders/givens_sg.glsl) to what
// their shuffles need, for every subgroup size a device may run, 4 to
// 128, including devices whose compiler picks a smaller size than the
// largest: in each workgroup of the layout, the invocations numbered
// gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID serve every
// (chunk, lane, pair) exactly once, and the k/2 invocations of a (chunk,
// lane) group are consecutive within one subgroup, so that the neighbours
// their shuffles name (index - 1 and + 1 within the group) are theirs.
// Devices run subgroups as wide as 32 (NVIDIA) and as narrow as 4 here;
// this covers the other sizes.
func TestGivensSGNumbering(t *testing.T) {
	for _, minSize := range []int{4, 8, 16, 32, 64, 128} {
		for _, maxSize := range []int{minSize, 2 * minSize, 4 * minSize} {
			for _, s := range []struct{ B, T, N, K int }{
				{32, 4096, 128, 8}, {128, 64, 8, 8}, {16, 1024, 8, 8}, {3, 1000, 5, 2}, {3, 1000, 3, 16},
				{3, 2, 5, 8}, {3, 256, 5, 4}, {1, 1 << 20, 1, 16},
			} {
				wg, chunks, _, ok := givensSGLayout(s.B, s.T, s.N, s.K, minSize, maxSize, 1024, 32<<10)
				if !ok {
					if s.K/2 <= minSize && maxSize <= 1024 {
						t.Errorf("sizes %d to %d %+v: declined", minSize, maxSize, s)
					}
					continue
				}
				for size := minSize; size <= maxSize; size *= 2 {
					if why := checkSGNumbering(wg, chunks, s.K/2, size); why != "" {
						t.Errorf("sizes %d to %d, running %d, %+v (wg %d, %d chunks): %s", minSize, maxSize, size, s, wg, chunks, why)
					}
				}
			}
		}
	}
}

// checkSGNumbering walks one workgroup of wg invocations in subgroups of
// size as the kernels number them and returns what breaks, or "".
func checkSGNumbering(wg, chunks, f, size int) string {
	if wg%size != 0 {
		return fmt.Sprintf("workgroup %d is not whole subgroups of %d", wg, size)
	}
	lpw := wg / f / chunks
	served := map[[3]int]bool{}
	for sg := 0; sg < wg/size; sg++ {
		for self := 0; self < size; self++ {
			slot := sg*size + self
			q := slot % f
			g := slot / f
			local, j := g%lpw, g/lpw
			if j >= chunks {
				return fmt.Sprintf("invocation %d has chunk %d of %d", slot, j, chunks)
			}
			key := [3]int{j, local, q}
			if served[key] {
				return fmt.Sprintf("(chunk %d, lane %d, pair %d) served twice", j, local, q)
			}
			served[key] = true
			// The group's first and last invocations lie in this subgroup.
			if first, last := self-q, self-q+f-1; first < 0 || last >= size {
				return fmt.Sprintf("invocation %d's group runs over subgroup %d (index %d, pair %d)", slot, sg, self, q)
			}
		}
	}
	if len(served) != chunks*lpw*f {
		return fmt.Sprintf("%d of %d (chunk, lane, pair) served", len(served), chunks*lpw*f)
	}
	return ""
}
