package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/conformance"
	"github.com/mingru/scans/eager"
	"github.com/mingru/scans/reference"
)

// fakeGPU is eager dressed as an instrumented GPU backend: it declines
// shapes outside the envelope, counts the bytes of the tensors it was
// given (its "device memory") and reports a fixed kernel time, so the
// command's GPU paths run without a GPU. With perturb it corrupts one
// element of every download.
type fakeGPU struct {
	*eager.Backend
	perturb bool

	mu         sync.Mutex
	held, peak int64
	sizes      map[scans.Tensor]int64
}

func newFake(perturb bool) *fakeGPU {
	return &fakeGPU{Backend: eager.New(), perturb: perturb, sizes: map[scans.Tensor]int64{}}
}

func (f *fakeGPU) Name() string { return "fakegpu" }

func (f *fakeGPU) Status() scans.Status {
	return scans.Status{Backend: "fakegpu", Available: true, Device: "Fake Device 9000", Driver: "driver 1.0, API 1.3"}
}

func (f *fakeGPU) Supports(op scans.Op, d scans.Dims, dt scans.DType) error {
	if !conformance.InEnvelope(op, d) {
		return &scans.ScanFallback{Backend: "fakegpu", Op: op, Reason: d.String()}
	}
	if n, _ := bench.Traffic(op, d, dt, bench.ModeBackward); n > fakeMemory {
		return fmt.Errorf("fakegpu: %s at %v needs %d bytes, the device has %d", op, d, n, fakeMemory)
	}
	return nil
}

// fakeMemory is the fake device's memory: the large shape does not fit.
const fakeMemory = 1 << 30

func (f *fakeGPU) Upload(h *scans.Host) (scans.Tensor, error) {
	t, err := f.Backend.Upload(h)
	if err == nil {
		f.mu.Lock()
		f.sizes[t] = int64(h.Bytes())
		f.held += int64(h.Bytes())
		f.peak = max(f.peak, f.held)
		f.mu.Unlock()
	}
	return t, err
}

func (f *fakeGPU) Release(t scans.Tensor) error {
	f.mu.Lock()
	f.held -= f.sizes[t]
	delete(f.sizes, t)
	f.mu.Unlock()
	return nil
}

func (f *fakeGPU) Download(t scans.Tensor) (*scans.Host, error) {
	h, err := f.Backend.Download(t)
	if err == nil && f.perturb {
		h.Set(0, h.At(0)+1)
		h.Set(h.Len()-1, float32(math.NaN()))
	}
	return h, err
}

// Run declines the shapes outside the envelope and runs the rest on eager.
func (f *fakeGPU) Run(c *scans.Call) ([]scans.Tensor, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if !conformance.InEnvelope(c.Op, c.Dims) {
		return nil, &scans.ScanFallback{Backend: "fakegpu", Op: c.Op, Reason: c.Dims.String()}
	}
	return f.Backend.Run(c)
}

func (f *fakeGPU) LastKernelTime() (time.Duration, bool) { return 10 * time.Microsecond, true }
func (f *fakeGPU) PeakBytes() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.peak
}
func (f *fakeGPU) ResetPeakBytes() {
	f.mu.Lock()
	f.peak = f.held
	f.mu.Unlock()
}
func (f *fakeGPU) CopyBandwidth(bytes int64) (float64, error) { return 100e9, nil }
func (f *fakeGPU) DispatchLatency() (time.Duration, error)    { return 5 * time.Microsecond, nil }

var _ scans.Instrumented = (*fakeGPU)(nil)

// withBackends runs the command's logic with the given backends.
func withBackends(t *testing.T, bs ...scans.Backend) {
	t.Helper()
	old := compiledBackends
	compiledBackends = func() []scans.Backend { return bs }
	t.Cleanup(func() { compiledBackends = old })
}

func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	t.Logf("scanbench %s: exit %d\nstdout:\n%s\nstderr (tail):\n%s", strings.Join(args, " "), code, out.String(), tail(errb.String(), 2000))
	return code, out.String(), errb.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

