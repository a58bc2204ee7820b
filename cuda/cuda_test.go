//go:build cuda

package cuda

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/conformance"
	"github.com/mingru/scans/conformance/conformancetest"
	"github.com/mingru/scans/eager"
	"github.com/mingru/scans/internal/angles"
)

func init() {
	taggedBuild = true
	gpuStatus = func() (string, bool) {
		st := New().Status()
		return st.String(), st.Available
	}
}

// gpu returns a backend whose operations fill their outputs with NaN
// before each launch, or skips the test with the reason CUDA is missing.
func gpu(t *testing.T) *Backend {
	t.Helper()
	b := New()
	if st := b.Status(); !st.Available {
		t.Skipf("needs a CUDA GPU: %s", st.Reason)
	}
	b.poison = true
	return b
}

// TestConformance runs the project's conformance matrix against eager
// with poisoned outputs, so an element a kernel never writes stays NaN and
// fails its gate.
func TestConformance(t *testing.T) {
	conformancetest.TestBackend(t, gpu(t), testing.Short())
}

// TestSpecialValues: NaN, +Inf and -Inf in any input propagate as in
// eager, and touch no other batch entry (conformancetest.TestSpecialValues).
func TestSpecialValues(t *testing.T) {
	conformancetest.TestSpecialValues(t, gpu(t))
}

// TestMingruRange: mingru_scan with |k| up to 100 and |x| up to 1.5e4
// (conformancetest.TestMingruRange).
func TestMingruRange(t *testing.T) {
	conformancetest.TestMingruRange(t, gpu(t))
}

// TestMingruNegativeH0: a negative h0 entry makes its lane NaN, and only
// its lane (conformancetest.TestMingruNegativeH0).
func TestMingruNegativeH0(t *testing.T) {
	conformancetest.TestMingruNegativeH0(t, gpu(t))
}

// TestLogRange: parallel_scan_log far outside the benchmark's inputs
// (strong decays, states far below their inputs, overflow) agrees with
// eager (conformancetest.TestLogRange).
func TestLogRange(t *testing.T) {
	conformancetest.TestLogRange(t, gpu(t))
}

// TestLinearPairs runs checkLinearPairs on the GPU, planning as if the
// device were small enough for the two-channel 16-bit linear_scan forward.
func TestLinearPairs(t *testing.T) {
	b := gpu(t)
	b.occ = pairsOcc
	checkLinearPairs(t, b)
}

// TestLogPairs runs checkLogPairs on the GPU, planning as if the device
// were small enough for the two-channel 16-bit parallel_scan_log forward.
func TestLogPairs(t *testing.T) {
	b := gpu(t)
	b.occ = pairsOcc
	checkLogPairs(t, b)
}

// TestHalfValues: every f16 and bf16 bit pattern widens and narrows
// exactly (conformancetest.TestHalfValues).
func TestHalfValues(t *testing.T) {
	conformancetest.TestHalfValues(t, gpu(t))
}

// TestGivensAngles: givens_scan with angles up to 3000 in magnitude, and
// with a few of any magnitude up to 1e38 among angles within pi, agrees
// with eager, through the chunked and the unchunked kernels
// (conformancetest.TestGivensAngles).
func TestGivensAngles(t *testing.T) {
	conformancetest.TestGivensAngles(t, gpu(t), true)
}

