// Command targets reads a scan_bench.json written by `scanbench --bench`
// and prints, as Markdown, every benchmark row next to the performance
// target it is held to, and whether it meets it:
//
//   - large shape, forward: linear_scan and parallel_scan_log at least 80%
//     of the measured copy bandwidth on CUDA and 70% on Vulkan;
//     matrix_scan and matrix_affine_scan at least 70% / 60%;
//   - large shape, forward+backward: at least 65% on CUDA, 55% on Vulkan,
//     every operation;
//   - lab and long-T shapes: every row within 4x of its floor (bytes at the
//     copy bandwidth plus one empty-dispatch latency per launch);
//   - large and long-T: Vulkan within 1.3x of CUDA on the same row;
//   - f16 and bf16 forward at the large shape at least 1.6x faster than f32.
//
// The first four are the default benchmark's (`scanbench --bench`: f32);
// where the files hold f16 and bf16 rows, a last table holds those rows
// against the same targets, for the record (the 16-bit rows' own target is
// the speedup).
//
// Usage:
//
//	go run ./experiments/targets experiments/bench/h200/run-2026-11-29-7f3c7c3/scan_bench.json
//
// Several files may be given (for example one run in f32 and one in f16
// and bf16); their rows are merged, a later file's row replacing an
// earlier one's, and the machine line names each file's commit and date.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
)

// report is the part of scan_bench.json this command reads.
type report struct {
	Machine bench.Machine       `json:"machine"`
	Rows    []bench.Measurement `json:"rows"`
}

// Targets, as fractions of the copy bandwidth or as ratios.
const (
	maxFloorRatio   = 4.0 // lab and long-T: median <= 4x floor
	maxVulkanOverCu = 1.3 // Vulkan median <= 1.3x CUDA median
	minHalfSpeedup  = 1.6 // f32 median / f16 (bf16) median, large forward
)

// minFracCopy is the large shape's bandwidth target for op in mode on
// backend (0: none).
func minFracCopy(backend string, op scans.Op, mode bench.Mode) float64 {
	cuda := backend == "cuda"
	pick := func(c, v float64) float64 {
		if cuda {
			return c
		}
		return v
	}
	if mode != bench.ModeForward {
		return pick(0.65, 0.55)
	}
	switch op {
	case scans.OpLinearScan, scans.OpParallelScanLog:
		return pick(0.80, 0.70)
	case scans.OpMatrixScan, scans.OpMatrixAffineScan:
		return pick(0.70, 0.60)
	}
	return 0
}

type key struct {
	shape, backend, dtype string
	op                    scans.Op
	mode                  bench.Mode
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: targets scan_bench.json...")
		os.Exit(2)
	}
	var rs []report
	for _, name := range os.Args[1:] {
		r, err := load(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, "targets:", err)
			os.Exit(1)
		}
		rs = append(rs, r)
	}
	write(os.Stdout, rs)
}

func load(name string) (report, error) {
	var r report
	f, err := os.Open(name)
	if err != nil {
		return r, err
	}
	defer f.Close()
	if err := json.NewDecoder(f).Decode(&r); err != nil {
		return r, fmt.Errorf("decoding %s: %w", name, err)
	}
	return r, nil
}