func readJSON(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

func checkMarkdown(t *testing.T, file, title string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.HasPrefix(s, "# "+title) {
		t.Errorf("%s starts with %q, want %q", file, s[:min(len(s), 40)], "# "+title)
	}
	for _, want := range []string{"| Go |", "| OS/arch |", "| date (UTC) |", "| commit |", "| backend "} {
		if !strings.Contains(s, want) {
			t.Errorf("%s: machine header lacks %q", file, want)
		}
	}
	return s
}

func TestCheckEndToEnd(t *testing.T) {
	withBackends(t, eager.New(), newFake(false))
	dir := t.TempDir()
	code, stdout, stderr := runCmd(t, "--check", "--quick", "--ops", "linear_scan,givens_scan", "--dtypes", "f32,f16", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(stderr, "backend fakegpu: found") {
		t.Error("stderr does not report the backend's status")
	}
	var rep parityReport
	readJSON(t, filepath.Join(dir, "scan_parity.json"), &rep)
	if len(rep.Rows) == 0 || len(rep.Summary) != 2 {
		t.Fatalf("%d rows, %d summaries", len(rep.Rows), len(rep.Summary))
	}
	fallbacks := 0
	for _, r := range rep.Rows {
		if !r.Pass {
			t.Errorf("row failed: %s", r.Summary())
		}
		if r.Backend == "fakegpu" && r.FallbackGot {
			fallbacks++
		}
	}
	if fallbacks == 0 {
		t.Error("no fallback row for the GPU-like backend")
	}
	for _, s := range rep.Summary {
		want := map[string]string{"eager": reference.Name, "fakegpu": "eager"}[s.Backend]
		if s.Reference != want {
			t.Errorf("%s checked against %s, want %s", s.Backend, s.Reference, want)
		}
	}
	if rep.Machine.Commit == "" || rep.Machine.Date == "" || len(rep.Machine.Backends) != 2 {
		t.Errorf("machine: %+v", rep.Machine)
	}
	md := checkMarkdown(t, filepath.Join(dir, "scan_parity.md"), "Scan parity")
	if !strings.Contains(md, "Fake Device 9000") || !strings.Contains(md, "driver 1.0") {
		t.Error("the markdown does not name the device and driver")
	}
	if !strings.Contains(stdout, "rows=") {
		t.Error("stdout has no summary")
	}
}

func TestCheckFailsOnWrongBackend(t *testing.T) {
	withBackends(t, eager.New(), newFake(true))
	dir := t.TempDir()
	code, _, _ := runCmd(t, "--check", "--quick", "--ops", "linear_scan", "--dtypes", "f32", "--backends", "fakegpu", "--out", dir)
	if code != 1 {
		t.Fatalf("exit %d for a wrong backend, want 1", code)
	}
	var rep parityReport
	readJSON(t, filepath.Join(dir, "scan_parity.json"), &rep)
	if len(rep.Summary) != 1 || rep.Summary[0].Failed != rep.Summary[0].Rows {
		t.Fatalf("summary %+v, want every row failing", rep.Summary)
	}
	for _, r := range rep.Rows {
		if r.Pass || !math.IsInf(r.Ratio, 1) {
			t.Errorf("%s: pass=%v ratio=%g, want a failure with an infinite ratio (NaN output)", r.Case, r.Pass, r.Ratio)
		}
	}
	if md := checkMarkdown(t, filepath.Join(dir, "scan_parity.md"), "Scan parity"); !strings.Contains(md, "## Failing rows") {
		t.Error("no failing-rows section")
	}
}

func TestBenchEndToEnd(t *testing.T) {
	withBackends(t, eager.New(), newFake(false))
	dir := t.TempDir()
	code, stdout, _ := runCmd(t, "--bench", "--quick", "--shapes", "lab,large", "--ops", "linear_scan,givens_scan", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var rep benchReport
	readJSON(t, filepath.Join(dir, "scan_bench.json"), &rep)
	// 2 backends x 2 shapes x 2 ops x 2 modes.
	if len(rep.Rows) != 16 {
		t.Fatalf("%d rows, want 16", len(rep.Rows))
	}
	for _, m := range rep.Rows {
		switch {
		case m.Backend == "eager" && m.Shape == "large":
			if m.Skipped == "" {
				t.Errorf("eager ran the large shape")
			}
		case m.Shape == "large":
			if !strings.Contains(m.Skipped, "the device has") {
				t.Errorf("fake GPU at the large shape: skipped %q, want the reason it does not fit", m.Skipped)
			}
		case m.Skipped != "":
			t.Errorf("%s %s %s %s skipped: %s", m.Backend, m.Shape, m.Op, m.Mode, m.Skipped)
		case m.Median <= 0 || m.P10 > m.Median || m.Median > m.P90 || m.GBps <= 0 || m.FracCopy <= 0 || m.Floor <= 0:
			t.Errorf("bad measurement %+v", m)
		case m.Backend == "fakegpu" && (m.Clock != "device" || m.Speedup <= 0 || math.Abs(m.CopyGBps-100) > 1e-9):
			t.Errorf("GPU-like row: clock %s, speedup %g, copy %g", m.Clock, m.Speedup, m.CopyGBps)
		case m.Backend == "eager" && m.Clock != "wall":
			t.Errorf("eager clock %s", m.Clock)
		}
	}
	md := checkMarkdown(t, filepath.Join(dir, "scan_bench.md"), "Scan benchmarks")
	if !strings.Contains(md, "skipped: "+eagerSkip) || !strings.Contains(md, "forward+backward  = forward") {
		t.Error("the markdown lacks the skip reason or the byte formula")
	}
	f, err := os.Open(filepath.Join(dir, "scan_bench.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if img, err := png.Decode(f); err != nil || img.Bounds().Dx() < 100 {
		t.Errorf("scan_bench.png: %v", err)
	}
	if !strings.Contains(stdout, "givens_scan") {
		t.Error("stdout has no table")
	}
}

func TestMemoryEndToEnd(t *testing.T) {
	withBackends(t, eager.New(), newFake(false))
	dir := t.TempDir()
	code, _, _ := runCmd(t, "--memory", "--quick", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var rep memoryReport
	readJSON(t, filepath.Join(dir, "scan_memory.json"), &rep)
	if len(rep.Rows) != 2 {
		t.Fatalf("%d rows", len(rep.Rows))
	}
	for _, r := range rep.Rows {
		if r.Skipped != "" || r.Fused <= 0 || r.Generic <= r.Fused {
			t.Errorf("%+v", r)
		}
		if !(r.FusedTime > 0) || !(r.GenericTime > 0) || r.Clock == "" {
			t.Errorf("%s: paths not timed: fused %g s, generic %g s, clock %q", r.Backend, r.FusedTime, r.GenericTime, r.Clock)
		}
		want := map[string]string{"eager": "host bytes (computed)", "fakegpu": "device peak"}[r.Backend]
		if r.Kind != want {
			t.Errorf("%s: kind %q, want %q", r.Backend, r.Kind, want)
		}
	}
	checkMarkdown(t, filepath.Join(dir, "scan_memory.md"), "Givens backward memory")
}

func TestFlags(t *testing.T) {
	withBackends(t, eager.New())
	if code, _, stderr := runCmd(t, "--help"); code != 0 || !strings.Contains(stderr, "--check") || !strings.Contains(stderr, "Example:") {
		t.Errorf("--help: exit %d", code)
	}
	for _, args := range [][]string{
		{"--backends", "nope"},
		{"--ops", "nope"},
		{"--shapes", "huge"},
		{"--dtypes", "f64"},
		{"stray"},
	} {
		if code, _, _ := runCmd(t, append(args, "--out", t.TempDir())...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	c, err := parseFlags(nil, &bytes.Buffer{})
	if err != nil || !c.check || !c.quick || c.bench || c.memory {
		t.Errorf("no flags: %+v, %v; want --check --quick", c, err)
	}
}

// softGPU is fakeGPU reporting itself a CPU device.
type softGPU struct{ *fakeGPU }

func (s softGPU) Name() string { return "softgpu" }
func (s softGPU) Status() scans.Status {
	st := s.fakeGPU.Status()
	st.Backend, st.Software = "softgpu", true
	return st
}

// With no flags scanbench runs the quick check on every available backend
// but one that runs on the CPU, and says what to run next; named, the CPU
// backend runs.
func TestDefaultRunSkipsCPUDevices(t *testing.T) {
	withBackends(t, eager.New(), softGPU{newFake(false)})
	dir := t.TempDir()
	// The default mode on one op: which backends run does not depend on it.
	code, stdout, stderr := runCmd(t, "--ops", "linear_scan", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(stderr, "softgpu runs on the CPU: not run unless named") || strings.Contains(stdout, "check softgpu") {
		t.Error("the CPU backend ran without being named")
	}
	if !strings.Contains(stdout, "scanbench --check ") || !strings.Contains(stdout, "scanbench --bench") {
		t.Error("the default run does not say how to run the full check and the benchmark")
	}
	code, stdout, _ = runCmd(t, "--check", "--quick", "--ops", "linear_scan", "--backends", "eager,softgpu", "--out", dir)
	if code != 0 || !strings.Contains(stdout, "check softgpu") {
		t.Errorf("named, the CPU backend did not run (exit %d)", code)
	}
}

func TestStepEndToEnd(t *testing.T) {
	withBackends(t, eager.New(), newFake(false))
	dir := t.TempDir()
	// The flags' path, on a shape small enough for the race detector.
	c, err := parseFlags([]string{"--step", "--quick", "--shapes", "lab", "--out", dir}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	c.shapes = []bench.Shape{{Name: "tiny", B: 2, T: 9, D: 5, MatrixN: 2, AffineN: 1, AffineK: 2, AffineV: 2, GivensN: 1, GivensK: 2}}
	var stdout, stderr bytes.Buffer
	if code, err := execute(c, &stdout, &stderr); code != 0 || err != nil {
		t.Fatalf("exit %d: %v\n%s", code, err, stderr.String())
	}
	var rep stepReport
	readJSON(t, filepath.Join(dir, "scan_step.json"), &rep)
	if len(rep.Rows) != 2 {
		t.Fatalf("%d rows, want 2 (two backends, one shape)", len(rep.Rows))
	}
	for _, r := range rep.Rows {
		switch {
		case r.Shape != "tiny":
			t.Errorf("row at shape %q, want tiny", r.Shape)
		case r.Backend == "eager" && (r.Skipped != "" || !(r.SyncWall > 0) || !(r.QueueWall > 0) || r.Calls != 4*bench.StepLayers):
			t.Errorf("eager step: %+v", r)
		case r.Backend != "eager" && r.Skipped == "" && !(r.KernelSum > 0):
			t.Errorf("%s step: neither skipped nor timed: %+v", r.Backend, r)
		}
	}
	if !strings.Contains(stdout.String(), "step eager") {
		t.Error("stdout has no step table")
	}
	checkMarkdown(t, filepath.Join(dir, "scan_step.md"), "Training step")
}

func TestDeviceFlags(t *testing.T) {
	withBackends(t, eager.New(), newFake(false))
	if code, _, _ := runCmd(t, "--list-devices"); code != 0 {
		t.Errorf("--list-devices: exit %d", code)
	}
	for _, bad := range []string{"foo=1", "vulkan", "cuda="} {
		if code, _, stderr := runCmd(t, "--device", bad); code != 2 || !strings.Contains(stderr, "--device") {
			t.Errorf("--device %s: exit %d, want 2 and an error naming --device", bad, code)
		}
	}
	t.Setenv("MINGRU_VK_DEVICE", "")
	t.Setenv("MINGRU_CUDA_DEVICE", "")
	if code, _, _ := runCmd(t, "--device", "vk=3,cuda=1", "--list-devices"); code != 0 {
		t.Fatalf("--device vk=3,cuda=1: exit %d", code)
	}
	if v, c := os.Getenv("MINGRU_VK_DEVICE"), os.Getenv("MINGRU_CUDA_DEVICE"); v != "3" || c != "1" {
		t.Errorf("--device vk=3,cuda=1 set MINGRU_VK_DEVICE=%q MINGRU_CUDA_DEVICE=%q", v, c)
	}
}

// TestFusion checks the fused-against-chain comparison on measured rows:
// one pair per backend, shape and type where both ops ran forward and
// backward, the chain bounded below by the scan plus the gates' bytes at
// copy bandwidth and a launch per gate pass; rows without a partner, skipped or forward-only, pair
// with nothing.
func TestFusion(t *testing.T) {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 5))
	d, _ := bench.NormalizeDims(scans.OpMingruScan, bench.Shapes[0].Dims(scans.OpMingruScan))
	row := func(backend string, op scans.Op, mode bench.Mode, dt scans.DType) bench.Measurement {
		bytes, err := bench.Traffic(op, d, dt, mode)
		if err != nil {
			t.Fatal(err)
		}
		return bench.Measurement{Backend: backend, Shape: "lab", Op: op, Mode: mode, DType: dt.String(), Dims: d,
			Median: 1e-6 * (1 + 100*rng.Float64()), Bytes: bytes, CopyGBps: 100 + 4000*rng.Float64()}
	}
	rep := benchReport{Rows: []bench.Measurement{
		row("cuda", scans.OpParallelScanLog, bench.ModeForward, scans.F32),
		row("cuda", scans.OpParallelScanLog, bench.ModeBackward, scans.F32),
		row("cuda", scans.OpMingruScan, bench.ModeForward, scans.F32),
		row("cuda", scans.OpMingruScan, bench.ModeBackward, scans.F32),
		row("vulkan", scans.OpParallelScanLog, bench.ModeBackward, scans.BF16),
		row("vulkan", scans.OpMingruScan, bench.ModeBackward, scans.BF16),
		row("vulkan", scans.OpMingruScan, bench.ModeBackward, scans.F16), // no scan row
		row("eager", scans.OpParallelScanLog, bench.ModeBackward, scans.F32),
		row("eager", scans.OpMingruScan, bench.ModeBackward, scans.F32),
	}}
	rep.Rows[len(rep.Rows)-1].Skipped = "not run"
	// CUDA's dispatch latency counts once per gate pass; Vulkan's
	// ceiling failed, so its gates count bytes alone.
	lat := 1e-6 * (1 + rng.Float64())
	rep.Ceilings = []ceiling{{Backend: "cuda", Latency: lat}, {Backend: "vulkan", Latency: lat, Err: "no timestamps"}}
	got := rep.fusion()
	if len(got) != 2 || got[0].Backend != "cuda" || got[1].Backend != "vulkan" || got[1].DType != "bf16" {
		t.Fatalf("fusion rows %+v, want cuda f32 and vulkan bf16", got)
	}
	for i, f := range got {
		scan, fused := rep.Rows[1], rep.Rows[3]
		if i == 1 {
			scan, fused = rep.Rows[4], rep.Rows[5]
		}
		dt, _ := scans.ParseDType(f.DType)
		gate, _ := bench.GateTraffic(d, dt)
		floor := float64(gate) / (fused.CopyGBps * 1e9)
		if f.Backend == "cuda" {
			floor += 2 * lat
		}
		if f.Fused != fused.Median || f.Scan != scan.Median || f.GateBytes != gate ||
			math.Abs(f.Chain-(scan.Median+floor)) > 1e-15 || math.Abs(f.Speedup-f.Chain/f.Fused) > 1e-9 {
			t.Errorf("%s: %+v, want fused %g, scan %g, gate bytes %d, floor %g", f.Backend, f, fused.Median, scan.Median, gate, floor)
		}
		if want := float64(scan.Bytes+gate) / float64(fused.Bytes); math.Abs(f.BytesRatio-want) > 1e-12 || f.BytesRatio < 2 {
			t.Errorf("%s: bytes ratio %g, want %g (about 19/9)", f.Backend, f.BytesRatio, want)
		}
	}
	if md := rep.markdown(); !strings.Contains(md, "## mingru_scan against the unfused chain") || strings.Count(md, "| >= ") != 2 {
		t.Error("the markdown lacks the fusion comparison")
	}
	if !strings.Contains(rep.table(), "against a chain of at least") {
		t.Error("the summary lacks the fusion comparison")
	}
}

// sweepGPU is fakeGPU named vulkan, with a layout sweep that times one
// small linear_scan through the timer it is given and writes its row.
type sweepGPU struct {
	*fakeGPU
	parts [][]string
}

func (s *sweepGPU) Name() string { return "vulkan" }
func (s *sweepGPU) Status() scans.Status {
	st := s.fakeGPU.Status()
	st.Backend = "vulkan"
	return st
}

func (s *sweepGPU) Sweep(w io.Writer, parts []string, timer scans.LayoutTimer) error {
	s.parts = append(s.parts, parts)
	d := scans.Dims{B: 2, T: 9, N: 3}
	med, err := timer.Time(s, scans.OpLinearScan, d, scans.F32, true)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "row\t%d\n", med.Nanoseconds())
	return err
}

// --sweep runs the sweeps of the selected backends that have the parts
// named, into sweep-<backend>.tsv under a header naming device and
// commit; a part of no backend, or of none selected, is an error.
func TestSweepFlag(t *testing.T) {
	s := &sweepGPU{fakeGPU: newFake(false)}
	withBackends(t, eager.New(), s)
	dir := t.TempDir()
	code, stdout, _ := runCmd(t, "--sweep", "long,rows", "--backends", "vulkan", "--out", dir)
	if code != 0 || !strings.Contains(stdout, "sweep-vulkan.tsv") {
		t.Fatalf("exit %d", code)
	}
	if len(s.parts) != 1 || !slices.Equal(s.parts[0], []string{"long", "rows"}) {
		t.Errorf("sweeps run with parts %v, want [long rows]", s.parts)
	}
	text, err := os.ReadFile(filepath.Join(dir, "sweep-vulkan.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(text)), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "Fake Device 9000") || !strings.HasPrefix(lines[1], "# commit ") ||
		!strings.HasPrefix(lines[2], "row\t") || strings.HasSuffix(lines[2], "\t0") {
		t.Errorf("sweep-vulkan.tsv:\n%s", text)
	}
	if code, _, _ := runCmd(t, "--sweep", "all", "--backends", "vulkan", "--out", dir); code != 0 || s.parts[1] != nil {
		t.Errorf("--sweep all: exit %d, parts %v; want every part (nil)", code, s.parts[1:])
	}
	for _, args := range [][]string{{"--sweep", "sideways"}, {"--sweep", "givens-tile", "--backends", "vulkan"}, {"--sweep", "all", "--backends", "eager"}} {
		if code, _, _ := runCmd(t, append(args, "--out", dir)...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
