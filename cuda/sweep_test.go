//go:build cuda

package cuda

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
)

// TestGivensChunkSweep is a layout experiment, not a check: with
// MINGRU_CUDA_SWEEP set to a file name it times givens_scan (f32, k = 8,
// forward and forward+backward) at the benchmark's lab and long-T shapes
// and at shapes between them, under every chunk count the chunked kernels
// take, and writes one tab-separated row per timing to that file (and the
// log); the row the rule (givensChunks) picks says so. It is how that
// rule is chosen and rechecked on a new device; without the variable it
// does nothing.
func TestGivensChunkSweep(t *testing.T) {
	b, out := startSweep(t, "MINGRU_CUDA_SWEEP", "B\tT\tN\tk\tlanes_x_k\tmode\tchunks\trule\tmedian_us")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	timing := bench.Timing{Warmup: 20, MinRuns: 30, MaxRuns: 400, Budget: 250 * time.Millisecond}
	for _, d := range []scans.Dims{
		{B: 128, T: 64, N: 8, K: 8, V: 1},  // lab
		{B: 16, T: 1024, N: 8, K: 8, V: 1}, // long-T
		{B: 128, T: 256, N: 8, K: 8, V: 1},
		{B: 64, T: 256, N: 8, K: 8, V: 1},
		{B: 64, T: 1024, N: 8, K: 8, V: 1},
		{B: 32, T: 128, N: 8, K: 8, V: 1},
		{B: 4, T: 4096, N: 8, K: 8, V: 1},
	} {
		in, err := bench.InputsInit(scans.OpGivensScan, d, scans.F32, bench.Typical, true, rng)
		if err != nil {
			t.Fatal(err)
		}
		cols := fmt.Sprintf("%d\t%d\t%d\t%d\t%d", d.B, d.T, d.N, d.K, d.B*d.N*d.K)
		givensChunkSweep(t, b, out, in, cols, []bench.Mode{bench.ModeForward, bench.ModeBackward}, maxChunks, timing)
	}
}

// givensChunkSweep times givens_scan on in, in each mode, under 1, 2, 4,
// ... chunks up to maxC (and as many as the chunked kernels take), and
// writes one row per timing: cols (the shape's columns), the mode, the
// chunk count, whether the rule picks it, the median in µs.
func givensChunkSweep(t *testing.T, b *Backend, out *sweepOut, in *bench.InputSet, cols string, modes []bench.Mode,
	maxC int, timing bench.Timing) {
	t.Helper()
	defer func() { b.occ.layout = nil }()
	d := in.Dims
	rule := givensChunks(d.B, d.T, d.N, d.K, b.occ)
	for _, mode := range modes {
		for c := 1; c <= maxC && d.K*c <= givensChunkedMaxThreads && c <= d.T; c *= 2 {
			cc := c
			b.occ.layout = &layoutRules{givensChunks: func(int, int, int, int, occupancy) int { return cc }}
			m, err := bench.MeasureInputs(b, in, mode, timing)
			b.occ.layout = nil
			if err != nil {
				t.Errorf("%v %s chunks %d: %v", d, mode, c, err)
				continue
			}
			out.row("%s\t%s\t%d\t%v\t%.2f", cols, mode, c, c == rule, m.Median*1e6)
		}
	}
}

// TestGivensChunkSweepLarge is a layout experiment, not a check: with
// MINGRU_CUDA_SWEEP_GL set to a file name it times the givens_scan
// forward (k = 8, every element type) at the benchmark's large shape,
// whose 32768 threads leave the unchunked kernel fewer than two warps a
// scheduler on an H200, under 1, 2, 4 and 8 chunks (the chunked kernels
// give each chunk its warps at the price of a first pass that carries
// k+1 vectors), and writes one tab-separated row per timing to that
// file (and the log); the row the rule (givensChunks) picks says so.
// Without the variable it does nothing.
func TestGivensChunkSweepLarge(t *testing.T) {
	b, out := startSweep(t, "MINGRU_CUDA_SWEEP_GL", "B\tT\tN\tk\tdtype\tmode\tchunks\trule\tmedian_us")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 13))
	timing := bench.Timing{Warmup: 5, MinRuns: 10, MaxRuns: 100, Budget: 300 * time.Millisecond}
	d := scans.Dims{B: 32, T: 4096, N: 128, K: 8, V: 1}
	for _, dt := range scans.DTypes {
		in, err := bench.InputsInit(scans.OpGivensScan, d, dt, bench.Typical, true, rng)
		if err != nil {
			t.Fatal(err)
		}
		cols := fmt.Sprintf("%d\t%d\t%d\t%d\t%s", d.B, d.T, d.N, d.K, dt)
		givensChunkSweep(t, b, out, in, cols, []bench.Mode{bench.ModeForward}, 8, timing)
	}
}

