package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/conformance"
	"github.com/mingru/scans/conformance/conformancetest"
	"github.com/mingru/scans/eager"
	"github.com/mingru/scans/internal/angles"
)

// The kernels run on the host: testdata/emu/emu.cc compiles kernels/*.cu
// as C++ (a fiber per CUDA thread, each run to its next __syncthreads in
// turn, in alternating order; see emu.h) and runs one launch per process. emuBackend drives it with the same
// plans as the GPU backend (planFor), so the conformance matrix checks the
// kernels' index math, chunking, barriers, every output element being
// written (outputs start as NaN) and the host-side launch plans, on any
// machine with g++. It does not check the GPU's arithmetic or the driver
// calls; the tagged tests do, on a GPU.

// gpuStatus reports a real CUDA device, where the tagged tests run the
// kernels on it; builds with the cuda tag set it (cuda_test.go), and
// taggedBuild.
var (
	gpuStatus   = func() (string, bool) { return "", false }
	taggedBuild = false
)

var (
	emuOnce sync.Once
	emuBin  string
	emuErr  error
)

// trackSources reads every source the emulation compiles (the kernels in
// dir and testdata/emu), so that go test's result cache, which tracks the
// files a test opens, sees kernel changes.
func trackSources(t *testing.T, dir string) {
	t.Helper()
	srcs, _ := filepath.Glob(filepath.Join(dir, "*.cu*"))
	emus, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), "testdata", "emu", "*"))
	for _, f := range append(srcs, emus...) {
		if _, err := os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
}

// emulator builds testdata/emu once per test binary, or skips the test.
func emulator(t *testing.T) string {
	t.Helper()
	dir := kernelsDir(t)
	trackSources(t, dir)
	emuOnce.Do(func() {
		gxx, err := exec.LookPath("g++")
		if err != nil {
			emuErr = fmt.Errorf("g++ not found: %v", err)
			return
		}
		tmp, err := os.MkdirTemp("", "cuda-emu")
		if err != nil {
			emuErr = err
			return
		}
		emuBin = filepath.Join(tmp, "emu")
		src := filepath.Join(filepath.Dir(dir), "testdata", "emu", "emu.cc")
		// -O1 makes the full tier's thousands of launches fast; the
		// few of -short are faster unoptimized, which compiles in a
		// fifth of the time.
		opt := "-O1"
		if testing.Short() {
			opt = "-O0"
		}
		args := []string{"-std=c++20", opt, "-pthread", "-rdynamic", "-o", emuBin, src}
		// With the address sanitizer, where g++ has it, a kernel that
		// reads or writes past an input, an output (each its own exact
		// allocation) or its shared memory fails the launch.
		asan := append([]string{"-fsanitize=address", "-fno-omit-frame-pointer"}, args...)
		if _, err := exec.Command(gxx, asan...).CombinedOutput(); err == nil {
			return
		}
		out, err := exec.Command(gxx, args...).CombinedOutput()
		if err != nil {
			emuErr = fmt.Errorf("g++ %s: %v\n%s", src, err, out)
		}
	})
	if emuErr != nil {
		if _, ok := emuErr.(*exec.Error); ok {
			t.Skipf("host emulation of the kernels needs g++: %v", emuErr)
		}
		t.Fatalf("building the kernel emulator: %v", emuErr)
	}
	return emuBin
}

// emuBackend is a scans.Backend whose operations run the CUDA kernels in
// the host emulator. Its tensors are host tensors.
type emuBackend struct {
	bin string
	dir string // scratch directory for the launch files
	occ occupancy
	mu  sync.Mutex
	n   int
}

