package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/conformance"
)

func path(dir, name string) string { return filepath.Join(dir, name) }

func writeJSON(dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	return writeFile(dir, name, string(b)+"\n")
}

func writeFile(dir, name, s string) error {
	if err := os.WriteFile(path(dir, name), []byte(s), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// dur formats seconds for a table, in ns, µs, ms or s with three figures.
func dur(s float64) string {
	d := time.Duration(s * 1e9)
	switch {
	case d <= 0:
		return "-"
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", d.Nanoseconds())
	case d < time.Millisecond:
		return fmt.Sprintf("%.1fµs", s*1e6)
	case d < time.Second:
		return fmt.Sprintf("%.2fms", s*1e3)
	}
	return fmt.Sprintf("%.3fs", s)
}

func g3(x float64) string {
	if x == 0 {
		return "0"
	}
	return fmt.Sprintf("%.3g", x)
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", "\\|"), "\n", " ")
}

// ---- parity ----

type paritySummary struct {
	Backend   string `json:"backend"`
	Reference string `json:"reference"` // of the benchmark-regime rows; long-memory rows use float64
	Rows      int    `json:"rows"`
	Passed    int    `json:"passed"`
	Failed    int    `json:"failed"`
}

type parityReport struct {
	Machine bench.Machine     `json:"machine"`
	Quick   bool              `json:"quick"`
	Seed    uint64            `json:"seed"`
	Summary []paritySummary   `json:"summary"`
	Rows    []conformance.Row `json:"rows"`
}

func summarize(rows []conformance.Row) []paritySummary {
	var out []paritySummary
	idx := map[string]int{}
	for _, r := range rows {
		i, ok := idx[r.Backend]
		if !ok {
			i = len(out)
			idx[r.Backend] = i
			out = append(out, paritySummary{Backend: r.Backend})
		}
		s := &out[i]
		if r.Regime == bench.Typical {
			s.Reference = r.Reference
		}
		s.Rows++
		if r.Pass {
			s.Passed++
		} else {
			s.Failed++
		}
	}
	return out
}

func (r parityReport) markdown() string {
	var b strings.Builder
	mode := "full"
	if r.Quick {
		mode = "quick"
	}
	fmt.Fprintf(&b, "# Scan parity (%s matrix)\n\n%s\n", mode, r.Machine.Markdown())
	fmt.Fprintf(&b, "Seed %d. Each row: fresh inputs, backend under test against its reference "+
		"(eager for GPU backends, the float64 reference for eager; long-memory rows always float64). "+
		"Pass when every output element has |got - want| <= atol + rtol*|want|; NaN never passes.\n\n", r.Seed)
	b.WriteString("| backend | reference | rows | passed | failed |\n|---|---|---:|---:|---:|\n")
	for _, s := range r.Summary {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d |\n", s.Backend, s.Reference, s.Rows, s.Passed, s.Failed)
	}
	var failing []conformance.Row
	for _, row := range r.Rows {
		if !row.Pass {
			failing = append(failing, row)
		}
	}
	if len(failing) > 0 {
		b.WriteString("\n## Failing rows\n\n")
		rowTable(&b, failing)
	}
	b.WriteString("\n## All rows\n\n")
	rowTable(&b, r.Rows)
	return b.String()
}

func rowTable(b *strings.Builder, rows []conformance.Row) {
	b.WriteString("| backend | case | dims | reference | max abs err | max rel err | worst | err/gate | atol | rtol | fallback exp/got | pass | error |\n")
	b.WriteString("|---|---|---|---|---:|---:|---|---:|---:|---:|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s/%s | %s | %s |\n",
			r.Backend, r.Case, r.Dims, r.Reference, g3(r.MaxAbsErr), g3(r.MaxRelErr), r.Worst, g3(r.Ratio),
			g3(r.Atol), g3(r.Rtol), yes(r.FallbackExpected), yes(r.FallbackGot), map[bool]string{true: "pass", false: "**FAIL**"}[r.Pass], cell(r.Err))
	}
}

// ---- bench ----

type ceiling struct {
	Backend     string  `json:"backend"`
	Kind        string  `json:"kind"`
	BytesPerSec float64 `json:"bytes_per_s"` // read + written per second
	Latency     float64 `json:"dispatch_latency_s"`
	Err         string  `json:"error,omitempty"`
}

type benchReport struct {
	Machine  bench.Machine       `json:"machine"`
	Quick    bool                `json:"quick"`
	Timing   bench.Timing        `json:"timing"`
	Ceilings []ceiling           `json:"ceilings"`
	Rows     []bench.Measurement `json:"rows"`
	// Fusion is fusion(), kept with the rows it was computed from.
	Fusion []fusionRow `json:"fusion,omitempty"`
}

func (r *benchReport) fillSpeedups() {
	type key struct {
		shape, op, mode, dt string
	}
	eager := map[key]float64{}
	for _, m := range r.Rows {
		if m.Backend == "eager" && m.Skipped == "" {
			eager[key{m.Shape, string(m.Op), string(m.Mode), m.DType}] = m.Median
		}
	}
	for i := range r.Rows {
		m := &r.Rows[i]
		if e, ok := eager[key{m.Shape, string(m.Op), string(m.Mode), m.DType}]; ok && m.Skipped == "" && m.Median > 0 {
			m.Speedup = e / m.Median
		}
	}
}

const benchLegend = `Columns: **median**, **p10**, **p90** of the timed runs after warm-up
(clock: *device* = the backend's kernel timestamps, scans.Instrumented.LastKernelTime,
summed over the forward and the backward; *device, queued* = the same, each launch
queued behind a busy kernel so that the device's time alone is counted, not the
host's time to submit it (CUDA; scans.QueuedTimer); *wall* = host clock around the
synchronous call, eager). **cache** *cold*: each timed run follows a write of a
256 MiB device buffer (scans.CacheFlusher), outside its timing, so that its inputs
come from device memory; **warm** is the median of as many runs without it. **wall**
is the median host time from a call until its results are ready (submission,
allocation, waiting; CUDA's calls return once enqueued and are waited for), with
no flush before it: what a caller that uses the results waits for. **bytes** is the traffic each tensor read or written once:

    forward           = sum(forward inputs, h0 included) + output
    forward+backward  = forward + [transition inputs (a | A | theta, sigma | log_coeffs, log_values | k, x) + h0
                                   + h + dh  (read by the backward)
                                   + one gradient per input (written)]

(the backward does not read b, X or givens_scan's x; mingru_scan's benchmark has no h0). **GB/s** = bytes / median. **copy GB/s** is the
backend's copy bandwidth measured in the same run (bytes read + written per second:
Instrumented.CopyBandwidth on a GPU, Go's copy on the host for eager); **% copy** = GB/s / copy GB/s.
**floor** = bytes / copy bandwidth + dispatch latency x launches (1 forward, 2 forward+backward),
the fastest the operation could run. **vs eager** = eager's median / this median.
`

func (r benchReport) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Scan benchmarks\n\n%s\n", r.Machine.Markdown())
	fmt.Fprintf(&b, "Timing: %d warm-up runs, then %d to %d timed runs within %s per row.\n\n",
		r.Timing.Warmup, r.Timing.MinRuns, r.Timing.MaxRuns, r.Timing.Budget)
	b.WriteString("| backend | ceiling | copy GB/s | dispatch latency | note |\n|---|---|---:|---:|---|\n")
	for _, c := range r.Ceilings {
		fmt.Fprintf(&b, "| %s | %s | %.1f | %s | %s |\n", c.Backend, c.Kind, c.BytesPerSec/1e9, dur(c.Latency), cell(c.Err))
	}
	b.WriteString("\n" + benchLegend + "\n")
	b.WriteString("| shape | op | mode | dtype | backend | dims | clock | cache | runs | median | p10 | p90 | warm | wall | bytes | GB/s | copy GB/s | % copy | floor | vs eager | skipped |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, m := range r.Rows {
		if m.Skipped != "" {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | | | | | | | | | %d | | | | | | %s |\n",
				m.Shape, m.Op, m.Mode, m.DType, m.Backend, m.Dims, m.Bytes, cell("skipped: "+m.Skipped))
			continue
		}
		speed := ""
		if m.Speedup > 0 {
			speed = fmt.Sprintf("%.2fx", m.Speedup)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %d | %s | %s | %s | %s | %s | %d | %.2f | %.1f | %.1f%% | %s | %s | |\n",
			m.Shape, m.Op, m.Mode, m.DType, m.Backend, m.Dims, m.Clock, m.Cache, m.Runs, dur(m.Median), dur(m.P10), dur(m.P90),
			dur(m.WarmMedian), dur(m.WallMedian), m.Bytes, m.GBps, m.CopyGBps, 100*m.FracCopy, dur(m.Floor), speed)
	}
	b.WriteString(fusionMarkdown(r.fusion()))
	return b.String()
}