// TestMatrixScanLayoutSweep is a layout experiment, not a check: with
// MINGRU_CUDA_SWEEP_MS set to a file name it times matrix_scan (f32 and
// f16, forward and forward+backward) at the benchmark's lab and long-T
// shapes under every tile W (1 to 32 contiguous blocks) and chunk count C
// (1 to 32) the kernels take, and the forward at the large shape in every
// element type under tiles of 8 to 32, and writes one tab-separated row per timing
// to that file (and the log); the row the rule (matrixScanLayout) picks
// says so. Without the variable it does nothing.
func TestMatrixScanLayoutSweep(t *testing.T) {
	b, out := startSweep(t, "MINGRU_CUDA_SWEEP_MS", "B\tT\tN\tdtype\tmode\ttile\tchunks\trule\tmedian_us")
	defer func() { b.occ.layout = nil }()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))
	timing := bench.Timing{Warmup: 20, MinRuns: 30, MaxRuns: 400, Budget: 150 * time.Millisecond}
	for _, d := range []scans.Dims{
		{B: 16, T: 1024, N: 32, K: 2, V: 1},  // long-T
		{B: 128, T: 64, N: 32, K: 2, V: 1},   // lab
		{B: 32, T: 4096, N: 512, K: 2, V: 1}, // large: forward, tiles of 8 to 32
	} {
		large := d.T == 4096
		dts := []scans.DType{scans.F32, scans.F16}
		if large {
			dts = scans.DTypes
		}
		for _, dt := range dts {
			in, err := bench.InputsInit(scans.OpMatrixScan, d, dt, bench.Typical, true, rng)
			if err != nil {
				t.Fatal(err)
			}
			for _, mode := range []bench.Mode{bench.ModeForward, bench.ModeBackward} {
				if large && mode == bench.ModeBackward {
					continue
				}
				bwd := mode == bench.ModeBackward
				rw, rc := matrixScanLayout(d.B, d.T, d.N, dt, bwd, b.occ)
				for w := 1; w <= 32; w *= 2 {
					if large && w < 8 {
						continue
					}
					for c := 1; c <= maxChunks && c*minChunk/2 <= d.T; c *= 2 {
						limit := 1024
						if bwd {
							limit = msMaxThreadsBwd(dt)
						}
						if w*c > limit || matrixScanShared(w, c) > maxShared {
							continue
						}
						ww, cc := w, c
						b.occ.layout = &layoutRules{matrixScanLayout: func(int, int, int, scans.DType, bool, occupancy) (int, int) { return ww, cc }}
						m, err := bench.MeasureInputs(b, in, mode, timing)
						b.occ.layout = nil
						if err != nil {
							t.Errorf("%v %s %s W %d C %d: %v", d, dt, mode, w, c, err)
							continue
						}
						out.row("%d\t%d\t%d\t%s\t%s\t%d\t%d\t%v\t%.2f", d.B, d.T, d.N, dt, mode, w, c, w == rw && c == rc, m.Median*1e6)
					}
				}
			}
		}
	}
}