// TestGivensTurn: the unchunked Givens forward and backward of a theta
// within pi (the _turn kernels, which leave out the angle test and, in
// 16-bit types, the reduction by 2 pi) agree with eager, on a shape the
// device walks unchunked, every element type, with every output poisoned
// first.
func TestGivensTurn(t *testing.T) {
	b := gpu(t)
	b.poison = true
	defer func() { b.poison = false }()
	ref := eager.New()
	seed := conformancetest.TestSeed()
	t.Logf("seed %d", seed)
	d := scans.Dims{B: 3, T: 300, N: 200, K: 8, V: 1}
	if c := givensChunks(d.B, d.T, d.N, d.K, b.occ); c != 1 {
		t.Fatalf("givensChunks = %d, want 1 (an unchunked shape)", c)
	}
	for _, dt := range scans.DTypes {
		for _, dir := range []scans.Direction{scans.Forward, scans.Backward} {
			p := planFor(scans.OpGivensScan, dir, d, dt, true, b.occ)
			p.withTheta(angles.Turn)
			if !strings.HasSuffix(p.kernel(), "_turn") {
				t.Fatalf("%v %s: plan kernel %s", dt, dir, p.kernel())
			}
			c := conformance.Case{Op: scans.OpGivensScan, Dir: dir, Dims: d, DType: dt, Regime: bench.Typical, Init: true}
			if r := conformance.CheckCase(b, ref, c, seed); !r.Pass {
				t.Errorf("%s: %s", c.Name(), r.Summary())
			}
		}
	}
}

func TestStatus(t *testing.T) {
	b := New()
	st := b.Status()
	if st.Backend != "cuda" {
		t.Fatalf("Status.Backend = %q", st.Backend)
	}
	if !st.Available {
		// The reason is the driver's own: libcuda.so.1 missing, cuInit's
		// error, no device.
		if !strings.HasPrefix(st.Reason, "CUDA not available: ") || len(st.Reason) <= len("CUDA not available: ") {
			t.Fatalf("Status.Reason = %q, want \"CUDA not available: <reason>\"", st.Reason)
		}
		h, _ := scans.FromFloat32([]float32{1}, 1, 1, 1)
		_, err := b.Upload(h)
		var u *scans.UnavailableError
		if !errors.As(err, &u) || u.Reason != st.Reason {
			t.Fatalf("Upload: %v, want *scans.UnavailableError %q", err, st.Reason)
		}
		if err := b.Supports(scans.OpLinearScan, scans.Dims{B: 1, T: 1, N: 1, K: 1, V: 1}, scans.F32); !errors.As(err, &u) {
			t.Fatalf("Supports: %v, want *scans.UnavailableError", err)
		}
		_, err = b.DispatchLatency()
		if !errors.As(err, &u) {
			t.Fatalf("DispatchLatency: %v, want *scans.UnavailableError", err)
		}
		t.Logf("unavailable, as expected here: %s", st.Reason)
		return
	}
	if st.Device == "" || st.Driver == "" || st.Reason != "" {
		t.Fatalf("Status = %+v, want a device and driver and no reason", st)
	}
	t.Logf("%s", st)
}

// fakeTensor is a tensor of b that was never allocated: enough for the
// checks that run before any device work (shapes, ownership, envelope).
func fakeTensor(b *Backend, dt scans.DType, shape ...int) *Tensor {
	return &Tensor{dtype: dt, shape: shape, owner: b, ptr: 1, bytes: int64(scans.NumElements(shape) * dt.Size())}
}

