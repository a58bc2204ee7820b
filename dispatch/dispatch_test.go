package dispatch

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mingru/scans"
)

// warnings counts the warnings a Scanner issues.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) add(m string) { w.mu.Lock(); w.msgs = append(w.msgs, m); w.mu.Unlock() }
func (w *warnings) count() int   { w.mu.Lock(); defer w.mu.Unlock(); return len(w.msgs) }

func newRNG(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

func randHost(t *testing.T, rng *rand.Rand, lo, hi float32, shape ...int) *scans.Host {
	t.Helper()
	n := scans.NumElements(shape)
	v := make([]float32, n)
	for i := range v {
		v[i] = lo + (hi-lo)*rng.Float32()
	}
	h, err := scans.FromFloat32(v, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// linearInputs draws SPEC's benchmark distributions for linear_scan.
func linearInputs(t *testing.T, rng *rand.Rand, B, T, D int) (a, b, h0 *scans.Host) {
	return randHost(t, rng, 0.5, 1, B, T, D), randHost(t, rng, -2, 2, B, T, D), randHost(t, rng, -1, 1, B, D)
}

// affineInputs draws matrix_affine_scan inputs with block size k.
func affineInputs(t *testing.T, rng *rand.Rand, k int) (A, X *scans.Host) {
	return randHost(t, rng, -0.3, 0.3, 3, 5, 2, k, k), randHost(t, rng, -1, 1, 3, 5, 2, k, 2)
}

func sameHost(t *testing.T, got scans.Tensor, want *scans.Host) {
	t.Helper()
	g, ok := got.(*scans.Host)
	if !ok {
		t.Fatalf("got a %T on %s, want a host tensor", got, got.Location())
	}
	if g.Len() != want.Len() {
		t.Fatalf("got %v, want %v", g, want)
	}
	for i := 0; i < g.Len(); i++ {
		if x, y := g.At(i), want.At(i); x != y || math.IsNaN(float64(x)) {
			t.Fatalf("element %d: got %v, want %v", i, x, y)
		}
	}
}

func TestParseChoice(t *testing.T) {
	for in, want := range map[string]Choice{"": Auto, "auto": Auto, "eager": Eager, "cuda": CUDA, "triton": Triton, "vulkan": Vulkan, " Vulkan ": Vulkan, "EAGER": Eager} {
		got, err := ParseChoice(in)
		if err != nil || got != want {
			t.Errorf("ParseChoice(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err := ParseChoice("metal")
	if err == nil {
		t.Fatal("ParseChoice(metal) succeeded")
	}
	for _, c := range Choices {
		if !strings.Contains(err.Error(), string(c)) {
			t.Errorf("error %q does not list %q", err, c)
		}
	}
	if _, err := New("opencl"); err == nil {
		t.Error("New(opencl) succeeded")
	}
}

func TestEagerRunsReference(t *testing.T) {
	rng := newRNG(t)
	gpu := newFake("cuda")
	var w warnings
	s, _ := New(Eager, WithBackends(gpu.ref, gpu), WithWarnings(w.add))
	a, b, h0 := linearInputs(t, rng, 3, 7, 5)
	h, err := s.LinearScan(a, b, h0)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := gpu.ref.LinearScan(a, b, h0)
	sameHost(t, h, want.(*scans.Host))
	if gpu.runs.Load() != 0 || w.count() != 0 {
		t.Errorf("eager choice ran the GPU %d times and warned %d times", gpu.runs.Load(), w.count())
	}
}

func TestAutoPrefersAvailableGPU(t *testing.T) {
	rng := newRNG(t)
	cu, vkb := newFake("cuda"), newFake("vulkan")
	var w warnings
	s, _ := New(Auto, WithBackends(cu.ref, cu, vkb), WithWarnings(w.add))
	a, b, h0 := linearInputs(t, rng, 3, 9, 4)
	h, err := s.LinearScan(a, b, h0)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := cu.ref.LinearScan(a, b, h0)
	sameHost(t, h, want.(*scans.Host))
	if cu.runs.Load() != 1 || vkb.runs.Load() != 0 {
		t.Errorf("runs: cuda %d, vulkan %d; want 1, 0", cu.runs.Load(), vkb.runs.Load())
	}
	if n := cu.live.Load(); n != 0 {
		t.Errorf("%d device tensors left behind", n)
	}
	if w.count() != 0 {
		t.Errorf("warnings %v", w.msgs)
	}

	// Backward too, with every gradient back on the host.
	dh := randHost(t, rng, -1, 1, 3, 9, 4)
	da, db, dh0, err := s.LinearScanBackward(a, b, h0, h, dh)
	if err != nil {
		t.Fatal(err)
	}
	wa, wb, wh0, _ := cu.ref.LinearScanBackward(a, b, h0, h, dh)
	sameHost(t, da, wa.(*scans.Host))
	sameHost(t, db, wb.(*scans.Host))
	sameHost(t, dh0, wh0.(*scans.Host))
	// Without h0 the gradient of h0 is a nil interface.
	_, _, dh0, err = s.LinearScanBackward(a, b, nil, h, dh)
	if err != nil || dh0 != nil {
		t.Errorf("dh0 without h0 = %v, %v; want nil, nil", dh0, err)
	}
}

func TestAutoWarnsOncePerCause(t *testing.T) {
	rng := newRNG(t)
	cu := newFake("cuda")
	cu.reason = "CUDA not available: no device"
	vkb := newFake("vulkan")
	vkb.reason = "Vulkan not available: libvulkan.so.1 not found"
	var w warnings
	s, _ := New(Auto, WithBackends(cu.ref, cu, vkb), WithWarnings(w.add))
	a, b, _ := linearInputs(t, rng, 2, 3, 4)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.LinearScan(a, b, nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if w.count() != 1 {
		t.Fatalf("%d warnings, want 1: %q", w.count(), w.msgs)
	}
	for _, r := range []string{cu.reason, vkb.reason, "eager"} {
		if !strings.Contains(w.msgs[0], r) {
			t.Errorf("warning %q does not say %q", w.msgs[0], r)
		}
	}
}

func TestAutoFallsBackOutOfEnvelope(t *testing.T) {
	rng := newRNG(t)
	cu := newFake("cuda")
	cu.maxK = 2
	var w warnings
	s, _ := New(Auto, WithBackends(cu.ref, cu), WithWarnings(w.add))
	for i, k := range []int{4, 4, 8, 2, 8} {
		A, X := affineInputs(t, rng, k)
		H, err := s.MatrixAffineScan(A, X, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := cu.ref.MatrixAffineScan(A, X, nil)
		sameHost(t, H, want.(*scans.Host))
		wantWarn := []int{1, 1, 2, 2, 2}[i]
		if w.count() != wantWarn {
			t.Fatalf("after k=%d: %d warnings, want %d: %q", k, w.count(), wantWarn, w.msgs)
		}
	}
	if cu.runs.Load() != 1 {
		t.Errorf("GPU ran %d times, want 1 (only k=2 is in its envelope)", cu.runs.Load())
	}
	if !strings.Contains(w.msgs[0], "k=4") {
		t.Errorf("warning %q does not give the cause", w.msgs[0])
	}
}

func TestAutoFallsBackOnLaunchFailure(t *testing.T) {
	rng := newRNG(t)
	cu := newFake("cuda")
	cu.fail = &scans.KernelError{Backend: "cuda", Op: scans.OpLinearScan, Err: errors.New("device lost")}
	var w warnings
	s, _ := New(Auto, WithBackends(cu.ref, cu), WithWarnings(w.add))
	a, b, h0 := linearInputs(t, rng, 2, 5, 3)
	for range 3 {
		h, err := s.LinearScan(a, b, h0)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := cu.ref.LinearScan(a, b, h0)
		sameHost(t, h, want.(*scans.Host))
	}
	if w.count() != 1 || !strings.Contains(w.msgs[0], "device lost") {
		t.Errorf("warnings %q, want one naming the cause", w.msgs)
	}
	if n := cu.live.Load(); n != 0 {
		t.Errorf("%d device tensors left behind after failures", n)
	}
}

func TestForcedBackendNeverDowngrades(t *testing.T) {
	rng := newRNG(t)
	a, b, h0 := linearInputs(t, rng, 2, 4, 3)

	cu := newFake("cuda")
	cu.reason = "CUDA not available: no device"
	for _, c := range []Choice{CUDA, Triton} {
		s, _ := New(c, WithBackends(cu.ref, cu))
		_, err := s.LinearScan(a, b, h0)
		var ue *scans.UnavailableError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), cu.reason) {
			t.Errorf("%s with CUDA unavailable: err = %v, want UnavailableError with the reason", c, err)
		}
	}

	vkb := newFake("vulkan")
	vkb.maxK = 2
	s, _ := New(Vulkan, WithBackends(vkb.ref, vkb))
	A, X := affineInputs(t, rng, 4)
	_, err := s.MatrixAffineScan(A, X, nil)
	var fb *scans.ScanFallback
	if !errors.As(err, &fb) {
		t.Errorf("vulkan out of envelope: err = %v, want ScanFallback", err)
	}

	vkb.maxK, vkb.fail = 0, &scans.KernelError{Backend: "vulkan", Err: errors.New("out of device memory")}
	if _, err := s.LinearScan(a, b, h0); err == nil || !strings.Contains(err.Error(), "out of device memory") {
		t.Errorf("vulkan launch failure: err = %v, want it returned", err)
	}

	// A backend this program lacks.
	s, _ = New(CUDA, WithBackends(vkb.ref, vkb))
	if _, err := s.LinearScan(a, b, h0); err == nil {
		t.Error("cuda forced without a cuda backend succeeded")
	}
}

func TestTritonIsCUDA(t *testing.T) {
	rng := newRNG(t)
	cu, vkb := newFake("cuda"), newFake("vulkan")
	s, _ := New(Triton, WithBackends(cu.ref, vkb, cu))
	a, b, h0 := linearInputs(t, rng, 1, 2, 3)
	if _, err := s.LinearScan(a, b, h0); err != nil {
		t.Fatal(err)
	}
	if cu.runs.Load() != 1 || vkb.runs.Load() != 0 {
		t.Errorf("triton ran cuda %d and vulkan %d times", cu.runs.Load(), vkb.runs.Load())
	}
}

func TestSoftwareDeviceOnlyWhenForced(t *testing.T) {
	rng := newRNG(t)
	vkb := newFake("vulkan")
	vkb.software = true
	var w warnings
	auto, _ := New(Auto, WithBackends(vkb.ref, vkb), WithWarnings(w.add))
	a, b, h0 := linearInputs(t, rng, 2, 3, 4)
	if _, err := auto.LinearScan(a, b, h0); err != nil {
		t.Fatal(err)
	}
	if vkb.runs.Load() != 0 || w.count() != 1 {
		t.Errorf("auto ran a CPU Vulkan device %d times (warnings %q)", vkb.runs.Load(), w.msgs)
	}
	forced, _ := New(Vulkan, WithBackends(vkb.ref, vkb))
	if _, err := forced.LinearScan(a, b, h0); err != nil {
		t.Fatal(err)
	}
	if vkb.runs.Load() != 1 {
		t.Errorf("forced vulkan ran %d times, want 1", vkb.runs.Load())
	}
}

func TestDeviceResidentInputsStay(t *testing.T) {
	rng := newRNG(t)
	vkb := newFake("vulkan")
	vkb.maxK = 2
	var w warnings
	s, _ := New(Auto, WithBackends(vkb.ref, newFake("cuda"), vkb), WithWarnings(w.add))

	a, b, h0 := linearInputs(t, rng, 2, 6, 3)
	da, _ := vkb.Upload(a)
	db, _ := vkb.Upload(b)
	h, err := s.LinearScan(da, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if h.Location() != "vulkan" {
		t.Fatalf("output on %s, want vulkan where the inputs live", h.Location())
	}
	got, _ := vkb.Download(h)
	want, _ := vkb.ref.LinearScan(a, b, nil)
	sameHost(t, got, want.(*scans.Host))

	// Out of the device's envelope: eager computes, the result goes back.
	A, X := affineInputs(t, rng, 4)
	dA, _ := vkb.Upload(A)
	dX, _ := vkb.Upload(X)
	before := vkb.live.Load()
	H, err := s.MatrixAffineScan(dA, dX, nil)
	if err != nil {
		t.Fatal(err)
	}
	if H.Location() != "vulkan" || vkb.live.Load() != before+1 {
		t.Errorf("fallback result on %s with %d new device tensors, want vulkan and 1", H.Location(), vkb.live.Load()-before)
	}
	gotH, _ := vkb.Download(H)
	wantH, _ := vkb.ref.MatrixAffineScan(A, X, nil)
	sameHost(t, gotH, wantH.(*scans.Host))

	// Mixing host and device tensors is an argument error.
	_, err = s.LinearScan(da, b, h0)
	var ae *scans.ArgError
	if !errors.As(err, &ae) || ae.Arg != "b" {
		t.Errorf("mixed locations: err = %v, want an ArgError naming b", err)
	}
}

func TestBadInputErrors(t *testing.T) {
	rng := newRNG(t)
	s, _ := New(Eager)
	a, b, _ := linearInputs(t, rng, 2, 3, 4)
	wrong := randHost(t, rng, 0, 1, 2, 3, 5)
	cases := []struct {
		name, arg string
		call      func() error
	}{
		{"b shape", "b", func() error { _, err := s.LinearScan(a, wrong, nil); return err }},
		{"nil a", "a", func() error { _, err := s.LinearScan(nil, b, nil); return err }},
		{"typed nil b", "b", func() error { var p *scans.Host; _, err := s.LinearScan(a, p, nil); return err }},
		{"h0 shape", "h0", func() error { _, err := s.LinearScan(a, b, wrong); return err }},
		{"dtype mix", "b", func() error {
			b16, _ := scans.Convert(scans.F16, b.Float32s(), 2, 3, 4)
			_, err := s.LinearScan(a, b16, nil)
			return err
		}},
		{"log_values T+1", "log_values", func() error { _, err := s.ParallelScanLog(a, b); return err }},
		{"givens theta", "theta", func() error {
			sig := randHost(t, rng, 0.5, 1, 2, 3, 1, 4)
			_, err := s.GivensScan(sig, sig, sig, nil)
			return err
		}},
	}
	for _, c := range cases {
		err := c.call()
		var ae *scans.ArgError
		if !errors.As(err, &ae) || ae.Arg != c.arg {
			t.Errorf("%s: err = %v, want an ArgError naming %s", c.name, err, c.arg)
		}
	}
}

// TestDefaultInvalidEnv runs this test binary again with MINGRU_SCAN set to
// a bad value: every package-level call must return the error.
func TestDefaultInvalidEnv(t *testing.T) {
	if os.Getenv("DISPATCH_TEST_CHILD") == "invalid" {
		a, _ := scans.FromFloat32([]float32{0.5}, 1, 1, 1)
		_, err := LinearScan(a, a, nil)
		if err == nil || !strings.Contains(err.Error(), "vulkan") || !strings.Contains(err.Error(), "auto") {
			t.Fatalf("LinearScan with MINGRU_SCAN=opencl: err = %v", err)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDefaultInvalidEnv$", "-test.v")
	cmd.Env = append(os.Environ(), "DISPATCH_TEST_CHILD=invalid", EnvVar+"=opencl")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// TestImportTouchesNoDriver loads the package, makes its backends and
// checks with the dynamic loader's trace that no Vulkan or CUDA driver
// library was opened; then asks for their status, which may open them.
func TestImportTouchesNoDriver(t *testing.T) {
	switch os.Getenv("DISPATCH_TEST_CHILD") {
	case "construct":
		_ = Backends()
		os.Stderr.WriteString("MARK:constructed\n")
		return
	case "status":
		_ = Backends()
		os.Stderr.WriteString("MARK:constructed\n")
		for _, st := range Statuses() {
			os.Stderr.WriteString("MARK:status " + st.String() + "\n")
		}
		return
	}
	run := func(mode string) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestImportTouchesNoDriver$")
		cmd.Env = append(os.Environ(), "DISPATCH_TEST_CHILD="+mode, "LD_DEBUG=files")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child %s: %v\n%s", mode, err, out)
		}
		return string(out)
	}
	out := run("construct")
	if !strings.Contains(out, "MARK:constructed") {
		t.Fatalf("child printed no mark:\n%s", out)
	}
	if strings.Contains(out, "libvulkan") {
		t.Errorf("making the backends opened the Vulkan loader:\n%s", grepLines(out, "libvulkan"))
	}
	out = run("status")
	after := out[strings.Index(out, "MARK:constructed"):]
	if strings.Contains(out[:strings.Index(out, "MARK:constructed")], "libvulkan") {
		t.Errorf("Vulkan loader opened before first use")
	}
	t.Logf("statuses:\n%s", grepLines(after, "MARK:status"))
	if !strings.Contains(after, "MARK:status") {
		t.Errorf("no statuses printed")
	}
	// The trace must see the loader once Vulkan is used; otherwise this
	// test could not have seen it being opened too early either.
	if strings.Contains(after, "MARK:status vulkan: available") && !strings.Contains(after, "libvulkan") {
		t.Errorf("Vulkan is available but the loader trace never showed libvulkan: LD_DEBUG not working")
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// The backends that register themselves come in rank order: the
// reference first, then CUDA, then Vulkan.
func TestBackendsRegistered(t *testing.T) {
	var names []string
	for _, b := range Backends() {
		names = append(names, b.Name())
	}
	if want := []string{"eager", "cuda", "vulkan"}; !slices.Equal(names, want) {
		t.Errorf("backends %v, want %v", names, want)
	}
}