func write(w io.Writer, rs []report) {
	rows := map[key]bench.Measurement{}
	for _, r := range rs {
		fmt.Fprintf(w, "Commit %s, %s.\n", r.Machine.Commit, r.Machine.Date)
		for _, m := range r.Rows {
			if m.Skipped == "" && m.Median > 0 {
				rows[key{m.Shape, m.Backend, m.DType, m.Op, m.Mode}] = m
			}
		}
	}
	fmt.Fprintln(w)

	fmt.Fprintln(w, "| shape | op | mode | CUDA median | CUDA % copy | CUDA x floor | Vulkan median | Vulkan % copy | Vulkan x floor | Vulkan / CUDA | target | met |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
	for _, shape := range []string{"lab", "long-T", "large"} {
		for _, op := range scans.Ops {
			for _, mode := range []bench.Mode{bench.ModeForward, bench.ModeBackward} {
				if cells, ok := rowCells(rows, shape, "f32", op, mode); ok {
					fmt.Fprintf(w, "| %s | %s | %s | %s |\n", shape, op, mode, cells)
				}
			}
		}
	}

	fmt.Fprintln(w)
	fmt.Fprintf(w, "16-bit inputs, large shape, forward: speedup over f32 on the same backend (target >= %.1fx).\n\n", minHalfSpeedup)
	fmt.Fprintln(w, "| op | backend | f32 | f16 | f16 speedup | bf16 | bf16 speedup | met |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---|")
	for _, op := range scans.Ops {
		for _, be := range []string{"cuda", "vulkan"} {
			s, ok := rows[key{"large", be, "f32", op, bench.ModeForward}]
			if !ok {
				continue
			}
			cells := []string{}
			all, any := true, false
			for _, dt := range []string{"f16", "bf16"} {
				h, hok := rows[key{"large", be, dt, op, bench.ModeForward}]
				if !hok {
					cells = append(cells, "-", "-")
					continue
				}
				any = true
				sp := s.Median / h.Median
				all = all && sp >= minHalfSpeedup
				cells = append(cells, dur(h, true), fmt.Sprintf("%.2fx", sp))
			}
			met := "-"
			if any {
				met = yesNo(all)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", op, be, dur(s, true), strings.Join(cells, " | "), met)
		}
	}

	var half []string
	for _, shape := range []string{"lab", "long-T", "large"} {
		for _, op := range scans.Ops {
			for _, mode := range []bench.Mode{bench.ModeForward, bench.ModeBackward} {
				for _, dt := range []string{"f16", "bf16"} {
					if cells, ok := rowCells(rows, shape, dt, op, mode); ok {
						half = append(half, fmt.Sprintf("| %s | %s | %s | %s | %s |", shape, op, mode, dt, cells))
					}
				}
			}
		}
	}
	if len(half) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "16-bit rows against the f32 rows' targets (for the record: the 16-bit rows are held to the speedup above).")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| shape | op | mode | dtype | CUDA median | CUDA % copy | CUDA x floor | Vulkan median | Vulkan % copy | Vulkan x floor | Vulkan / CUDA | f32's target | met |")
		fmt.Fprintln(w, "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
		for _, l := range half {
			fmt.Fprintln(w, l)
		}
	}
}

// rowCells is the cells of one row of the targets tables after its shape,
// op, mode (and type): each backend's median, fraction of the copy
// bandwidth and multiple of the floor, the Vulkan / CUDA ratio, the
// targets and whether the row meets them; ok is false where neither
// backend has the row.
func rowCells(rows map[key]bench.Measurement, shape, dt string, op scans.Op, mode bench.Mode) (cells string, ok bool) {
	c, cok := rows[key{shape, "cuda", dt, op, mode}]
	v, vok := rows[key{shape, "vulkan", dt, op, mode}]
	if !cok && !vok {
		return "", false
	}
	target, met := judge(shape, op, mode, c, cok, v, vok)
	ratio := "-"
	if cok && vok {
		ratio = fmt.Sprintf("%.2f", v.Median/c.Median)
	}
	return strings.Join([]string{dur(c, cok), pct(c, cok), xfloor(c, cok), dur(v, vok), pct(v, vok),
		xfloor(v, vok), ratio, target, met}, " | "), true
}

// judge names the targets of a row and says which it meets.
func judge(shape string, op scans.Op, mode bench.Mode, c bench.Measurement, cok bool, v bench.Measurement, vok bool) (target, met string) {
	var names, fails []string
	check := func(name string, ok bool) {
		names = append(names, name)
		if !ok {
			fails = append(fails, name)
		}
	}
	switch shape {
	case "lab", "long-T":
		if cok {
			check(fmt.Sprintf("CUDA <= %gx floor", maxFloorRatio), c.Median <= maxFloorRatio*c.Floor)
		}
		if vok {
			check(fmt.Sprintf("Vulkan <= %gx floor", maxFloorRatio), v.Median <= maxFloorRatio*v.Floor)
		}
	case "large":
		if f := minFracCopy("cuda", op, mode); f > 0 && cok {
			check(fmt.Sprintf("CUDA >= %.0f%%", 100*f), c.FracCopy >= f)
		}
		if f := minFracCopy("vulkan", op, mode); f > 0 && vok {
			check(fmt.Sprintf("Vulkan >= %.0f%%", 100*f), v.FracCopy >= f)
		}
	}
	if (shape == "large" || shape == "long-T") && cok && vok {
		check(fmt.Sprintf("Vulkan <= %.1fx CUDA", maxVulkanOverCu), v.Median <= maxVulkanOverCu*c.Median)
	}
	if len(names) == 0 {
		return "-", "-"
	}
	if len(fails) == 0 {
		return strings.Join(names, "; "), "yes"
	}
	sort.Strings(fails)
	return strings.Join(names, "; "), "no: " + strings.Join(fails, ", ")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func dur(m bench.Measurement, ok bool) string {
	if !ok {
		return "-"
	}
	d := time.Duration(m.Median * 1e9)
	if d < time.Millisecond {
		return fmt.Sprintf("%.1f µs", m.Median*1e6)
	}
	return fmt.Sprintf("%.2f ms", m.Median*1e3)
}

func pct(m bench.Measurement, ok bool) string {
	if !ok || m.FracCopy == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*m.FracCopy)
}

func xfloor(m bench.Measurement, ok bool) string {
	if !ok || m.Floor == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", m.Median/m.Floor)
}