func TestArgErrors(t *testing.T) {
	b := New()
	other := New()
	host, _ := scans.NewHost(scans.F32, 2, 3, 4)
	mine := fakeTensor(b, scans.F32, 2, 3, 4)
	theirs := fakeTensor(other, scans.F32, 2, 3, 4)

	var ae *scans.ArgError
	// All host tensors pass the shape checks, then are refused by name.
	_, err := b.LinearScan(host, host, nil)
	if !errors.As(err, &ae) || ae.Arg != "a" || ae.Op != scans.OpLinearScan {
		t.Errorf("LinearScan(host...): %v, want *scans.ArgError for a", err)
	}
	// A host tensor before a device tensor: the host one is named.
	_, err = b.LinearScan(host, mine, nil)
	if !errors.As(err, &ae) || ae.Arg != "a" || !strings.Contains(err.Error(), "Upload") {
		t.Errorf("LinearScan(host, mine): %v, want *scans.ArgError for a", err)
	}
	// Another backend's tensor.
	_, err = b.LinearScan(mine, theirs, nil)
	if !errors.As(err, &ae) || ae.Arg != "b" {
		t.Errorf("LinearScan(mine, theirs): %v, want *scans.ArgError for b", err)
	}
	// A shape mismatch is caught by the shared checks.
	bad := fakeTensor(b, scans.F32, 2, 3, 5)
	_, err = b.LinearScan(mine, bad, nil)
	if !errors.As(err, &ae) || ae.Arg != "b" {
		t.Errorf("LinearScan(shape mismatch): %v, want *scans.ArgError for b", err)
	}
	// Mixed element types.
	half := fakeTensor(b, scans.F16, 2, 3, 4)
	_, _, _, err = b.LinearScanBackward(mine, mine, nil, half, mine)
	if !errors.As(err, &ae) || ae.Arg != "h" {
		t.Errorf("LinearScanBackward(f16 h): %v, want *scans.ArgError for h", err)
	}
	// Download and Release of host tensors.
	if _, err := b.Download(host); !errors.As(err, &ae) {
		t.Errorf("Download(host): %v, want *scans.ArgError", err)
	}
	if err := b.Release(host); !errors.As(err, &ae) {
		t.Errorf("Release(host): %v, want *scans.ArgError", err)
	}
}

func TestOutOfEnvelope(t *testing.T) {
	b := New()
	var fb *scans.ScanFallback
	// k = 3 is outside {1,2,4,8,16}: declined before any device work, from
	// Supports and from the operations, whether or not a GPU is present.
	A := fakeTensor(b, scans.F32, 2, 5, 3, 3, 3)
	X := fakeTensor(b, scans.F32, 2, 5, 3, 3, 4)
	if err := b.Supports(scans.OpMatrixAffineScan, scans.Dims{B: 2, T: 5, N: 3, K: 3, V: 4}, scans.F32); !errors.As(err, &fb) {
		t.Errorf("Supports(k=3): %v, want *scans.ScanFallback", err)
	}
	if _, err := b.MatrixAffineScan(A, X, nil); !errors.As(err, &fb) || fb.Backend != "cuda" {
		t.Errorf("MatrixAffineScan(k=3): %v, want *scans.ScanFallback", err)
	}
	if _, _, _, err := b.MatrixAffineScanBackward(A, X, nil, X, X); !errors.As(err, &fb) {
		t.Errorf("MatrixAffineScanBackward(k=3): %v, want *scans.ScanFallback", err)
	}
	// v = 32.
	A = fakeTensor(b, scans.BF16, 1, 2, 1, 4, 4)
	X = fakeTensor(b, scans.BF16, 1, 2, 1, 4, 32)
	if _, err := b.MatrixAffineScan(A, X, nil); !errors.As(err, &fb) {
		t.Errorf("MatrixAffineScan(v=32): %v, want *scans.ScanFallback", err)
	}
	// An odd Givens block, and one too large.
	for _, k := range []int{3, 6, 32} {
		th := fakeTensor(b, scans.F16, 1, 4, 2, k-1)
		sg := fakeTensor(b, scans.F16, 1, 4, 2, k)
		if _, err := b.GivensScan(th, sg, sg, nil); !errors.As(err, &fb) {
			t.Errorf("GivensScan(k=%d): %v, want *scans.ScanFallback", k, err)
		}
		if _, _, _, _, err := b.GivensScanBackward(th, sg, sg, nil, sg, sg); !errors.As(err, &fb) {
			t.Errorf("GivensScanBackward(k=%d): %v, want *scans.ScanFallback", k, err)
		}
	}
}