// table is a short plain-text summary for stdout.
func (r benchReport) table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-7s %-19s %-17s %-5s %-7s %10s %10s %10s %8s %8s %9s\n", "shape", "op", "mode", "dtype", "backend", "median", "warm", "wall", "GB/s", "%copy", "vs eager")
	for _, m := range r.Rows {
		if m.Skipped != "" {
			fmt.Fprintf(&b, "%-7s %-19s %-17s %-5s %-7s skipped: %s\n", m.Shape, m.Op, m.Mode, m.DType, m.Backend, m.Skipped)
			continue
		}
		speed := "-"
		if m.Speedup > 0 {
			speed = fmt.Sprintf("%.2fx", m.Speedup)
		}
		fmt.Fprintf(&b, "%-7s %-19s %-17s %-5s %-7s %10s %10s %10s %8.2f %7.1f%% %9s\n",
			m.Shape, m.Op, m.Mode, m.DType, m.Backend, dur(m.Median), dur(m.WarmMedian), dur(m.WallMedian), m.GBps, 100*m.FracCopy, speed)
	}
	for _, f := range r.fusion() {
		fmt.Fprintf(&b, "%-7s mingru_scan fused   %-17s %-5s %-7s %10s against a chain of at least %s: >= %.2fx\n",
			f.Shape, bench.ModeBackward, f.DType, f.Backend, dur(f.Fused), dur(f.Chain), f.Speedup)
	}
	return b.String()
}

