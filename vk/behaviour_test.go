//go:build cgo

package vk

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/conformance"
	"github.com/mingru/scans/eager"
)

func seeded(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, 0x5eed))
}

// smallCases are a few in-envelope rows of every operation, direction and
// element type, with and without the initial state, at lengths that give
// one chunk and several.
func smallCases(Ts []int) []conformance.Case {
	var out []conformance.Case
	for _, c := range conformance.Cases(false) {
		if c.OutOfEnvelope || c.Regime != bench.Typical {
			continue
		}
		keep := false
		for _, T := range Ts {
			keep = keep || c.Dims.T == T
		}
		if c.Op == scans.OpMatrixAffineScan && !(c.Dims.K == c.Dims.V || c.Dims.K == 1 || c.Dims.V == 1) {
			keep = false
		}
		if keep {
			out = append(out, c)
		}
	}
	return out
}

// TestPoisonedOutputs fills every output buffer with NaN before each kernel
// runs; a row passes only if every output element was written. (With
// -short, TestWrapBuffer's poisoned rows stand in for it.)
func TestPoisonedOutputs(t *testing.T) {
	fullTier(t)
	b := testBackend(t)
	b.poison = true
	ref := eager.New()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	cases := smallCases([]int{2, 65})
	pass := 0
	for _, c := range cases {
		r := conformance.CheckCase(b, ref, c, seed)
		if !r.Pass {
			t.Errorf("%s", r.Summary())
			continue
		}
		pass++
	}
	t.Logf("%d/%d rows with poisoned outputs pass", pass, len(cases))
}

// TestPoisonKnobFills proves the poisoning itself works: an output that no
// kernel writes reads back as NaN.
func TestPoisonKnobFills(t *testing.T) {
	b := testBackend(t)
	b.poison = true
	for _, dt := range scans.DTypes {
		out, err := b.newTensor(b.dev, dt, []int{3, 5})
		if err != nil {
			t.Fatal(err)
		}
		k := kernel{module: "empty", T: 1, N: 1, groupsPerBatch: 1}
		k.spec[specWG] = 1
		k.binds[0] = operand{buf: out.buf, stride: 5, esize: int64(dt.Size()), out: true, poison: poisonPattern(dt)}
		if err := b.dev.run([]kernel{k}, 3, true, &b.last); err != nil {
			t.Fatal(err)
		}
		h, err := b.Download(out)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range h.Float32s() {
			if !math.IsNaN(float64(v)) {
				t.Fatalf("%v: element %d is %v after poisoning, want NaN", dt, i, v)
			}
		}
		b.Release(out)
	}
}

func upload(t *testing.T, b scans.Backend, hs ...*scans.Host) []scans.Tensor {
	t.Helper()
	out := make([]scans.Tensor, len(hs))
	for i, h := range hs {
		if h == nil {
			continue
		}
		d, err := b.Upload(h)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = d
	}
	return out
}

func randomHost(rng *rand.Rand, dt scans.DType, shape ...int) *scans.Host {
	v := make([]float32, scans.NumElements(shape))
	for i := range v {
		v[i] = float32(0.5 + 0.5*rng.Float64())
	}
	h, _ := scans.Convert(dt, v, shape...)
	return h
}

