// Command record writes the README of a device's table of record from the
// files of one scanbench run in that directory (scan_bench.json,
// scan_parity.json, scan_memory.json, COMMAND, machine.txt): the device,
// driver, date and commit; the conformance verdicts; the f32 times of
// every operation and shape on each backend, cold and warm, with the
// host's wall time, the fraction of copy bandwidth and the speedup over
// eager; the 16-bit speedups; the memory comparison; the training step;
// and, on a GPU, the library's performance goals, met or missed.
// scripts/record.sh runs it.
//
// Usage:
//
//	go run ./experiments/record experiments/bench/h200 > experiments/bench/h200/README.md
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mingru/scans/bench"
)

type benchFile struct {
	Machine  bench.Machine `json:"machine"`
	Quick    bool          `json:"quick"`
	Ceilings []struct {
		Backend     string  `json:"backend"`
		Kind        string  `json:"kind"`
		BytesPerSec float64 `json:"bytes_per_s"`
		Latency     float64 `json:"dispatch_latency_s"`
	} `json:"ceilings"`
	Rows   []bench.Measurement `json:"rows"`
	Fusion []struct {
		Backend    string  `json:"backend"`
		Shape      string  `json:"shape"`
		DType      string  `json:"dtype"`
		Fused      float64 `json:"fused_s"`
		Scan       float64 `json:"scan_s"`
		GateFloor  float64 `json:"gate_floor_s"`
		Launches   int     `json:"gate_launches"`
		Chain      float64 `json:"chain_bound_s"`
		Speedup    float64 `json:"speedup_bound"`
		BytesRatio float64 `json:"bytes_ratio"`
	} `json:"fusion"`
}

type parityFile struct {
	Machine bench.Machine `json:"machine"`
	Quick   bool          `json:"quick"`
	Seed    uint64        `json:"seed"`
	Summary []struct {
		Backend   string `json:"backend"`
		Reference string `json:"reference"`
		Rows      int    `json:"rows"`
		Passed    int    `json:"passed"`
		Failed    int    `json:"failed"`
	} `json:"summary"`
}

type memoryFile struct {
	Rows []bench.MemoryResult `json:"rows"`
}

