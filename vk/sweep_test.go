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
// the variable it does nothing.
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
	defer func() { tiledLayoutOf, alignWords = tiledLayout, true }()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	// Enough runs that the GPU's clocks are up for most of them (the host
	// draws each row's inputs while the device idles).
	timing := bench.Timing{Warmup: 20, MinRuns: 30, MaxRuns: 400, Budget: 250 * time.Millisecond}
	var out strings.Builder
	fmt.Fprintf(&out, "# %s\nshape\top\tmode\tdtype\ttile\tchunks\taligned\trule\tmedian_us\n", b.Status().Device)
	row := func(shape string, op scans.Op, dims scans.Dims, dt scans.DType, mode bench.Mode, tile, chunks int, rule bool) {
		m, err := bench.Measure(b, op, dims, dt, mode, timing, rng)
		if err != nil {
			t.Errorf("%s %s %s tile %d chunks %d: %v", shape, op, mode, tile, chunks, err)
			return
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%d\t%d\t%v\t%v\t%.2f\n", shape, op, mode, dt, tile, chunks, alignWords, rule, m.Median*1e6)
		out.WriteString(line)
		t.Log(strings.TrimSpace(line))
	}
	ops := []scans.Op{scans.OpLinearScan, scans.OpParallelScanLog, scans.OpMatrixScan}
	modes := []bench.Mode{bench.ModeForward, bench.ModeBackward}

	long, err := bench.ShapeByName("long-T")
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		dims := long.Dims(op)
		units, steps := elementwiseUnits(op, scans.F32, dims.N)
		rt, rc := tiledLayout(dims.B, dims.T, units, d.maxWorkgroup(), steps)
		for _, mode := range modes {
			row("long-T", op, dims, scans.F32, mode, rt, rc, true)
			for tile := minTile; tile <= 32; tile *= 2 {
				for chunks := 1; tile*chunks <= d.maxWorkgroup() && chunks*steps <= 2*dims.T; chunks *= 2 {
					if tile == rt && chunks == rc {
						continue
					}
					tc, cc := tile, chunks
					tiledLayoutOf = func(int, int, int, int, int) (int, int) { return tc, cc }
					row("long-T", op, dims, scans.F32, mode, tile, chunks, false)
					tiledLayoutOf = tiledLayout
				}
			}
		}
	}

	large, err := bench.ShapeByName("large")
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		dims := large.Dims(op)
		units, steps := elementwiseUnits(op, scans.F32, dims.N)
		rt, rc := tiledLayout(dims.B, dims.T, units, d.maxWorkgroup(), steps)
		row("large", op, dims, scans.F32, bench.ModeForward, rt, rc, true)
		for _, dt := range []scans.DType{scans.F16, scans.BF16} {
			units, steps := elementwiseUnits(op, dt, dims.N)
			rt, rc := tiledLayout(dims.B, dims.T, units, d.maxWorkgroup(), steps)
			for _, aligned := range []bool{true, false} {
				alignWords = aligned
				row("large", op, dims, dt, bench.ModeForward, rt, rc, true)
			}
			alignWords = true
		}
	}
	if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