// TestChunkedElementwise compares the elementwise scans with eager where
// chunkCount splits T into the most chunks (few lanes, long T not a
// multiple of the chunk count, a partial channel tile), forward and
// backward, with the initial state present and absent.
func TestChunkedElementwise(t *testing.T) {
	b := gpu(t)
	ref := eager.New()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	// N = 37 runs one channel per thread, N = 38 two in the 16-bit
	// forwards; both leave a partial tile.
	for _, T := range []int{31, 32, 33, 1000, 4099} {
		for _, N := range []int{37, 38} {
			d := scans.Dims{B: 2, T: T, N: N, K: 1, V: 1}
			if c := chunkCount(T, minChunk, d.B*2, tile, b.occ, nil); T >= 1000 && c < 16 {
				t.Fatalf("T=%d: chunkCount = %d, want the many-chunk path", T, c)
			}
			for _, op := range []scans.Op{scans.OpLinearScan, scans.OpParallelScanLog} {
				for _, dt := range scans.DTypes {
					for _, init := range []bool{true, false} {
						in, err := bench.InputsInit(op, d, dt, bench.Typical, init, rng)
						if err != nil {
							t.Fatal(err)
						}
						compare(t, b, ref, op, in)
					}
				}
			}
		}
	}
}

// compare runs in's forward and backward on b and ref and checks every
// output against the contract's gates. It reports with t.Errorf only, so
// that it may run on goroutines other than the test's.
func compare(t *testing.T, b, ref scans.Backend, op scans.Op, in *bench.InputSet) {
	t.Helper()
	wantH, err := bench.Run(ref, op, scans.Forward, in, nil)
	if err != nil {
		t.Errorf("eager %s forward: %v", op, err)
		return
	}
	for _, dir := range []scans.Direction{scans.Forward, scans.Backward} {
		want, err := bench.Run(ref, op, dir, in, wantH[0])
		if err != nil {
			t.Errorf("eager %s %s: %v", op, dir, err)
			return
		}
		got, err := bench.Run(b, op, dir, in, wantH[0])
		if err != nil {
			t.Errorf("%s %s %v %v: %v", op, dir, in.DType, in.Dims, err)
			return
		}
		atol, rtol := conformance.Gate(op, dir, in.DType)
		for i := range want {
			if (want[i] == nil) != (got[i] == nil) {
				t.Errorf("%s %s output %d: got %v, want %v", op, dir, i, got[i], want[i])
				continue
			}
			if want[i] == nil {
				continue
			}
			diff := conformance.Compare(got[i].Float64s(), want[i].Float64s(), atol, rtol)
			if !diff.Pass() {
				t.Errorf("%s %s %v %v init=%v output %d: %d of %d bad, first at %s: got %g want %g",
					op, dir, in.DType, in.Dims, in.Init(), i, diff.Bad, diff.N,
					conformance.Index(want[i].Shape(), diff.First), diff.Got, diff.Want)
			}
		}
	}
}

func TestInstrumented(t *testing.T) {
	b := gpu(t)
	if _, ok := b.LastKernelTime(); ok {
		t.Error("LastKernelTime reports a time before any operation")
	}
	base := b.PeakBytes()
	n := 1 << 20
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = rand.Float32()
	}
	h, _ := scans.FromFloat32(vals, 1, n, 1)
	a, err := b.Upload(h)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.PeakBytes(); got != base+int64(4*n) {
		t.Errorf("PeakBytes after upload = %d, want %d", got, base+int64(4*n))
	}
	out, err := b.LinearScan(a, a, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := b.LastKernelTime(); !ok || d <= 0 {
		t.Errorf("LastKernelTime = %v, %v after an operation", d, ok)
	}
	if got := b.PeakBytes(); got != base+int64(8*n) {
		t.Errorf("PeakBytes after the scan = %d, want %d", got, base+int64(8*n))
	}
	back, err := b.Download(a)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range back.Float32Data() {
		if v != vals[i] {
			t.Fatalf("round trip: element %d = %g, want %g", i, v, vals[i])
		}
	}
	for _, x := range []scans.Tensor{a, out} {
		if err := b.Release(x); err != nil {
			t.Fatal(err)
		}
	}
	var ae *scans.ArgError
	if err := b.Release(a); !errors.As(err, &ae) {
		t.Errorf("second Release: %v, want *scans.ArgError", err)
	}
	if _, err := b.LinearScan(a, a, nil); !errors.As(err, &ae) {
		t.Errorf("scan of a released tensor: %v, want *scans.ArgError", err)
	}
	b.ResetPeakBytes()
	if got := b.PeakBytes(); got != base {
		t.Errorf("PeakBytes after release and reset = %d, want %d", got, base)
	}
	bw, err := b.CopyBandwidth(256 << 20)
	if err != nil || bw <= 0 || math.IsInf(bw, 0) {
		t.Fatalf("CopyBandwidth = %g, %v", bw, err)
	}
	lat, err := b.DispatchLatency()
	if err != nil || lat <= 0 {
		t.Fatalf("DispatchLatency = %v, %v", lat, err)
	}
	t.Logf("copy bandwidth %.0f GB/s, dispatch latency %v", bw/1e9, lat)
}