// TestOutOfEnvelope: Supports and the operations decline with
// *scans.ScanFallback, and nothing runs or is allocated.
func TestOutOfEnvelope(t *testing.T) {
	b := testBackend(t)
	rng := seeded(t)
	for _, kv := range [][2]int{{3, 1}, {1, 5}, {5, 2}, {32, 1}, {16, 32}} {
		d := scans.Dims{B: 2, T: 3, N: 2, K: kv[0], V: kv[1]}
		var fb *scans.ScanFallback
		if err := b.Supports(scans.OpMatrixAffineScan, d, scans.F32); !errors.As(err, &fb) {
			t.Errorf("Supports(%v) = %v, want ScanFallback", d, err)
		}
		in := upload(t, b, randomHost(rng, scans.F32, 2, 3, 2, kv[0], kv[0]), randomHost(rng, scans.F32, 2, 3, 2, kv[0], kv[1]))
		held := b.dev.held
		before, _ := b.LastKernelTime()
		h, err := b.MatrixAffineScan(in[0], in[1], nil)
		if !errors.As(err, &fb) || h != nil {
			t.Errorf("MatrixAffineScan(%v) = %v, %v; want ScanFallback", d, h, err)
		}
		_, _, _, err = b.MatrixAffineScanBackward(in[0], in[1], nil, in[1], in[1])
		if !errors.As(err, &fb) {
			t.Errorf("MatrixAffineScanBackward(%v) = %v; want ScanFallback", d, err)
		}
		if after, _ := b.LastKernelTime(); after != before || b.dev.held != held {
			t.Errorf("%v: a declined call ran a kernel or kept memory", d)
		}
		for _, x := range in {
			b.Release(x)
		}
	}
	for _, k := range []int{3, 6, 32} {
		d := scans.Dims{B: 2, T: 3, N: 2, K: k, V: 1}
		var fb *scans.ScanFallback
		if err := b.Supports(scans.OpGivensScan, d, scans.F16); !errors.As(err, &fb) {
			t.Errorf("Supports(givens %v) = %v, want ScanFallback", d, err)
		}
		in := upload(t, b, randomHost(rng, scans.F16, 2, 3, 2, k-1), randomHost(rng, scans.F16, 2, 3, 2, k), randomHost(rng, scans.F16, 2, 3, 2, k))
		if _, err := b.GivensScan(in[0], in[1], in[2], nil); !errors.As(err, &fb) {
			t.Errorf("GivensScan(k=%d) = %v, want ScanFallback", k, err)
		}
		for _, x := range in {
			b.Release(x)
		}
	}
	for _, op := range scans.Ops {
		d := scans.Dims{B: 1, T: 1, N: 1, K: 1, V: 1}
		switch op {
		case scans.OpMatrixScan, scans.OpGivensScan:
			d.K = 2
		}
		if err := b.Supports(op, d, scans.BF16); err != nil {
			t.Errorf("Supports(%s, %v) = %v, want nil", op, d, err)
		}
	}
}

// TestForeignTensors: host tensors, tensors of another backend and
// released tensors are argument errors naming the argument.
func TestForeignTensors(t *testing.T) {
	b := testBackend(t)
	rng := seeded(t)
	ha, hb := randomHost(rng, scans.F32, 2, 3, 4), randomHost(rng, scans.F32, 2, 3, 4)
	var ae *scans.ArgError
	if _, err := b.LinearScan(ha, hb, nil); !errors.As(err, &ae) || ae.Arg != "a" {
		t.Errorf("host tensors: %v, want ArgError naming a", err)
	}
	d := upload(t, b, ha, hb)
	if _, err := b.LinearScan(d[0], hb, nil); !errors.As(err, &ae) || ae.Arg != "b" {
		t.Errorf("host b: %v, want ArgError naming b", err)
	}
	// The argument not on the backend is named whatever comes first.
	if _, err := b.LinearScan(ha, d[1], nil); !errors.As(err, &ae) || ae.Arg != "a" || !strings.Contains(err.Error(), "Upload") {
		t.Errorf("host a, device b: %v, want ArgError naming a", err)
	}
	if _, _, _, _, err := b.GivensScanBackward(d[0], d[1], d[0], ha, d[0], d[1]); !errors.As(err, &ae) || ae.Arg != "h0" {
		t.Errorf("host h0 among device tensors: %v, want ArgError naming h0", err)
	}
	other := New()
	od := upload(t, other, hb)
	if _, err := b.LinearScan(d[0], od[0], nil); !errors.As(err, &ae) || ae.Arg != "b" {
		t.Errorf("b of another backend: %v, want ArgError naming b", err)
	}
	other.Release(od[0])
	if err := b.Release(d[1]); err != nil {
		t.Fatal(err)
	}
	if err := b.Release(d[1]); err == nil {
		t.Error("second Release returned no error")
	}
	if _, err := b.LinearScan(d[0], d[1], nil); !errors.As(err, &ae) || ae.Arg != "b" {
		t.Errorf("released b: %v, want ArgError naming b", err)
	}
	if _, err := b.Download(d[1]); err == nil {
		t.Error("Download of a released tensor returned no error")
	}
	if _, err := b.LinearScan(d[0], d[0], randomHost(rng, scans.F32, 2, 5)); !errors.As(err, &ae) || ae.Arg != "h0" {
		t.Errorf("bad h0 shape: %v, want ArgError naming h0", err)
	}
	b.Release(d[0])
}

