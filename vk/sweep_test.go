//go:build cgo

package vk

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
)

// TestLayoutSweep is a layout experiment, not a check: with
// MINGRU_VK_SWEEP set to a file name it times the tiled kernels
// (linear_scan, parallel_scan_log, matrix_scan) at the long-T shape under
// every tile width and chunk count the device allows, and the 16-bit
// kernels at the large shape compiled for whole words and not, and writes
// one tab-separated row per timing to that file (and the log). It is how
// the rules in plan.go are chosen and rechecked on a new device; without
// the variable it does nothing. MINGRU_VK_SWEEP_SETS picks the parts
// (comma-separated; default all): long, long16, large, aligned, givens,
// givens16, rows, affine-long, affine-long16.
//   - givens: givens_scan at the lab and long-T shapes (and the large
//     forward) with the kernels without subgroup operations and with the
//     subgroup kernels under every chunk count and ring depths 4 and 16;
//     its rows name the kernel ("fallback", "sg-d4", "sg-d16").
//     MINGRU_VK_SWEEP_SHAPES (comma-separated shape names) keeps some of
//     the shapes, MINGRU_VK_SWEEP_DEPTHS (comma-separated) sets the
//     depths.
//   - givens16: the Givens forward at the large shape in every element
//     type under ring depths 2 to 32 (rows "sg-d2" to "sg-d32"), or
//     those of MINGRU_VK_SWEEP_DEPTHS.
//   - long16: linear_scan and parallel_scan_log at the long-T shape in
//     f16 and bf16 under tiles of 4 to 16 units and 16 to 128 chunks.
//   - rows: matrix_affine_scan in the row layout (f32) under workgroups of
//     32 to 128 invocations and rings of 2 to 8 steps; its rows say "rows"
//     and give the workgroup as the tile and the ring as the chunks.
//   - affine-long: matrix_affine_scan at the long-T shape (f32, forward
//     and forward+backward) in the row layout under workgroups of 32 and
//     64 invocations, and in the column layout under every chunk count
//     that keeps 8 steps a chunk and fits a workgroup; its rows say
//     "rows" (the workgroup as the tile) or "columns" (the workgroup as
//     the tile, the chunks as the chunks).
//   - affine-long16: the column layout of affine-long in every element
//     type, with one and two columns an invocation ("columns",
//     "columns2"), from 8 chunks, the rule's ring of loads in flight; at
//     the rule's chunk count also rings of 0 to 8 steps ("columns-r2").
//
// The tiled kernels' rows say "tiled".
//
// On an NVIDIA GPU the clocks stay low for a process that only submits
// Vulkan work in short bursts: time it while some process holds a CUDA
// context (scanbench's CUDA backend does; scripts/gpu-run.sh's sweep
// holds one), or every row comes out several times slower.
func TestLayoutSweep(t *testing.T) {
	path := os.Getenv("MINGRU_VK_SWEEP")
	if path == "" {
		t.Skip("layout experiment: set MINGRU_VK_SWEEP=<output file> to run it")
	}
	b := testBackend(t)
	d, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	// Enough runs that the GPU's clocks are up for most of them (the host
	// draws each row's inputs while the device idles).
	timing := bench.Timing{Warmup: 20, MinRuns: 30, MaxRuns: 400, Budget: 250 * time.Millisecond}
	// Rows are written as they are timed, so a run cut short keeps them.
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	fmt.Fprintf(out, "# %s\nshape\top\tmode\tdtype\tkernel\ttile\tchunks\taligned\trule\tmedian_us\n", b.Status().Device)
	// The inputs of the last (op, dims, element type) are kept: the rows
	// of one grid time the same data, and large inputs take the host
	// seconds to draw.
	var last *bench.InputSet
	kernelName := "tiled"
	row := func(shape string, op scans.Op, dims scans.Dims, dt scans.DType, mode bench.Mode, tile, chunks int, rule bool) {
		dims, err := bench.NormalizeDims(op, dims)
		if err != nil {
			t.Fatal(err)
		}
		if last == nil || last.Op != op || last.Dims != dims || last.DType != dt {
			last = nil
			in, err := bench.InputsInit(op, dims, dt, bench.Typical, true, rng)
			if err != nil {
				t.Fatal(err)
			}
			last = in
		}
		m, err := bench.MeasureInputs(b, last, mode, timing)
		if err != nil {
			t.Errorf("%s %s %s tile %d chunks %d: %v", shape, op, mode, tile, chunks, err)
			return
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%d\t%d\t%v\t%v\t%.2f\n", shape, op, mode, dt, kernelName, tile, chunks, !b.cfg.noAlignWords, rule, m.Median*1e6)
		if _, err := out.WriteString(line); err != nil {
			t.Fatal(err)
		}
		t.Log(strings.TrimSpace(line))
	}
	ops := []scans.Op{scans.OpLinearScan, scans.OpParallelScanLog, scans.OpMatrixScan}
	sets := os.Getenv("MINGRU_VK_SWEEP_SETS")
	if sets == "" {
		sets = "long,long16,large,aligned,givens,givens16,rows,affine-long,affine-long16"
	}
	want := func(set string) bool { return strings.Contains(","+sets+",", ","+set+",") }
	// grid times op at dims under every tile width of tiles and chunk
	// count up to maxChunks, the device's workgroup limit and twice the
	// chunks that cover T, the rule's layout first.
	grid := func(shape string, op scans.Op, dims scans.Dims, dt scans.DType, mode bench.Mode, tiles []int, maxChunks int) {
		units, steps := elementwiseUnits(op, dt, dims.N)
		rt, rc := tiledLayout(dims.B, dims.T, units, tiledWorkgroupCap(op, dt, d.maxWorkgroup()), steps, unitChannels(op, dt))
		row(shape, op, dims, dt, mode, rt, rc, true)
		for _, tile := range tiles {
			for chunks := 1; chunks <= maxChunks && tile*chunks <= d.maxWorkgroup() && chunks*steps <= 2*dims.T; chunks *= 2 {
				if tile == rt && chunks == rc {
					continue
				}
				tc, cc := tile, chunks
				b.cfg.tiledLayout = func(int, int, int, int, int, int) (int, int) { return tc, cc }
				row(shape, op, dims, dt, mode, tile, chunks, false)
				b.cfg.tiledLayout = nil
			}
		}
	}
	long, err := bench.ShapeByName("long-T")
	if err != nil {
		t.Fatal(err)
	}
	large, err := bench.ShapeByName("large")
	if err != nil {
		t.Fatal(err)
	}
	// long: every op, forward and forward+backward, f32, tiles 8 to 32.
	if want("long") {
		for _, op := range ops {
			for _, mode := range []bench.Mode{bench.ModeForward, bench.ModeBackward} {
				grid("long-T", op, long.Dims(op), scans.F32, mode, []int{8, 16, 32}, 1024)
			}
		}
	}
	// long16: linear_scan and parallel_scan_log at the long-T shape in
	// f16 and bf16, forward and forward+backward, the rule's layout and
	// tiles of 4 to 16 units (two channels each) under 16 to 128 chunks.
	if want("long16") {
		for _, op := range ops[:2] {
			dims, err := bench.NormalizeDims(op, long.Dims(op))
			if err != nil {
				t.Fatal(err)
			}
			for _, dt := range []scans.DType{scans.F16, scans.BF16} {
				units, steps := elementwiseUnits(op, dt, dims.N)
				rt, rc := tiledLayout(dims.B, dims.T, units, tiledWorkgroupCap(op, dt, d.maxWorkgroup()), steps, unitChannels(op, dt))
				for _, mode := range []bench.Mode{bench.ModeForward, bench.ModeBackward} {
					row("long-T", op, dims, dt, mode, rt, rc, true)
					for _, tile := range []int{4, 8, 16} {
						for chunks := 16; chunks <= 128 && tile*chunks <= d.maxWorkgroup() && chunks*steps <= 2*dims.T; chunks *= 2 {
							if tile == rt && chunks == rc {
								continue
							}
							tc, cc := tile, chunks
							b.cfg.tiledLayout = func(int, int, int, int, int, int) (int, int) { return tc, cc }
							row("long-T", op, dims, dt, mode, tile, chunks, false)
							b.cfg.tiledLayout = nil
						}
					}
				}
			}
		}
	}
	// large: the forward of linear_scan and parallel_scan_log in every
	// element type, tiles of 32 units and up to 16 chunks.
	if want("large") {
		for _, op := range ops[:2] {
			for _, dt := range scans.DTypes {
				grid("large", op, large.Dims(op), dt, bench.ModeForward, []int{32}, 16)
			}
		}
	}
	// aligned: the 16-bit forwards at the large shape compiled for whole
	// words and not.
	if want("aligned") {
		for _, op := range ops {
			dims := large.Dims(op)
			for _, dt := range []scans.DType{scans.F16, scans.BF16} {
				units, steps := elementwiseUnits(op, dt, dims.N)
				rt, rc := tiledLayout(dims.B, dims.T, units, tiledWorkgroupCap(op, dt, d.maxWorkgroup()), steps, unitChannels(op, dt))
				for _, aligned := range []bool{true, false} {
					b.cfg.noAlignWords = !aligned
					row("large", op, dims, dt, bench.ModeForward, rt, rc, true)
				}
				b.cfg.noAlignWords = false
			}
		}
	}
	// givens: givens_scan, f32, forward and forward+backward at lab and
	// long-T, forward at large: the fallback kernel, then the subgroup
	// kernels (where the device has them) at ring depths 4 and 16 under
	// every chunk count from 1 while chunks keep 8 steps and fit a
	// workgroup and the device's own shared memory limit (not the 32 KiB
	// the layouts' rules take), the rule's chunk count marked.
	if want("givens") {
		defer func() { b.cfg.noSubgroup, b.cfg.givensChunks, b.cfg.givensDepth = false, 0, 0 }()
		lab, err := bench.ShapeByName("lab")
		if err != nil {
			t.Fatal(err)
		}
		op := scans.OpGivensScan
		depths := sweepDepths(t, []int{4, givensSGDepth})
		keep := func(shape string) bool {
			v := os.Getenv("MINGRU_VK_SWEEP_SHAPES")
			return v == "" || strings.Contains(","+v+",", ","+shape+",")
		}
		for _, sh := range []struct {
			name  string
			dims  scans.Dims
			modes []bench.Mode
		}{
			{"lab", lab.Dims(op), []bench.Mode{bench.ModeForward, bench.ModeBackward}},
			{"long-T", long.Dims(op), []bench.Mode{bench.ModeForward, bench.ModeBackward}},
			{"large", large.Dims(op), []bench.Mode{bench.ModeForward}},
		} {
			if !keep(sh.name) {
				continue
			}
			for _, mode := range sh.modes {
				b.cfg.noSubgroup, b.cfg.givensChunks, b.cfg.givensDepth = true, 0, 0
				kernelName = "fallback"
				row(sh.name, op, sh.dims, scans.F32, mode, 0, 0, false)
				b.cfg.noSubgroup = false
				rw, rc, rd, ok := givensSGLayout(sh.dims.B, sh.dims.T, sh.dims.N, sh.dims.K, d.shuffleWidth(),
					d.subgroupAlign(), d.maxWorkgroup(), d.maxSharedMemory())
				if !ok {
					continue
				}
				fits := func(chunks int) bool {
					wg := givensSGChunksWG(rw, sh.dims.K, chunks, d.subgroupAlign()) // as the backend sets it for the chunks knob
					return 8*chunks <= sh.dims.T && wg <= d.maxWorkgroup() && givensSGShared(sh.dims.K, wg, chunks) <= d.sharedMemoryLimit()
				}
				for _, depth := range depths {
					kernelName = fmt.Sprintf("sg-d%d", depth)
					for chunks := 1; fits(chunks); chunks *= 2 {
						b.cfg.givensChunks, b.cfg.givensDepth = chunks, depth
						row(sh.name, op, sh.dims, scans.F32, mode, 0, chunks, chunks == rc && depth == rd)
					}
				}
			}
		}
		kernelName = "tiled"
	}
	// givens16: givens_scan forward at the large shape in every element
	// type under ring depths 2 to 16 (the subgroup kernels, unchunked as
	// the rule runs them there), the 16-bit kernels compiled for whole
	// words (and then also with rings of 24 and 32) and not, the rule's
	// row marked.
	if want("givens16") {
		defer func() { b.cfg.givensDepth = 0 }()
		op := scans.OpGivensScan
		dims := large.Dims(op)
		_, _, rd, ok := givensSGLayout(dims.B, dims.T, dims.N, dims.K, d.shuffleWidth(),
			d.subgroupAlign(), d.maxWorkgroup(), d.maxSharedMemory())
		if !ok {
			t.Fatal("givens16: the device has no subgroup Givens kernels")
		}
		for _, dt := range scans.DTypes {
			for _, aligned := range []bool{true, false} {
				if !aligned && dt.Size() == 4 {
					continue
				}
				b.cfg.noAlignWords = !aligned
				depths := []int{2, 4, 8, 16}
				if dt.Size() == 2 && aligned {
					depths = append(depths, 24, 32)
				}
				depths = sweepDepths(t, depths)
				for _, depth := range depths {
					kernelName = fmt.Sprintf("sg-d%d", depth)
					b.cfg.givensDepth = depth
					row("large", op, dims, dt, bench.ModeForward, 0, 1, depth == givensSGForwardRing(rd, dt) && aligned)
				}
			}
		}
		b.cfg.givensDepth, b.cfg.noAlignWords = 0, false
		kernelName = "tiled"
	}
	// rows: matrix_affine_scan in the row layout, f32: the forward at the
	// lab and large shapes under workgroups of 32 to 128 invocations and
	// rings of 4 and 8, then at the large shape the forward+backward with
	// the forward at the rule's layout and the backward under workgroups
	// of 32 to 128 and rings of 2 to 8. The rule's rows are marked.
	if want("rows") {
		defer func() { b.cfg.rowsWG, b.cfg.rowsRing = [2]int{}, [2]int{} }()
		op := scans.OpMatrixAffineScan
		lab, err := bench.ShapeByName("lab")
		if err != nil {
			t.Fatal(err)
		}
		kernelName = "rows"
		for _, sh := range []struct {
			name string
			dims scans.Dims
		}{{"lab", lab.Dims(op)}, {"large", large.Dims(op)}} {
			dims := sh.dims
			for _, wg := range []int{32, 64, 128} {
				for _, ring := range []int{4, 8} {
					b.cfg.rowsWG[0], b.cfg.rowsRing[0] = wg, ring
					rule := wg == rowWorkgroup(dims.V, 4, false, d.maxWorkgroup(), d.maxSharedMemory()) &&
						ring == rowRing(dims.K, dims.V, 4, false)
					row(sh.name, op, dims, scans.F32, bench.ModeForward, wg, ring, rule)
				}
			}
		}
		b.cfg.rowsWG[0], b.cfg.rowsRing[0] = 0, 0
		dims := large.Dims(op)
		for _, wg := range []int{32, 64, 128} {
			for _, ring := range []int{2, 4, 8} {
				b.cfg.rowsWG[1], b.cfg.rowsRing[1] = wg, ring
				rule := wg == rowWorkgroup(dims.V, 4, true, d.maxWorkgroup(), d.maxSharedMemory()) &&
					ring == rowRing(dims.K, dims.V, 4, true)
				row("large", op, dims, scans.F32, bench.ModeBackward, wg, ring, rule)
			}
		}
		kernelName = "tiled"
	}
	if want("affine-long") {
		affineLong(t, b, d, long, []scans.DType{scans.F32}, row, &kernelName, true)
	}
	if want("affine-long16") {
		affineLong(t, b, d, long, []scans.DType{scans.F32, scans.F16, scans.BF16}, row, &kernelName, false)
	}
}

// affineLong is the sweep's affine-long part (with rows true) and
// affine-long16 part (rows false): matrix_affine_scan at the long-T shape
// in the element types dts, forward and forward+backward, in the row
// layout under workgroups of 32 and 64 invocations (rows only), and in the
// column layout with one and two columns an invocation under every chunk
// count that keeps 8 steps a chunk and fits a workgroup (from 8 chunks
// without rows). Its rows say "rows" (the workgroup as the tile) or
// "columns" and "columns2" (the workgroup as the tile, the chunks as the
// chunks).
func affineLong(t *testing.T, b *Backend, d *device, long bench.Shape, dts []scans.DType,
	row func(string, scans.Op, scans.Dims, scans.DType, bench.Mode, int, int, bool), kernelName *string, rows bool) {
	defer func() {
		b.cfg.rowsWG, b.cfg.affineRows, b.cfg.blockChunks, b.cfg.blockCols, b.cfg.colRing = [2]int{}, 0, 0, 0, 0
	}()
	defer func() { *kernelName = "tiled" }()
	op := scans.OpMatrixAffineScan
	dims := long.Dims(op)
	for _, dt := range dts {
		ruleCols := blockCols(dt, dims.V)
		ruleRows := blockRows(dims.B, dims.T, dims.N, dims.K, dims.V, ruleCols, d.maxWorkgroup(), d.maxSharedMemory())
		for _, mode := range []bench.Mode{bench.ModeForward, bench.ModeBackward} {
			bwd := mode == bench.ModeBackward
			if rows {
				*kernelName = "rows"
				b.cfg.affineRows = 1
				for _, wg := range []int{32, 64} {
					// forward+backward: the forward at the rule's workgroup
					b.cfg.rowsWG = [2]int{}
					if bwd {
						b.cfg.rowsWG[1] = wg
					} else {
						b.cfg.rowsWG[0] = wg
					}
					rule := ruleRows && wg == rowWorkgroup(dims.V, dt.Size(), bwd, d.maxWorkgroup(), d.maxSharedMemory())
					row("long-T", op, dims, dt, mode, wg, 1, rule)
				}
				b.cfg.rowsWG = [2]int{}
			}
			b.cfg.affineRows = -1
			for _, cols := range []int{1, 2} {
				*kernelName = "columns"
				if cols == 2 {
					*kernelName = "columns2"
				}
				b.cfg.blockCols = cols
				_, ruleChunks := blockLayout(dims.B, dims.T, dims.N, dims.K, dims.V, cols, d.maxWorkgroup(), d.maxSharedMemory())
				first := 1
				if !rows {
					first = 8
				}
				ruleRing := colRing(dims.K, dt.Size())
				for chunks := first; 8*chunks <= dims.T; chunks *= 2 {
					wg, shared := blockChunkLayout(dims.K, dims.V, cols, chunks)
					if wg > d.maxWorkgroup() || shared > d.maxSharedMemory() {
						break
					}
					b.cfg.blockChunks = chunks
					row("long-T", op, dims, dt, mode, wg, chunks, !ruleRows && cols == ruleCols && chunks == ruleChunks)
					if rows || chunks != ruleChunks {
						continue
					}
					// affine-long16: the rule's chunks under rings of 0 to 8
					// steps (kernel "columns-r<ring>").
					name := *kernelName
					for _, ring := range []int{0, 1, 2, 4, 8} {
						if ring == ruleRing {
							continue
						}
						*kernelName = fmt.Sprintf("%s-r%d", name, ring)
						b.cfg.colRing = ring + 1
						row("long-T", op, dims, dt, mode, wg, chunks, false)
					}
					*kernelName, b.cfg.colRing = name, 0
				}
			}
			b.cfg.affineRows, b.cfg.blockChunks, b.cfg.blockCols, b.cfg.colRing = 0, 0, 0, 0
		}
	}
}

// sweepDepths is the ring depths a Givens part of the sweep tries: those
// of MINGRU_VK_SWEEP_DEPTHS (comma-separated) where it is set, else def.
func sweepDepths(t *testing.T, def []int) []int {
	v := os.Getenv("MINGRU_VK_SWEEP_DEPTHS")
	if v == "" {
		return def
	}
	var depths []int
	for _, f := range strings.Split(v, ",") {
		var n int
		if _, err := fmt.Sscan(f, &n); err != nil || n < 2 {
			t.Fatalf("MINGRU_VK_SWEEP_DEPTHS: %q is not a depth of 2 or more", f)
		}
		depths = append(depths, n)
	}
	return depths
}