// ---- memory ----

type memoryReport struct {
	Machine bench.Machine        `json:"machine"`
	Rows    []bench.MemoryResult `json:"rows"`
}

func (r memoryReport) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Givens backward memory: angle-fused path vs generic path\n\n%s\n", r.Machine.Markdown())
	b.WriteString(`The angle-fused backward reads theta (B,T,N,k-1) and sigma (B,T,N,k) and
never materializes the transitions; the generic path materializes A =
diag(sigma) R(theta) (B,T,N,k,k) on the host and runs matrix_affine_scan's
backward, holding A and dA. *device peak*: scans.Instrumented.PeakBytes after
ResetPeakBytes, above what was held before, over upload + backward (inputs,
outputs and any scratch). *host bytes (computed)*: the sizes of the tensors
each path allocates, for the eager backend (not a measurement).
*fused / generic time*: the median of forward plus backward of each path on
the same inputs (the generic path's A built once beforehand, not timed), on
the backend's clock (device timestamps on GPUs, the host clock on eager).

`)
	b.WriteString("| backend | dims | dtype | kind | fused bytes | generic bytes | generic / fused | fused time | generic time | generic / fused time | fused holds | generic holds | skipped |\n")
	b.WriteString("|---|---|---|---|---:|---:|---:|---:|---:|---:|---|---|---|\n")
	for _, m := range r.Rows {
		ft, gt, tr := "-", "-", "-"
		if m.FusedTime > 0 && m.GenericTime > 0 {
			ft, gt = dur(m.FusedTime)+" ("+m.Clock+")", dur(m.GenericTime)
			tr = fmt.Sprintf("%.2f", m.GenericTime/m.FusedTime)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %d | %.2f | %s | %s | %s | %s | %s | %s |\n",
			m.Backend, m.Dims, m.DType, m.Kind, m.Fused, m.Generic, m.Ratio, ft, gt, tr, m.FusedTensors, m.GenericTensors, cell(m.Skipped))
	}
	return b.String()
}