// TestElementwiseChunkSweep is a layout experiment, not a check: with
// MINGRU_CUDA_SWEEP_EW set to a file name it times the forwards of
// linear_scan and parallel_scan_log at the benchmark's large shape in
// every element type under chunk counts 1 to 32, three rounds, and writes one
// tab-separated row per timing to that file (and the log); the row the
// rule (elementwiseChunks) picks says so. Without the variable it does
// nothing.
func TestElementwiseChunkSweep(t *testing.T) {
	b, out := startSweep(t, "MINGRU_CUDA_SWEEP_EW", "op\tdtype\tmode\tchunks\trule\tround\tmedian_us")
	defer func() { b.occ.layout = nil }()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 13))
	timing := bench.Timing{Warmup: 20, MinRuns: 30, MaxRuns: 400, Budget: 150 * time.Millisecond}
	d := scans.Dims{B: 32, T: 4096, N: 1024, K: 1, V: 1}
	for _, op := range []scans.Op{scans.OpLinearScan, scans.OpParallelScanLog} {
		for _, dt := range scans.DTypes {
			in, err := bench.InputsInit(op, d, dt, bench.Typical, true, rng)
			if err != nil {
				t.Fatal(err)
			}
			p := planFor(op, scans.Forward, d, dt, true, b.occ)
			// Three rounds over the chunk counts, so that a row's spread
			// from one timing to the next shows beside its differences.
			for round := 0; round < 3; round++ {
				limit := 1024
				if op == scans.OpParallelScanLog && dt != scans.F32 {
					ch := 1
					if p.pairs {
						ch = 2
					}
					limit = logFwd16MaxThreads(ch)
				}
				for c := 1; c <= maxChunks && c*tile <= limit && c*tile*2 <= 1024; c *= 2 {
					cc := c
					b.occ.layout = &layoutRules{elementwiseChunks: func(scans.Op, bool, int, int, int, int, occupancy) int { return cc }}
					m, err := bench.MeasureInputs(b, in, bench.ModeForward, timing)
					b.occ.layout = nil
					if err != nil {
						t.Errorf("%s %s chunks %d: %v", op, dt, c, err)
						continue
					}
					out.row("%s\t%s\tforward\t%d\t%v\t%d\t%.2f", op, dt, c, c == p.by, round, m.Median*1e6)
				}
			}
		}
	}
}

// TestGivensTileSweep is a layout experiment, not a check: with
// MINGRU_CUDA_SWEEP_GT set to a file name it times givens_scan (forward
// and forward+backward, every element type) at the benchmark's large
// shape under tiles of 4, 8 and 16 lanes a block (32 to 128 threads), and
// writes one tab-separated row per timing to that file (and the log); the
// row the rule (givensTile) picks says so. Without the variable it does
// nothing.
func TestGivensTileSweep(t *testing.T) {
	b, out := startSweep(t, "MINGRU_CUDA_SWEEP_GT", "dtype\tmode\ttile\trule\tround\tmedian_us")
	defer func() { b.occ.layout = nil }()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 17))
	timing := bench.Timing{Warmup: 10, MinRuns: 20, MaxRuns: 200, Budget: 200 * time.Millisecond}
	d := scans.Dims{B: 32, T: 4096, N: 128, K: 8, V: 1}
	rule := givensTile(d.B, d.N, d.K, b.occ)
	for _, dt := range scans.DTypes {
		in, err := bench.InputsInit(scans.OpGivensScan, d, dt, bench.Typical, true, rng)
		if err != nil {
			t.Fatal(err)
		}
		for round := 0; round < 2; round++ {
			for _, mode := range []bench.Mode{bench.ModeForward, bench.ModeBackward} {
				for _, w := range []int{4, 8, 16} {
					ww := w
					b.occ.layout = &layoutRules{givensTile: func(int, int, int, occupancy) int { return ww }}
					m, err := bench.MeasureInputs(b, in, mode, timing)
					b.occ.layout = nil
					if err != nil {
						t.Errorf("%s %s tile %d: %v", dt, mode, w, err)
						continue
					}
					out.row("%s\t%s\t%d\t%v\t%d\t%.2f", dt, mode, w, w == rule, round, m.Median*1e6)
				}
			}
		}
	}
}

// sweepOut is the output of a layout experiment: tab-separated rows in a
// file, each also written to the test's log.
type sweepOut struct {
	t *testing.T
	f *os.File
}

// startSweep skips the test unless the variable env names an output file;
// otherwise it opens the GPU backend (outputs not poisoned: the timings are
// the kernels'), creates the file and writes the device's name and header
// (tab-separated column names) as its first lines.
func startSweep(t *testing.T, env, header string) (*Backend, *sweepOut) {
	t.Helper()
	path := os.Getenv(env)
	if path == "" {
		t.Skipf("layout experiment: set %s=<output file> to run it", env)
	}
	b := gpu(t)
	b.poison = false
	if err := b.ensure(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	out := &sweepOut{t: t, f: f}
	out.line("# " + b.Status().Device)
	out.line(header)
	return b, out
}

// row writes one row, format and args as for fmt.Sprintf.
func (o *sweepOut) row(format string, args ...any) {
	o.t.Helper()
	line := fmt.Sprintf(format, args...)
	o.line(line)
	o.t.Log(line)
}

func (o *sweepOut) line(s string) {
	o.t.Helper()
	if _, err := o.f.WriteString(s + "\n"); err != nil {
		o.t.Fatal(err)
	}
}