// TestMissingLoader: a loader that cannot be opened is a reason in Status,
// and operations report the backend unavailable.
func TestMissingLoader(t *testing.T) {
	b := New()
	b.cfg.loader = "libvulkan-not-installed.so.1"
	st := b.Status()
	if st.Available || !strings.HasPrefix(st.Reason, "Vulkan not available: ") || !strings.Contains(st.Reason, "libvulkan-not-installed.so.1") {
		t.Fatalf("Status = %+v, want unavailable naming the library", st)
	}
	t.Logf("%s", st)
	h, _ := scans.FromFloat32([]float32{1, 2}, 1, 2, 1)
	var ue *scans.UnavailableError
	if _, err := b.Upload(h); !errors.As(err, &ue) {
		t.Errorf("Upload = %v, want UnavailableError", err)
	}
	if _, err := b.LinearScan(h, h, nil); err == nil {
		t.Error("LinearScan on an unavailable backend returned no error")
	}
	if _, err := b.CopyBandwidth(1024); !errors.As(err, &ue) {
		t.Errorf("CopyBandwidth = %v, want UnavailableError", err)
	}
}

// TestNoDeviceSubprocess runs this test binary again with the loader
// pointed at no driver: Status must explain, not crash.
func TestNoDeviceSubprocess(t *testing.T) {
	if os.Getenv("MINGRU_VK_TEST_CHILD") == "1" {
		st := New().Status()
		if st.Available {
			t.Fatalf("a device was found without drivers: %s", st)
		}
		os.Stdout.WriteString("STATUS: " + st.String() + "\n")
		return
	}
	empty := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoDeviceSubprocess$", "-test.v")
	cmd.Env = append(os.Environ(),
		"MINGRU_VK_TEST_CHILD=1",
		"MINGRU_VK_VALIDATION=0",
		"VK_ICD_FILENAMES="+empty+"/none.json",
		"VK_DRIVER_FILES="+empty+"/none.json",
		"VK_LAYER_PATH="+empty,
		"LD_LIBRARY_PATH="+empty,
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child failed: %v\n%s", err, out)
	}
	i := strings.Index(string(out), "STATUS: ")
	if i < 0 {
		t.Fatalf("child printed no status:\n%s", out)
	}
	line := strings.SplitN(string(out[i:]), "\n", 2)[0]
	if !strings.Contains(line, "Vulkan not available: ") {
		t.Errorf("child status %q lacks the reason", line)
	}
	t.Log(line)
}

// TestDeviceChoice: MINGRU_VK_DEVICE by index and by name; an unknown name
// is a reason listing the devices.
func TestDeviceChoice(t *testing.T) {
	b := testBackend(t)
	name := b.Status().Device
	for _, want := range []string{"0", strings.ToUpper(strings.Fields(name)[0])} {
		c := New()
		c.cfg.device = want
		if st := c.Status(); !st.Available || st.Device == "" {
			t.Errorf("MINGRU_VK_DEVICE=%s: %s", want, st)
		}
	}
	c := New()
	c.cfg.device = "no-such-gpu-anywhere"
	st := c.Status()
	if st.Available || !strings.Contains(st.Reason, "no-such-gpu-anywhere") || !strings.Contains(st.Reason, name) {
		t.Errorf("unknown device: %s", st)
	}
	c = New()
	c.cfg.device = "99"
	if st := c.Status(); st.Available || !strings.Contains(st.Reason, "out of range") {
		t.Errorf("device 99: %s", st)
	}
}

// TestConcurrentCalls runs operations from several goroutines at once and
// checks each result against eager: the trimmed matrix's rows at T = 65,
// every operation, direction and type, on the kernels TestConformance
// builds anyway.
func TestConcurrentCalls(t *testing.T) {
	b := testBackend(t)
	ref := eager.New()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	var cases []conformance.Case
	for _, c := range conformance.Cases(true) {
		if !c.OutOfEnvelope && c.Regime == bench.Typical && c.Dims.T == 65 {
			cases = append(cases, c)
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	fails := 0
	workers := 6
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(cases); i += workers {
				r := conformance.CheckCase(b, ref, cases[i], seed+uint64(w))
				if !r.Pass {
					mu.Lock()
					fails++
					mu.Unlock()
					t.Errorf("%s", r.Summary())
				}
			}
		}(w)
	}
	wg.Wait()
	t.Logf("%d rows on %d goroutines, %d failed", len(cases), workers, fails)
}