type stepFile struct {
	Rows []bench.StepResult `json:"rows"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: record DIR")
		os.Exit(2)
	}
	if err := write(os.Stdout, os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(1)
	}
}

func readJSON(dir, name string, v any) error {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func write(w io.Writer, dir string) error {
	var bf benchFile
	if err := readJSON(dir, "scan_bench.json", &bf); err != nil {
		return err
	}
	var pf parityFile
	hasParity := readJSON(dir, "scan_parity.json", &pf) == nil
	var mf memoryFile
	if err := readJSON(dir, "scan_memory.json", &mf); err != nil {
		return err
	}
	cmd, _ := os.ReadFile(filepath.Join(dir, "COMMAND"))
	m := bf.Machine
	fmt.Fprintf(w, "# Table of record: %s\n\n", deviceName(m))
	fmt.Fprintf(w, "| | |\n|---|---|\n")
	for _, st := range m.Backends {
		if st.Available {
			d := st.Device
			if st.Driver != "" {
				d += " (" + st.Driver + ")"
			}
			fmt.Fprintf(w, "| %s | %s |\n", st.Backend, d)
		}
	}
	fmt.Fprintf(w, "| date (UTC) | %s |\n| commit | %s |\n| host | %s/%s, %d CPUs, %s |\n\n", m.Date, m.Commit, m.OS, m.Arch, m.CPUs, m.Go)
	fmt.Fprintf(w, "The run's command (`COMMAND`):\n\n```\n%s\n```\n\n", strings.TrimSpace(string(cmd)))
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	var names []string
	for _, f := range files {
		if n := filepath.Base(f); n != "README.md" {
			names = append(names, "`"+n+"`")
		}
	}
	fmt.Fprintf(w, "Files: %s. `scan_bench.md` has every row (p10, p90, bytes, floor); `COMMAND` is the run's exact command.\n\n", strings.Join(names, ", "))

	if hasParity {
		fmt.Fprintf(w, "## Conformance (%s matrix, seed %d)\n\n| backend | against | rows | passed | failed |\n|---|---|---:|---:|---:|\n",
			map[bool]string{true: "trimmed", false: "full"}[pf.Quick], pf.Seed)
		for _, s := range pf.Summary {
			fmt.Fprintf(w, "| %s | %s | %d | %d | %d |\n", s.Backend, s.Reference, s.Rows, s.Passed, s.Failed)
		}
	}
	if err := conformanceLogs(w, dir); err != nil {
		return err
	}

	fmt.Fprintf(w, "\n## Time per call, f32\n\n")
	if bf.Quick {
		fmt.Fprintf(w, "This run is scanbench's trimmed benchmark (--quick: fewer runs per row, the shapes it names). ")
	}
	if cold(bf.Rows) {
		fmt.Fprintf(w, "Device time, median, each run after a 256 MiB write (cold cache); *warm*: the same without it; "+
			"%s); ", wallLegend(bf.Rows))
	} else {
		fmt.Fprintf(w, "Device time, median, runs back to back (warm cache: this run predates scanbench's cold-cache "+
			"timing and its host wall times); ")
	}
	fmt.Fprintf(w, "*%% copy*: bytes over time against the copy "+
		"bandwidth measured in the run; *vs eager*: eager's time over this one (eager on the host's %d CPUs, not run at the large shape).\n\n", m.CPUs)
	var backs []string
	for _, r := range bf.Rows {
		if r.Backend != "eager" && !slices.Contains(backs, r.Backend) {
			backs = append(backs, r.Backend)
		}
	}
	isCold := cold(bf.Rows)
	fmt.Fprintf(w, "| shape | op | mode | eager |")
	for _, b := range backs {
		if isCold {
			fmt.Fprintf(w, " %s | warm | wall | %% copy | vs eager |", b)
		} else {
			fmt.Fprintf(w, " %s | %% copy | vs eager |", b)
		}
	}
	fmt.Fprintf(w, "\n|---|---|---|---:|")
	for range backs {
		if isCold {
			fmt.Fprintf(w, "---:|---:|---:|---:|---:|")
		} else {
			fmt.Fprintf(w, "---:|---:|---:|")
		}
	}
	fmt.Fprintln(w)
	type key struct{ shape, op, mode, be string }
	rows := map[key]bench.Measurement{}
	var order []key
	for _, r := range bf.Rows {
		if r.DType != "f32" {
			continue
		}
		rows[key{r.Shape, string(r.Op), string(r.Mode), r.Backend}] = r
		if row := (key{r.Shape, string(r.Op), string(r.Mode), ""}); !slices.Contains(order, row) {
			order = append(order, row)
		}
	}
	for _, k := range order {
		e := "-"
		if r, ok := rows[key{k.shape, k.op, k.mode, "eager"}]; ok && r.Skipped == "" {
			e = dur(r.Median)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |", k.shape, k.op, k.mode, e)
		for _, b := range backs {
			r, ok := rows[key{k.shape, k.op, k.mode, b}]
			if !ok || r.Skipped != "" {
				fmt.Fprintf(w, " skipped |%s", strings.Repeat(" |", map[bool]int{true: 4, false: 2}[isCold]))
				continue
			}
			sp := "-"
			if r.Speedup > 0 {
				sp = speedup(r.Speedup)
			}
			if isCold {
				wall := dur(r.WallMedian)
				if !r.WallPlain && r.Clock == "device, queued" {
					wall = "-"
				}
				fmt.Fprintf(w, " %s | %s | %s | %.0f%% | %s |", dur(r.Median), dur(r.WarmMedian), wall, 100*r.FracCopy, sp)
			} else {
				fmt.Fprintf(w, " %s | %.0f%% | %s |", dur(r.Median), 100*r.FracCopy, sp)
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nCopy bandwidth and empty-dispatch latency measured in the run:\n\n| backend | copy | latency |\n|---|---:|---:|\n")
	for _, c := range bf.Ceilings {
		fmt.Fprintf(w, "| %s | %.0f GB/s | %s |\n", c.Backend, c.BytesPerSec/1e9, dur(c.Latency))
	}

	half := halfTable(bf.Rows)
	if half != "" {
		fmt.Fprintf(w, "\n## 16-bit inputs at the large shape, forward, against f32 on the same backend\n\n%s", half)
	}

	if len(bf.Fusion) > 0 {
		launches := ""
		if bf.Fusion[0].Launches > 0 {
			launches = fmt.Sprintf(" plus %d launches at the dispatch latency above", bf.Fusion[0].Launches)
		}
		fmt.Fprintf(w, "\n## The minGRU cell: mingru_scan against the unfused chain, forward+backward\n\n"+
			"*fused*: mingru_scan; *scan*: parallel_scan_log at the same dims; *gate floor*: the bytes of the "+
			"chain's two gate passes (computing the gates, then their gradients) at the copy bandwidth%s, not timed; "+
			"*chain* = scan + gate floor, a lower bound on the chain's time, so *speedup* = chain / fused is a lower "+
			"bound too; *bytes*: the chain's bytes over mingru_scan's (`scan_bench.md` says more).\n\n"+
			"| shape | dtype | backend | fused | scan | gate floor | chain | speedup | bytes |\n|---|---|---|---:|---:|---:|---:|---:|---:|\n", launches)
		for _, f := range bf.Fusion {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | >= %.2fx | %.2fx |\n",
				f.Shape, f.DType, f.Backend, dur(f.Fused), dur(f.Scan), dur(f.GateFloor), dur(f.Chain), f.Speedup, f.BytesRatio)
		}
	}

	fmt.Fprintf(w, "\n## Memory: Givens backward, angle-fused against the generic path\n\n| backend | dims | kind | fused | generic | generic / fused |\n|---|---|---|---:|---:|---:|\n")
	for _, r := range mf.Rows {
		if r.Skipped != "" {
			fmt.Fprintf(w, "| %s | %s | skipped: %s | | | |\n", r.Backend, r.Dims, r.Skipped)
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.2f MiB | %.2f MiB | %.2fx |\n", r.Backend, r.Dims, r.Kind, float64(r.Fused)/(1<<20), float64(r.Generic)/(1<<20), r.Ratio)
	}
	var sf stepFile
	if readJSON(dir, "scan_step.json", &sf) == nil && len(sf.Rows) > 0 {
		fmt.Fprintf(w, "\n## Training step: synchronous calls against one queue\n\n"+
			"%d layers of linear_scan and parallel_scan_log forward, then their backwards (%d calls, f32, warm); "+
			"host wall time per step, synchronous (each call's outputs new) and on one queue (outputs reused, one Wait); "+
			"*kernels*: the sum of the calls' device times (`scan_step.md` says more).\n\n"+
			"| backend | shape | sync | queue | kernels | sync / kernels | queue / kernels |\n|---|---|---:|---:|---:|---:|---:|\n",
			bench.StepLayers, 4*bench.StepLayers)
		for _, r := range sf.Rows {
			if r.Skipped != "" {
				fmt.Fprintf(w, "| %s | %s | skipped: %s | | | | |\n", r.Backend, r.Shape, r.Skipped)
				continue
			}
			k, sr, qr := "-", "-", "-"
			if r.KernelSum > 0 {
				k, sr, qr = dur(r.KernelSum), fmt.Sprintf("%.2f", r.SyncRatio), fmt.Sprintf("%.2f", r.QueueRatio)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Backend, r.Shape, dur(r.SyncWall), dur(r.QueueWall), k, sr, qr)
		}
	}
	if onGPU(m) {
		goalsTable(w, bf, sf)
	}
	fmt.Fprintf(w, "\n![times per operation and shape](scan_bench.png)\n")
	return nil
}

// speedup writes a ratio with two or three figures: 310x, 4.2x, 0.45x.
func speedup(x float64) string {
	switch {
	case x >= 10:
		return fmt.Sprintf("%.0fx", x)
	case x >= 1:
		return fmt.Sprintf("%.1fx", x)
	}
	return fmt.Sprintf("%.2gx", x)
}

// cold says whether the GPU rows were timed cold.
func cold(rows []bench.Measurement) bool {
	for _, r := range rows {
		if r.Cache == "cold" {
			return true
		}
	}
	return false
}

// conformanceLogs summarizes the conformance test logs in dir
// (conformance-<backend>.log, the output of a backend's test binary with
// -test.v): each one's matrix line and verdict.
func conformanceLogs(w io.Writer, dir string) error {
	logs, _ := filepath.Glob(filepath.Join(dir, "conformance-*.log"))
	if len(logs) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n## Conformance tests (each backend's test binary; its matrix line counts the rows)\n\n| log | matrix | verdict |\n|---|---|---|\n")
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			return err
		}
		matrix, verdict := "-", "no verdict"
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if i := strings.Index(line, "conformance: "); i >= 0 && strings.Contains(line, "rows=") {
				matrix = line[i+len("conformance: "):]
			}
			if line == "PASS" || line == "FAIL" || strings.HasPrefix(line, "ok ") || strings.HasPrefix(line, "FAIL ") {
				verdict = line
			}
		}
		fmt.Fprintf(w, "| `%s` | %s | %s |\n", filepath.Base(l), matrix, verdict)
	}
	return nil
}

// halfTable is the f16 and bf16 forward speedups over f32 at the large
// shape (where the bytes, not the chain of steps, set the time), per
// operation and backend, where the run has them.
func halfTable(rows []bench.Measurement) string {
	type key struct{ shape, op, be, dt string }
	t := map[key]float64{}
	var order []key
	for _, r := range rows {
		if r.Mode != bench.ModeForward || r.Skipped != "" || r.Backend == "eager" || r.Shape != "large" {
			continue
		}
		k := key{r.Shape, string(r.Op), r.Backend, r.DType}
		t[k] = r.Median
		if r.DType == "f32" {
			order = append(order, k)
		}
	}
	var b strings.Builder
	for _, k := range order {
		f16, bf16 := t[key{k.shape, k.op, k.be, "f16"}], t[key{k.shape, k.op, k.be, "bf16"}]
		if f16 == 0 && bf16 == 0 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("| shape | op | backend | f32 | f16 | speedup | bf16 | speedup |\n|---|---|---|---:|---:|---:|---:|---:|\n")
		}
		ratio := func(x float64) string {
			if x == 0 {
				return "-"
			}
			return fmt.Sprintf("%.2fx", t[k]/x)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", k.shape, k.op, k.be, dur(t[k]), dur(f16), ratio(f16), dur(bf16), ratio(bf16))
	}
	return b.String()
}

// deviceName is the device of the first available GPU backend, else the
// host's.
func deviceName(m bench.Machine) string {
	for _, st := range m.Backends {
		if st.Available && st.Backend != "eager" {
			return st.Device
		}
	}
	return fmt.Sprintf("%s/%s host", m.OS, m.Arch)
}

// onGPU says whether a GPU backend ran: one other than eager, on a device
// that is not Mesa's CPU rasterizer.
func onGPU(m bench.Machine) bool {
	for _, st := range m.Backends {
		if st.Available && st.Backend != "eager" && !strings.Contains(strings.ToLower(st.Device), "llvmpipe") {
			return true
		}
	}
	return false
}

func dur(s float64) string {
	d := time.Duration(s * 1e9)
	switch {
	case d <= 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%.1f µs", s*1e6)
	case d < time.Second:
		return fmt.Sprintf("%.2f ms", s*1e3)
	}
	return fmt.Sprintf("%.2f s", s)
}

// wallLegend says what the wall column of rows measured.
func wallLegend(rows []bench.Measurement) string {
	for _, r := range rows {
		if r.WallMedian > 0 && !r.WallReady {
			return "*wall*: the host's time for a call to return, median (a CUDA call returns once its kernel is enqueued, a Vulkan call once its work has finished; - where the run timed it with each launch queued behind a busy kernel"
		}
	}
	return "*wall*: the host's time from a call until its results are ready, median (submission, allocation and waiting"
}
