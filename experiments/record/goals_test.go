package main

import (
	"strings"
	"testing"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
)

// TestGoalsTable: each goal's row says met or missed from the run's
// figures, and "not in this run" where the run lacks them.
func TestGoalsTable(t *testing.T) {
	row := func(be, shape, op, mode string, frac, median float64) bench.Measurement {
		return bench.Measurement{Backend: be, Shape: shape, Op: scans.Op(op), Mode: bench.Mode(mode), DType: "f32",
			FracCopy: frac, Median: median, Floor: median / 2, WarmMedian: median / 2, WallMedian: median, WallReady: true}
	}
	var bf benchFile
	bf.Rows = []bench.Measurement{
		row("cuda", "large", "linear_scan", "forward", 0.96, 1e-3),
		row("vulkan", "large", "linear_scan", "forward", 0.94, 1e-3),
		row("cuda", "long-T", "linear_scan", "forward", 0, 8e-6),
		row("vulkan", "long-T", "linear_scan", "forward", 0, 10e-6),
		row("cuda", "lab", "linear_scan", "forward", 0, 20e-6),   // wall 20, warm 10: +10
		row("vulkan", "lab", "linear_scan", "forward", 0, 60e-6), // +30
	}
	sf := stepFile{Rows: []bench.StepResult{
		{Backend: "vulkan", Shape: "lab", Calls: 32, KernelSum: 300e-6, SyncWall: 1e-3, QueueWall: 360e-6, QueueRatio: 1.2},
	}}
	var b strings.Builder
	goalsTable(&b, bf, sf)
	out := b.String()
	for _, want := range []string{
		"| linear_scan large forward | cuda | 96.0% (1.00 ms) | >= 95% | 500.0 µs | met |",
		"| linear_scan large forward | vulkan | 94.0% (1.00 ms) | >= 95% | 500.0 µs | missed |",
		"| linear_scan long-T forward | cuda | 8.0 µs | <= 9.0 µs | 4.0 µs | met |",
		"| linear_scan long-T forward | vulkan | 10.0 µs | <= 9.0 µs | 5.0 µs | missed |",
		"| linear_scan lab forward, synchronous call | cuda | +10.0 µs (20.0 µs against 10.0 µs) | <= 15.0 µs | - | met |",
		"| linear_scan lab forward, synchronous call | vulkan | +30.0 µs (60.0 µs against 30.0 µs) | <= 25.0 µs | - | missed |",
		"| training step on one queue, lab | vulkan | 1.20x | <= 1.25x | - | met |",
		"| training step on one queue, lab | cuda | not in this run | <= 1.25x | - | - |",
		"| parallel_scan_log large forward | cuda | not in this run | >= 95% | - | - |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing row %q in:\n%s", want, out)
		}
	}
}