// TestInstrumented: kernel times, peak bytes, copy bandwidth and dispatch
// latency are measured and plausible.
func TestInstrumented(t *testing.T) {
	b := testBackend(t)
	rng := seeded(t)
	b.ResetPeakBytes()
	base := b.PeakBytes()
	in := upload(t, b, randomHost(rng, scans.F32, 4, 100, 33), randomHost(rng, scans.F32, 4, 100, 33))
	h, err := b.LinearScan(in[0], in[1], nil)
	if err != nil {
		t.Fatal(err)
	}
	dt, ok := b.LastKernelTime()
	if !ok || dt <= 0 {
		t.Errorf("LastKernelTime = %v, %v", dt, ok)
	}
	want := int64(3 * 4 * 100 * 33 * 4)
	if p := b.PeakBytes() - base; p < want {
		t.Errorf("peak grew by %d bytes, want >= %d", p, want)
	}
	for _, x := range append(in, h) {
		b.Release(x)
	}
	b.ResetPeakBytes()
	if p := b.PeakBytes(); p != base {
		t.Errorf("after releasing everything the peak resets to %d, want %d", p, base)
	}
	bw, err := b.CopyBandwidth(1 << 20)
	if err != nil || bw <= 0 {
		t.Errorf("CopyBandwidth = %v, %v", bw, err)
	}
	lat, err := b.DispatchLatency()
	if err != nil || lat <= 0 || lat > time.Second {
		t.Errorf("DispatchLatency = %v, %v", lat, err)
	}
	t.Logf("kernel %v, copy %.2f GB/s, dispatch %v", dt, bw/1e9, lat)
}

// TestValidationMessagesAreRecorded proves the debug-report wiring: a
// message sent through the validation layer's callback chain reaches the
// recorder the other tests check.
func TestValidationMessagesAreRecorded(t *testing.T) {
	b := testBackend(t)
	if !b.dev.hasDebug {
		t.Skip("validation layer not enabled (MINGRU_VK_VALIDATION is not 1)")
	}
	vkDebugMessage(b.dev, "probe message from the test")
	msgs := validationMessages()
	found := false
	for _, m := range msgs {
		found = found || strings.Contains(m, "probe message from the test")
	}
	if !found {
		t.Fatalf("injected message not recorded; got %q", msgs)
	}
}

// TestPipelineLog: with MINGRU_VK_PIPELINE_LOG set, every pipeline a new
// backend builds is appended to the file once, with its build time (the
// f16 probes' when the device opens) and, on a device with
// VK_KHR_pipeline_executable_properties, the driver's statistics; a second
// call of the same shape builds none.
func TestPipelineLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pipelines.log")
	t.Setenv("MINGRU_VK_PIPELINE_LOG", path)
	testBackend(t) // skips without a device; checks the validation layer
	b := New()     // a device of its own, which reads the setting
	defer b.Close()
	rng := seeded(t)
	for i := 0; i < 2; i++ {
		in := upload(t, b, randomHost(rng, scans.F32, 3, 70, 9), randomHost(rng, scans.F32, 3, 70, 9))
		h, err := b.LinearScan(in[0], in[1], nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range append(in, h) {
			b.Release(x)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) == 0 || lines[0] == "" {
		t.Fatal("no pipeline logged")
	}
	seen := map[string]bool{}
	for _, l := range lines {
		f := strings.Split(l, "\t")
		// The probes' pipelines are built when the device opens (the
		// narrowing probe's not on a CPU device).
		probe := f[0] == "f16probe" || f[0] == "f16narrowprobe" || f[0] == "shuffleprobe"
		fields := 3
		if b.dev.pipeStats {
			fields = 4
		}
		if len(f) != fields || !(strings.HasPrefix(f[0], "linear_scan") || probe) || !strings.HasSuffix(f[2], " ms") {
			t.Errorf("log line %q: want module, spec constants, build time (and statistics: %v)", l, b.dev.pipeStats)
		} else if fields == 4 && !strings.Contains(f[3], "=") {
			t.Errorf("log line %q: the driver offers statistics, but none are logged", l)
		}
		if seen[f[0]+f[1]] {
			t.Errorf("pipeline %s %s built twice", f[0], f[1])
		}
		seen[f[0]+f[1]] = true
	}
	t.Logf("%d pipelines (driver statistics: %v): %q", len(lines), b.dev.pipeStats, lines)
}
