// Command scanbench checks and benchmarks the scan backends compiled into
// it, and writes its results as JSON and Markdown tables (and a PNG chart)
// that name the machine they came from.
//
// Modes (any combination; with none, --check --quick):
//
//	--check   the conformance matrix: every GPU backend against eager,
//	          eager against the float64 reference; writes scan_parity.json
//	          and scan_parity.md; exits 1 if any row fails.
//	--bench   the benchmark shapes (lab, long-T, large) x operation x
//	          backend, forward and forward+backward: median and p10/p90
//	          times, achieved bandwidth, fraction of the device's copy
//	          bandwidth, floor, speedup over eager; writes scan_bench.json,
//	          scan_bench.md and scan_bench.png.
//	--memory  peak memory of the angle-fused Givens backward against the
//	          generic path; writes scan_memory.json and scan_memory.md.
//	--step    a training step (8 layers of linear_scan and parallel_scan_log
//	          forward, then the backwards) through synchronous calls and
//	          through one queue with reused outputs: host wall time per step
//	          against the sum of the calls' device times; writes
//	          scan_step.json and scan_step.md.
//	--sweep   the GPU backends' layout experiments (vk and cuda
//	          Backend.Sweep): kernels timed under layouts other than their
//	          rules', to recheck the rules on a new device; writes
//	          sweep-<backend>.tsv.
//
// GPU clocks: on an NVIDIA GPU the driver keeps the clocks at their idle
// level for a process that only submits Vulkan work in short bursts; an
// H200 timed every Vulkan row 3 to 5 times slower that way. A process
// holding a CUDA context keeps them up, and scanbench's CUDA backend holds
// one for the whole run when it is compiled in and available. Compare
// Vulkan rows on NVIDIA from runs that include the CUDA backend (the
// default, -tags cuda), as the committed H200 tables do.
//
// Device time: Vulkan rows are timed by timestamps written into the
// recorded command buffer; CUDA rows by events with each timed launch
// queued behind a short busy kernel (scans.QueuedTimer), so that neither
// counts the host's time to submit the work and the two backends' rows,
// and their floors (copy bandwidth and the empty dispatch are timed the
// same way), compare like for like.
//
// Examples:
//
//	go run ./cmd/scanbench                       # quick conformance check
//	go run ./cmd/scanbench --check               # the full matrix
//	go run ./cmd/scanbench --bench --shapes lab --backends eager,vulkan
//	go run -tags cuda ./cmd/scanbench --bench --memory --out /tmp/results
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usage is printed by --help.
const usage = `scanbench checks and benchmarks the minGRU scan backends.

Usage: scanbench [--check] [--bench] [--memory] [--step] [--sweep PARTS] [flags]

Modes (any combination; with none, scanbench runs --check --quick):

  --check   Conformance: runs the parity matrix (every op, forward and
            backward, every block size of the GPU envelope, T in
            {1,2,3,63,64,65,1000}, f32/f16/bf16, out-of-envelope rows that
            must report ScanFallback, long-memory rows) on every selected
            GPU backend against eager, and on eager against the float64
            reference, so a machine without a GPU still checks something.
            Writes scan_parity.json and scan_parity.md; exits 1 if any row
            fails.
            Example: scanbench --check --quick --backends eager

  --bench   Benchmarks the contract's shapes (lab, long-T, large) for each
            op and backend, forward and forward+backward: warm-up, then
            timed runs (median, p10, p90; device time on GPU backends,
            without the host's time to submit the work; wall time on
            eager), achieved bandwidth, fraction of the copy
            bandwidth measured in the same run, the floor (bytes at copy
            bandwidth + launch latency) and the speedup over eager. eager is
            not run at the large shape (it would take minutes); such rows
            are listed as skipped with the reason. Writes scan_bench.json,
            scan_bench.md and scan_bench.png.
            Example: scanbench --bench --quick --shapes lab

  --memory  Peak device bytes of the Givens backward at B=128 T=64 N=8 k=8,
            angle-fused path against the generic path (A materialized on
            the host and run through matrix_affine_scan's backward on the
            device). For eager, the host bytes each path allocates,
            computed. Also times forward+backward of both paths on the
            same inputs. Writes scan_memory.json and scan_memory.md.
            Example: scanbench --memory --backends cuda

  --step    A training step at the lab and long-T shapes and at B=1,
            T=16, D=64 (f32; --shapes picks among the first two): 8
            layers of linear_scan and parallel_scan_log forward, then
            their backwards in reverse order, (a) as synchronous calls and
            (b) enqueued on one queue (scans.Queue) with outputs allocated
            once and reused. Reports the host wall time per step of each,
            the sum of the calls' device times, the ratios and what a
            synchronous call costs beyond its kernel. Writes
            scan_step.json and scan_step.md.
            Example: scanbench --step --backends vulkan

  --sweep PARTS  Layout experiments of the GPU backends: their kernels
            timed under layouts other than the ones their rules choose
            (tile widths, chunks of T, rings), the rule's row marked, so
            that the rules can be rechecked on a new device. PARTS is all
            or a comma-separated list of the parts in the flag's help.
            Writes sweep-<backend>.tsv, a row per timing, as it goes.
            Example: scanbench --sweep long,rows --backends vulkan

  --list-devices  Lists every device of every compiled GPU backend: its
            index, name and memory. --device vulkan=1 (or a name, or
            cuda=0) picks the device a backend runs on.

Every file starts with the machine: backends with device, driver and API
version, Go version, OS/arch, date (UTC) and git commit.

Flags:
`

func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if err == errHelp {
			return 0
		}
		fmt.Fprintln(stderr, "scanbench:", err)
		return 2
	}
	if cfg.cpuProfile != "" {
		f, err := os.Create(cfg.cpuProfile)
		if err != nil {
			fmt.Fprintln(stderr, "scanbench:", err)
			return 2
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(stderr, "scanbench:", err)
			return 2
		}
		defer pprof.StopCPUProfile()
	}
	code, err := execute(cfg, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "scanbench:", err)
		if code == 0 {
			code = 2
		}
	}
	return code
}
