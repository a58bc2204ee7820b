package main

import (
	"fmt"
	"io"

	"github.com/mingru/scans/bench"
)

// A goal is one of the library's performance goals for a GPU backend,
// checked against a run's files.
type goal struct {
	what string
	// One of: copy (the row's fraction of copy bandwidth, at least
	// limit), time (its cold median, at most limit seconds), call (a
	// synchronous call's wall less its warm device time, at most limit
	// seconds), fusion (mingru_scan's speedup over the unfused chain, at
	// least limit), queue (the training step's queue over its kernels, at
	// most limit), stepcall (the step's synchronous wall less its kernels
	// per call, at most limit seconds).
	kind            string
	shape, op, mode string
	backends        []string
	limit           float64
}

var both = []string{"cuda", "vulkan"}

// goals are the library's performance goals, each on an NVIDIA H200.
var goals = func() []goal {
	var g []goal
	copyGoal := func(op string, fwd, fb float64) {
		g = append(g,
			goal{what: op + " large forward", kind: "copy", shape: "large", op: op, mode: "forward", backends: both, limit: fwd},
			goal{what: op + " large forward+backward", kind: "copy", shape: "large", op: op, mode: "forward+backward", backends: both, limit: fb})
	}
	copyGoal("linear_scan", 0.95, 0.93)
	copyGoal("parallel_scan_log", 0.95, 0.93)
	copyGoal("matrix_scan", 0.92, 0.88)
	copyGoal("matrix_affine_scan", 0.92, 0.88)
	copyGoal("givens_scan", 0.85, 0.78)
	g = append(g,
		goal{what: "mingru_scan large forward", kind: "copy", shape: "large", op: "mingru_scan", mode: "forward", backends: both, limit: 0.90},
		goal{what: "linear_scan long-T forward", kind: "time", shape: "long-T", op: "linear_scan", mode: "forward", backends: both, limit: 9e-6},
		goal{what: "parallel_scan_log long-T forward", kind: "time", shape: "long-T", op: "parallel_scan_log", mode: "forward", backends: both, limit: 9e-6},
		goal{what: "matrix_affine_scan lab forward+backward", kind: "time", shape: "lab", op: "matrix_affine_scan", mode: "forward+backward", backends: []string{"cuda"}, limit: 65e-6},
		goal{what: "mingru_scan over the unfused chain, large", kind: "fusion", shape: "large", backends: both, limit: 2},
		goal{what: "mingru_scan over the unfused chain, lab", kind: "fusion", shape: "lab", backends: both, limit: 2.5},
		goal{what: "mingru_scan over the unfused chain, long-T", kind: "fusion", shape: "long-T", backends: both, limit: 2.5},
	)
	for _, op := range []string{"linear_scan", "matrix_scan", "parallel_scan_log"} {
		g = append(g,
			goal{what: op + " lab forward, synchronous call", kind: "call", shape: "lab", op: op, mode: "forward", backends: []string{"cuda"}, limit: 15e-6},
			goal{what: op + " lab forward, synchronous call", kind: "call", shape: "lab", op: op, mode: "forward", backends: []string{"vulkan"}, limit: 25e-6})
	}
	g = append(g,
		goal{what: "training step at 1x16x64, synchronous call", kind: "stepcall", shape: "small", backends: []string{"cuda"}, limit: 15e-6},
		goal{what: "training step at 1x16x64, synchronous call", kind: "stepcall", shape: "small", backends: []string{"vulkan"}, limit: 25e-6},
		goal{what: "training step on one queue, lab", kind: "queue", shape: "lab", backends: both, limit: 1.25},
		goal{what: "training step on one queue, long-T", kind: "queue", shape: "long-T", backends: both, limit: 1.25},
	)
	return g
}()

// goalsTable writes each goal's measured figure, its limit, the floor
// where the goal has one (bytes at the copy bandwidth plus launch
// latency) and whether the run meets it.
func goalsTable(w io.Writer, bf benchFile, sf stepFile) {
	fmt.Fprintf(w, "\n## Goals\n\n"+
		"The library's performance goals on an NVIDIA H200, checked against this run (on any device). "+
		"*%% copy* goals use the cold median; *synchronous call*: the wall column less the warm device time "+
		"(wall times that run until the results are ready); at 1x16x64, the training step's synchronous wall "+
		"less its kernels, per call; *queue*: the step's queue wall over its kernels; *unfused chain*: the "+
		"lower bound above, so a figure under the goal does not show a miss. *floor*: bytes at the copy "+
		"bandwidth plus launch latency.\n\n"+
		"| goal | backend | measured | goal | floor | verdict |\n|---|---|---:|---:|---:|---|\n")
	type key struct{ shape, op, mode, be string }
	rows := map[key]bench.Measurement{}
	for _, r := range bf.Rows {
		if r.DType == "f32" && r.Skipped == "" {
			rows[key{r.Shape, string(r.Op), string(r.Mode), r.Backend}] = r
		}
	}
	verdict := func(ok bool) string { return map[bool]string{true: "met", false: "missed"}[ok] }
	for _, g := range goals {
		for _, be := range g.backends {
			measured, want, floor, v := "not in this run", "", "-", "-"
			switch g.kind {
			case "copy", "time", "call":
				r, ok := rows[key{g.shape, g.op, g.mode, be}]
				if g.kind == "copy" {
					want = fmt.Sprintf(">= %.0f%%", 100*g.limit)
				} else {
					want = "<= " + dur(g.limit)
				}
				if !ok {
					break
				}
				switch g.kind {
				case "copy":
					measured, v = fmt.Sprintf("%.1f%% (%s)", 100*r.FracCopy, dur(r.Median)), verdict(r.FracCopy >= g.limit)
					floor = dur(r.Floor)
				case "time":
					measured, v = dur(r.Median), verdict(r.Median <= g.limit)
					floor = dur(r.Floor)
				case "call":
					if !r.WallReady || r.WarmMedian <= 0 {
						measured = "not timed until ready"
						break
					}
					over := r.WallMedian - r.WarmMedian
					measured, v = fmt.Sprintf("+%s (%s against %s)", dur(over), dur(r.WallMedian), dur(r.WarmMedian)), verdict(over <= g.limit)
				}
			case "fusion":
				want = fmt.Sprintf(">= %.1fx", g.limit)
				for _, f := range bf.Fusion {
					if f.Shape == g.shape && f.Backend == be && f.DType == "f32" {
						measured = fmt.Sprintf(">= %.2fx", f.Speedup)
						v = "met"
						if f.Speedup < g.limit {
							v = "not shown"
						}
					}
				}
			case "queue", "stepcall":
				if g.kind == "queue" {
					want = fmt.Sprintf("<= %.2fx", g.limit)
				} else {
					want = "<= " + dur(g.limit)
				}
				for _, r := range sf.Rows {
					if r.Shape != g.shape || r.Backend != be || r.Skipped != "" || r.KernelSum <= 0 || r.Calls == 0 {
						continue
					}
					if g.kind == "queue" {
						measured, v = fmt.Sprintf("%.2fx", r.QueueRatio), verdict(r.QueueRatio <= g.limit)
					} else {
						per := (r.SyncWall - r.KernelSum) / float64(r.Calls)
						measured, v = "+"+dur(per), verdict(per <= g.limit)
					}
				}
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", g.what, be, measured, want, floor, v)
		}
	}
}