func (r memoryReport) table() string {
	var b strings.Builder
	for _, m := range r.Rows {
		if m.Skipped != "" {
			fmt.Fprintf(&b, "memory %-7s skipped: %s\n", m.Backend, m.Skipped)
			continue
		}
		fmt.Fprintf(&b, "memory %-7s %s %s: fused %.2f MiB, generic %.2f MiB (%.2fx) [%s]",
			m.Backend, m.Dims, m.DType, float64(m.Fused)/(1<<20), float64(m.Generic)/(1<<20), m.Ratio, m.Kind)
		if m.FusedTime > 0 && m.GenericTime > 0 {
			fmt.Fprintf(&b, "; fwd+bwd fused %s, generic %s (%.2fx)", dur(m.FusedTime), dur(m.GenericTime), m.GenericTime/m.FusedTime)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// ---- training step ----

type stepReport struct {
	Machine bench.Machine      `json:"machine"`
	Rows    []bench.StepResult `json:"rows"`
}

func (r stepReport) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Training step: synchronous calls against one queue\n\n%s\n", r.Machine.Markdown())
	fmt.Fprintf(&b, `A step is %d layers of linear_scan and parallel_scan_log forward, then their
backwards in reverse order (%d calls, f32, inputs already on the device, warm
cache). *sync*: each call synchronous, its outputs new and released after the
step. *queue*: the calls enqueued on one queue (scans.Queue) into outputs
allocated once and reused (scans.Call.Out), then one Wait. Both are host wall
time per step (median). *kernels*: the sum of the calls' device times, each
timed alone as the benchmark rows are. *batch*: the queue's device time from
its first kernel to its last. The ratios are wall over kernels. *sync per
call*: the sync wall less the kernels, over the calls: what a synchronous call
costs beyond its kernel. The small shape (B=1, T=16, D=64) is not a benchmark
shape of SPEC: its kernels take microseconds, so its step is the calls' cost.

`, bench.StepLayers, 4*bench.StepLayers)
	b.WriteString("| backend | shape | dims | runs | sync wall | queue wall | kernels | batch | sync / kernels | queue / kernels | sync per call | skipped |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, m := range r.Rows {
		kern, batch, sr, qr, per := "-", "-", "-", "-", "-"
		if m.KernelSum > 0 {
			kern, sr, qr = dur(m.KernelSum), fmt.Sprintf("%.2f", m.SyncRatio), fmt.Sprintf("%.2f", m.QueueRatio)
			if m.Skipped == "" && m.Calls > 0 {
				per = dur((m.SyncWall - m.KernelSum) / float64(m.Calls))
			}
		}
		if m.Batch > 0 {
			batch = dur(m.Batch)
		}
		sw, qw := "-", "-"
		if m.Skipped == "" {
			sw, qw = dur(m.SyncWall), dur(m.QueueWall)
		}
		fmt.Fprintf(&b, "| %s | %s | B=%d T=%d D=%d | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			m.Backend, m.Shape, m.Dims.B, m.Dims.T, m.Dims.N, m.Runs, sw, qw, kern, batch, sr, qr, per, cell(m.Skipped))
	}
	return b.String()
}

func (r stepReport) table() string {
	var b strings.Builder
	for _, m := range r.Rows {
		if m.Skipped != "" {
			fmt.Fprintf(&b, "step %-7s %-6s skipped: %s\n", m.Backend, m.Shape, m.Skipped)
			continue
		}
		fmt.Fprintf(&b, "step %-7s %-6s sync %s, queue %s", m.Backend, m.Shape, dur(m.SyncWall), dur(m.QueueWall))
		if m.KernelSum > 0 {
			fmt.Fprintf(&b, ", kernels %s (sync %.2fx, queue %.2fx)", dur(m.KernelSum), m.SyncRatio, m.QueueRatio)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// ---- mingru_scan against the unfused chain ----

// fusionRow compares mingru_scan's forward+backward with the unfused
// chain it replaces, on one backend, shape and type.
type fusionRow struct {
	Backend string `json:"backend"`
	Shape   string `json:"shape"`
	DType   string `json:"dtype"`
	// Fused is mingru_scan's forward+backward median; Scan is
	// parallel_scan_log's at the same dims, in seconds.
	Fused float64 `json:"fused_s"`
	Scan  float64 `json:"scan_s"`
	// GateBytes is bench.GateTraffic; GateFloor = GateBytes at the
	// backend's copy bandwidth plus GateLaunches dispatch latencies (one
	// launch per pass, at the latency measured in the run), the least time
	// the gates' two passes take.
	GateBytes    int64   `json:"gate_bytes"`
	GateFloor    float64 `json:"gate_floor_s"`
	GateLaunches int     `json:"gate_launches,omitempty"`
	// Chain = Scan + GateFloor, a lower bound on the chain's time;
	// Speedup = Chain / Fused, a lower bound on what fusion saves.
	Chain   float64 `json:"chain_bound_s"`
	Speedup float64 `json:"speedup_bound"`
	// BytesRatio is the chain's bytes over mingru_scan's.
	BytesRatio float64 `json:"bytes_ratio"`
}

// fusion pairs every measured mingru_scan forward+backward row with the
// parallel_scan_log row of the same backend, shape and type.
func (r benchReport) fusion() []fusionRow {
	type key struct{ backend, shape, dt string }
	scan := map[key]bench.Measurement{}
	for _, m := range r.Rows {
		if m.Op == scans.OpParallelScanLog && m.Mode == bench.ModeBackward && m.Skipped == "" {
			scan[key{m.Backend, m.Shape, m.DType}] = m
		}
	}
	latency := map[string]float64{}
	for _, c := range r.Ceilings {
		if c.Err == "" {
			latency[c.Backend] = c.Latency
		}
	}
	var out []fusionRow
	for _, m := range r.Rows {
		if m.Op != scans.OpMingruScan || m.Mode != bench.ModeBackward || m.Skipped != "" || m.CopyGBps <= 0 || m.Median <= 0 {
			continue
		}
		s, ok := scan[key{m.Backend, m.Shape, m.DType}]
		if !ok {
			continue
		}
		dt, err := scans.ParseDType(m.DType)
		if err != nil {
			continue
		}
		gate, err := bench.GateTraffic(m.Dims, dt)
		if err != nil {
			continue
		}
		f := fusionRow{Backend: m.Backend, Shape: m.Shape, DType: m.DType, Fused: m.Median, Scan: s.Median, GateBytes: gate}
		f.GateFloor = float64(gate) / (m.CopyGBps * 1e9)
		if lat := latency[m.Backend]; lat > 0 {
			f.GateLaunches = 2
			f.GateFloor += float64(f.GateLaunches) * lat
		}
		f.Chain = f.Scan + f.GateFloor
		f.Speedup = f.Chain / f.Fused
		f.BytesRatio = float64(s.Bytes+gate) / float64(m.Bytes)
		out = append(out, f)
	}
	return out
}

const fusionLegend = `mingru_scan's forward+backward (**fused**) against the unfused chain it
replaces on the same backend: the gates computed and stored, parallel_scan_log's
forward and backward (**scan**, measured above at the same dims), the gates' gradients.
The gates' two passes are not timed: they are counted at the backend's copy
bandwidth, one launch each (**gate floor** = bench.GateTraffic / copy bandwidth +
2 x the dispatch latency measured above, where the backend has one), the least time
any two kernels moving their bytes can take. So **chain** = scan + gate floor is a
lower bound on the chain's time, and **speedup** = chain / fused a lower bound on
what fusion saves. **bytes ratio** is the chain's bytes over mingru_scan's.
`

func fusionMarkdown(rows []fusionRow) string {
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## mingru_scan against the unfused chain\n\n" + fusionLegend + "\n")
	b.WriteString("| shape | dtype | backend | fused | scan | gate floor | chain | speedup | bytes ratio |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, f := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | >= %.2fx | %.2f |\n",
			f.Shape, f.DType, f.Backend, dur(f.Fused), dur(f.Scan), dur(f.GateFloor), dur(f.Chain), f.Speedup, f.BytesRatio)
	}
	return b.String()
}