// TestConcurrent runs operations from several goroutines at once; each
// result must match its own eager reference.
func TestConcurrent(t *testing.T) {
	b := gpu(t)
	ref := eager.New()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(g)))
			ops := []scans.Op{scans.OpLinearScan, scans.OpMatrixAffineScan, scans.OpGivensScan, scans.OpParallelScanLog}
			op := ops[g%len(ops)]
			d := scans.Dims{B: 3, T: 70, N: 5, K: 4, V: 2}
			switch op {
			case scans.OpLinearScan, scans.OpParallelScanLog:
				d.K, d.V = 1, 1
			case scans.OpGivensScan:
				d.V = 1
			}
			in, err := bench.InputsInit(op, d, scans.F32, bench.Typical, true, rng)
			if err != nil {
				t.Errorf("inputs: %v", err)
				return
			}
			compare(t, b, ref, op, in)
		}()
	}
	wg.Wait()
}

// TestQueuedTiming: with queued timing on, operations still compute what
// eager does (a run the host outpaced is launched again), and their
// events bracket the operation alone: an empty launch and a small scan
// each time far less than the busy kernel in front of them.
func TestQueuedTiming(t *testing.T) {
	b := gpu(t)
	b.SetQueuedTiming(true)
	defer b.SetQueuedTiming(false)
	ref := eager.New()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, op := range []scans.Op{scans.OpLinearScan, scans.OpGivensScan} {
		d := scans.Dims{B: 4, T: 64, N: 64, K: 1, V: 1}
		if op == scans.OpGivensScan {
			d = scans.Dims{B: 4, T: 64, N: 8, K: 8, V: 1}
		}
		in, err := bench.InputsInit(op, d, scans.F32, bench.Typical, true, rng)
		if err != nil {
			t.Fatal(err)
		}
		compare(t, b, ref, op, in)
		m, err := bench.MeasureInputs(b, in, bench.ModeForward, bench.Timing{Warmup: 2, MinRuns: 21, MaxRuns: 21})
		if err != nil {
			t.Fatal(err)
		}
		if m.Clock != "device, queued" || !(m.Median > 0) || m.Median*1e6 >= float64(busyStart/time.Microsecond)/2 {
			t.Errorf("%s: clock %q, median %.2f µs; want device, queued and under half the busy kernel's %v", op, m.Clock, m.Median*1e6, busyStart)
		}
		t.Logf("%s %v: %.2f µs queued (p10 %.2f, p90 %.2f)", op, d, m.Median*1e6, m.P10*1e6, m.P90*1e6)
	}
	lat, err := b.DispatchLatency()
	if err != nil || lat <= 0 || lat >= busyStart/2 {
		t.Errorf("DispatchLatency = %v, %v; want a positive time under half the busy kernel's %v", lat, err, busyStart)
	}
	t.Logf("dispatch latency %v queued", lat)
}

// BenchmarkCalls times the host's cost of a call, synchronous or queued
// (conformancetest.BenchmarkCalls): go test -tags cuda -run '^$' -bench
// Calls ./cuda.
func BenchmarkCalls(b *testing.B) {
	be := New()
	defer be.Close()
	conformancetest.BenchmarkCalls(b, be)
}