func (e *emuBackend) Name() string { return "cuda-emu" }
func (e *emuBackend) Status() scans.Status {
	return scans.Status{Backend: "cuda-emu", Available: true, Device: "host emulation of the CUDA kernels"}
}
func (e *emuBackend) Supports(op scans.Op, d scans.Dims, dt scans.DType) error {
	return envelope(op, d, dt)
}
func (e *emuBackend) Upload(h *scans.Host) (scans.Tensor, error) { return h.Clone(), nil }
func (e *emuBackend) Download(t scans.Tensor) (*scans.Host, error) {
	return t.(*scans.Host).Clone(), nil
}
func (e *emuBackend) Release(scans.Tensor) error { return nil }

func writeHost(path string, h *scans.Host) error {
	var buf []byte
	if h.DType() == scans.F32 {
		buf = make([]byte, 4*h.Len())
		for i, v := range h.Float32Data() {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
		}
	} else {
		buf = make([]byte, 2*h.Len())
		for i, v := range h.Bits() {
			binary.LittleEndian.PutUint16(buf[2*i:], v)
		}
	}
	return os.WriteFile(path, buf, 0o644)
}

func readHost(path string, dt scans.DType, shape []int) (*scans.Host, error) {
	buf, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	h, err := scans.NewHost(dt, shape...)
	if err != nil {
		return nil, err
	}
	if len(buf) != h.Bytes() {
		return nil, fmt.Errorf("%s: %d bytes, want %d", path, len(buf), h.Bytes())
	}
	if dt == scans.F32 {
		for i := range h.Float32Data() {
			h.Float32Data()[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
		}
	} else {
		for i := range h.Bits() {
			h.Bits()[i] = binary.LittleEndian.Uint16(buf[2*i:])
		}
	}
	return h, nil
}

// run plans the launch exactly as Backend.run does and runs it in the
// emulator.
func (e *emuBackend) run(op scans.Op, dir scans.Direction, d scans.Dims, args ...scans.Tensor) ([]scans.Tensor, error) {
	dt := args[0].DType()
	if err := envelope(op, d, dt); err != nil {
		return nil, err
	}
	i := initArg(op)
	p := planFor(op, dir, d, dt, i >= 0 && !scans.IsNil(args[i]), e.occ)
	if op == scans.OpGivensScan {
		p.withTheta(angles.Of(args[0].(*scans.Host)))
	}
	e.mu.Lock()
	e.n++
	call := filepath.Join(e.dir, strconv.Itoa(e.n))
	e.mu.Unlock()
	if err := os.MkdirAll(call, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(call)
	cmd := []string{p.kernel(), strconv.Itoa(p.grid), strconv.Itoa(p.bx), strconv.Itoa(p.by), strconv.Itoa(p.shared)}
	for _, i := range p.ins {
		if scans.IsNil(args[i]) {
			cmd = append(cmd, "null")
			continue
		}
		f := filepath.Join(call, fmt.Sprintf("in%d", i))
		if err := writeHost(f, args[i].(*scans.Host)); err != nil {
			return nil, err
		}
		cmd = append(cmd, "in:"+f)
	}
	for i, shape := range p.outs {
		if shape == nil {
			cmd = append(cmd, "null")
			continue
		}
		cmd = append(cmd, fmt.Sprintf("out:%s:%d", filepath.Join(call, fmt.Sprintf("out%d", i)), scans.NumElements(shape)*dt.Size()))
	}
	for _, s := range p.scalars {
		cmd = append(cmd, "i:"+strconv.FormatInt(s, 10))
	}
	run := exec.Command(e.bin, cmd...)
	// The launcher keeps its buffers until it exits; no leak report.
	run.Env = append(os.Environ(), "ASAN_OPTIONS=detect_leaks=0")
	if out, err := run.CombinedOutput(); err != nil {
		return nil, &scans.KernelError{Backend: "cuda-emu", Op: op, Err: fmt.Errorf("%v: %s", err, out)}
	}
	res := make([]scans.Tensor, len(p.outs))
	for i, shape := range p.outs {
		if shape == nil {
			continue
		}
		h, err := readHost(filepath.Join(call, fmt.Sprintf("out%d", i)), dt, shape)
		if err != nil {
			return nil, err
		}
		res[i] = h
	}
	return res, nil
}

func (e *emuBackend) Run(c *scans.Call) ([]scans.Tensor, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	return e.run(c.Op, c.Dir, c.Dims, c.Args...)
}

// emulated returns a backend that runs the kernels in the host emulator
// with an H200's occupancy, or skips the test: on a machine with a CUDA
// device (gpuTest runs the kernels there) and in the build with the cuda
// tag (the emulated kernels run in the untagged build; the tagged build's
// TestFakeDriver runs them through the backend's driver calls).
func emulated(t *testing.T, gpuTest string) *emuBackend {
	t.Helper()
	if st, ok := gpuStatus(); ok {
		t.Skipf("a CUDA device is present (%s): %s runs the kernels on it", st, gpuTest)
	}
	if taggedBuild {
		t.Skip("the emulated kernels run in the untagged build (go test ./cuda)")
	}
	return &emuBackend{bin: emulator(t), dir: t.TempDir(), occ: h200}
}

// TestKernelsEmulated runs the quick conformance matrix (every operation,
// direction, element type and envelope block size, T across the chunk
// boundaries) on the kernels in the host emulator, against eager; the full
// matrix adds shapes, not paths, and runs on the GPU. The plans use an
// H200's occupancy, so T = 1000 with few lanes takes the 32-chunk paths.
//
// With -short it runs the typical f32 rows at T = 65 only: the emulation
// of every kernel takes minutes on a two-core machine, and the full tier
// runs the rest.
func TestKernelsEmulated(t *testing.T) {
	e := emulated(t, "TestConformance")
	if !testing.Short() {
		conformancetest.TestBackend(t, e, true)
		return
	}
	var cases []conformance.Case
	for _, c := range conformance.FilterCases(conformance.Cases(true), nil, []scans.DType{scans.F32}) {
		if c.Dims.T == 65 && c.Regime == bench.Typical {
			cases = append(cases, c)
		}
	}
	conformancetest.TestCases(t, e, cases)
}

// fullTier skips the rest of the emulated tests with -short (see
// TestKernelsEmulated).
func fullTier(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("the full tier runs it (go test without -short)")
	}
}

// TestSpecialValuesEmulated runs conformancetest.TestSpecialValues on the kernels in
// the host emulator: NaN, +Inf and -Inf in any input, through the chunked
// paths (the H200's occupancy chunks T = 300 with few lanes).
func TestSpecialValuesEmulated(t *testing.T) {
	fullTier(t)
	conformancetest.TestSpecialValues(t, emulated(t, "TestSpecialValues"))
}

// TestMingruRangeEmulated runs conformancetest.TestMingruRange on the
// kernels in the host emulator: mingru_scan's forward in its linear form
// and in the log-space walk it falls back to.
func TestMingruRangeEmulated(t *testing.T) {
	fullTier(t)
	conformancetest.TestMingruRange(t, emulated(t, "TestMingruRange"))
}

// TestMingruNegativeH0Emulated runs conformancetest.TestMingruNegativeH0
// on the kernels in the host emulator.
func TestMingruNegativeH0Emulated(t *testing.T) {
	fullTier(t)
	conformancetest.TestMingruNegativeH0(t, emulated(t, "TestMingruNegativeH0"))
}

// TestLogRangeEmulated runs conformancetest.TestLogRange on the kernels in the host
// emulator: parallel_scan_log far outside the benchmark's inputs.
func TestLogRangeEmulated(t *testing.T) {
	fullTier(t)
	conformancetest.TestLogRange(t, emulated(t, "TestLogRange"))
}

// TestHalfValuesEmulated runs conformancetest.TestHalfValues on the kernels in the
// host emulator (the software conversions of common.cuh).
func TestHalfValuesEmulated(t *testing.T) {
	fullTier(t)
	conformancetest.TestHalfValues(t, emulated(t, "TestHalfValues"))
}

// TestGivensAnglesEmulated runs conformancetest.TestGivensAngles on the kernels in
// the host emulator: angles far outside (-pi, pi), through the fast paths'
// reductions (the C library's sine and cosine stand in for the GPU's),
// in the chunked kernels (an H200's plans) and in those that walk all of
// T per thread (a device so small that its plans keep one chunk), whose
// forward runs a round again when one of its angles was beyond the fast
// path.
func TestGivensAnglesEmulated(t *testing.T) {
	fullTier(t)
	t.Run("chunked", func(t *testing.T) {
		conformancetest.TestGivensAngles(t, emulated(t, "TestGivensAngles"), false)
	})
	t.Run("unchunked", func(t *testing.T) {
		e := emulated(t, "TestGivensAngles")
		e.occ = unchunkedOcc
		if c := givensChunks(3, 300, 4, 4, e.occ); c != 1 {
			t.Fatalf("givensChunks = %d, want 1", c)
		}
		conformancetest.TestGivensAngles(t, e, false)
	})
}

// unchunkedOcc is a device so small that givensChunks keeps one chunk for
// the shapes of the emulated Givens tests.
var unchunkedOcc = occupancy{threads: 64, blocks: 132 * 32, sms: 132}

// TestGivensUnchunkedEmulated runs the Givens kernels that walk all of T
// per thread on T long enough for their main loops (the ring's steady
// state), which the conformance matrix's few-lane shapes reach only
// through the chunked kernels: the plans use a device so small that
// givensChunks keeps one chunk.
func TestGivensUnchunkedEmulated(t *testing.T) {
	fullTier(t)
	e := emulated(t, "TestConformance")
	e.occ = unchunkedOcc
	ref := eager.New()
	seed := conformancetest.TestSeed()
	t.Logf("seed %d", seed)
	for _, k := range []int{2, 8} {
		d := scans.Dims{B: 1, T: 200, N: 3, K: k, V: 1}
		if c := givensChunks(d.B, d.T, d.N, d.K, e.occ); c != 1 {
			t.Fatalf("givensChunks = %d, want 1", c)
		}
		for _, dt := range scans.DTypes {
			for _, dir := range []scans.Direction{scans.Forward, scans.Backward} {
				c := conformance.Case{Op: scans.OpGivensScan, Dir: dir, Dims: d, DType: dt, Regime: bench.Typical, Init: true}
				if r := conformance.CheckCase(e, ref, c, seed); !r.Pass {
					t.Errorf("%s", r.Summary())
				}
			}
		}
	}
}

// pairsOcc is a device small enough that the 16-bit parallel_scan_log
// forward takes its two-channel kernel (logPairs) on the few lanes of
// checkLogPairs' shapes, with 4 chunks, and the 16-bit linear_scan
// forward its own (linearPairs) on checkLinearPairs'.
var pairsOcc = occupancy{threads: 384, blocks: 132 * 32, sms: 132}

// checkLogPairs runs the 16-bit parallel_scan_log forward through its
// two-channel kernel, which the conformance shapes (few lanes, many chunks
// on a real device) do not reach: b must plan with pairsOcc. It checks
// that the plans take that kernel, with and without chunks, then the
// benchmark's inputs against eager (a partial tile of channels, T across
// the chunk boundaries) and conformancetest.TestLogRange's (its chunks on both sides
// of the closed form's bounds).
func checkLogPairs(t *testing.T, b scans.Backend) {
	t.Helper()
	for _, c := range []struct {
		d      scans.Dims
		chunks int
	}{{scans.Dims{B: 3, T: 300, N: 38, K: 1, V: 1}, 4}, {scans.Dims{B: 3, T: 300, N: 4, K: 1, V: 1}, 4},
		{scans.Dims{B: 3, T: 40, N: 38, K: 1, V: 1}, 2}, {scans.Dims{B: 3, T: 17, N: 38, K: 1, V: 1}, 1}} {
		if p := planFor(scans.OpParallelScanLog, scans.Forward, c.d, scans.F16, false, pairsOcc); !p.pairs || p.by != c.chunks {
			t.Fatalf("%v: pairs %v, %d chunks; want the two-channel kernel with %d", c.d, p.pairs, p.by, c.chunks)
		}
	}
	ref := eager.New()
	seed := conformancetest.TestSeed()
	t.Logf("seed %d", seed)
	for _, T := range []int{1, 17, 40, 300} {
		for _, dt := range []scans.DType{scans.F16, scans.BF16} {
			d := scans.Dims{B: 3, T: T, N: 38, K: 1, V: 1}
			c := conformance.Case{Op: scans.OpParallelScanLog, Dir: scans.Forward, Dims: d, DType: dt, Regime: bench.Typical, Init: true}
			if r := conformance.CheckCase(b, ref, c, seed); !r.Pass {
				t.Errorf("%s", r.Summary())
			}
		}
	}
	conformancetest.TestLogRange(t, b)
}

// checkLinearPairs runs the 16-bit linear_scan forward through its
// two-channel kernel, which the conformance shapes (few lanes, their
// chunks capped) do not reach on a real device (linearPairs): b must plan
// with pairsOcc, under which the two-channel kernel's lanes take twice
// the chunks. It checks that the plans take that kernel, and then the
// benchmark's inputs against eager, every 16-bit type, with and without
// h0, over one to four chunks and a partial tile of channels.
func checkLinearPairs(t *testing.T, b scans.Backend) {
	t.Helper()
	for _, d := range []scans.Dims{{B: 3, T: 300, N: 38, K: 1, V: 1}, {B: 3, T: 300, N: 4, K: 1, V: 1}} {
		if p := planFor(scans.OpLinearScan, scans.Forward, d, scans.F16, false, pairsOcc); !p.pairs || p.by < 2 {
			t.Fatalf("%v: pairs %v, %d chunks; want the two-channel kernel, chunked", d, p.pairs, p.by)
		}
	}
	ref := eager.New()
	seed := conformancetest.TestSeed()
	t.Logf("seed %d", seed)
	// One, two and four chunks; N = 4 keeps one lane a batch row (so two
	// channels a thread cost no threads even at one chunk), N = 38 a
	// partial tile of the 64 channels a two-channel lane holds.
	for _, tn := range [][2]int{{1, 4}, {17, 4}, {40, 4}, {65, 38}, {300, 38}, {300, 64}} {
		for _, dt := range []scans.DType{scans.F16, scans.BF16} {
			for _, init := range []bool{false, true} {
				d := scans.Dims{B: 3, T: tn[0], N: tn[1], K: 1, V: 1}
				if p := planFor(scans.OpLinearScan, scans.Forward, d, dt, init, pairsOcc); !p.pairs {
					t.Fatalf("%v %v: the one-channel kernel; want the two-channel one", d, dt)
				}
				c := conformance.Case{Op: scans.OpLinearScan, Dir: scans.Forward, Dims: d, DType: dt, Regime: bench.Typical, Init: init}
				if res := conformance.CheckCase(b, ref, c, seed); !res.Pass {
					t.Errorf("%s", res.Summary())
				}
			}
		}
	}
}

// TestLinearPairsEmulated runs checkLinearPairs on the kernels in the
// host emulator.
func TestLinearPairsEmulated(t *testing.T) {
	fullTier(t)
	e := emulated(t, "TestLinearPairs")
	e.occ = pairsOcc
	checkLinearPairs(t, e)
}

// TestLogPairsEmulated runs checkLogPairs on the kernels in the host
// emulator.
func TestLogPairsEmulated(t *testing.T) {
	fullTier(t)
	e := emulated(t, "TestLogPairs")
	e.occ = pairsOcc
	checkLogPairs(t, e)
}
