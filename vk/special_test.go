//go:build cgo

package vk

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mingru/scans"
	"github.com/mingru/scans/conformance/conformancetest"
	"github.com/mingru/scans/internal/angles"
)

// TestSpecialValues: NaN, +Inf and -Inf in any input propagate as in
// eager, and touch no other batch entry (conformancetest.TestSpecialValues).
func TestSpecialValues(t *testing.T) {
	conformancetest.TestSpecialValues(t, testBackend(t))
}

// TestGivensAngles: givens_scan with angles up to 3000 in magnitude, and
// with a few of any magnitude up to 1e38 among angles within pi, agrees
// with eager (conformancetest.TestGivensAngles), through the subgroup kernels
// (chunked and unchunked) and the kernels without subgroup operations,
// on the pipelines that Upload's note of the angles' range chooses (Cody
// and Waite's reduction, or with Payne and Hanek's for the sets with huge
// angles; the conformance matrix's angles, within pi, run without a
// reduction).
func TestGivensAngles(t *testing.T) {
	b := testBackend(t)
	t.Run("tensors", func(t *testing.T) { testAngleRanges(t, b) })
	t.Run("subgroup", func(t *testing.T) { conformancetest.TestGivensAngles(t, b, true) })
	b.cfg.noSubgroup = true
	defer func() { b.cfg.noSubgroup = false }()
	t.Run("no-subgroup", func(t *testing.T) { conformancetest.TestGivensAngles(t, b, false) })
}

// TestHalfValues: every f16 and bf16 bit pattern widens and narrows
// exactly (conformancetest.TestHalfValues), on the device's own f16 conversions
// where its probes found them exact, and on the software path.
func TestHalfValues(t *testing.T) {
	b := testBackend(t)
	dev, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s", dev.name, b.Status().Notes)
	t.Run("device", func(t *testing.T) { conformancetest.TestHalfValues(t, b) })
	soft := New()
	soft.cfg.softF16 = true
	t.Run("software", func(t *testing.T) { conformancetest.TestHalfValues(t, soft) })
	// The status says which path each backend's kernels take.
	notes := b.Status().Notes
	widen, narrow, ok := strings.Cut(notes, "; ")
	if !ok {
		t.Fatalf("status notes %q: want the widening and the narrowing", notes)
	}
	if got, want := strings.Contains(widen, "unpackHalf2x16"), dev.hwF16&hwWiden != 0; got != want {
		t.Errorf("status %q: widening names unpackHalf2x16 %v, want %v", notes, got, want)
	}
	if got, want := strings.HasPrefix(narrow, "f16 narrowing: packHalf2x16 (round to nearest even"), dev.hwF16&hwNarrow != 0; got != want {
		t.Errorf("status %q: narrowing names packHalf2x16 %v, want %v", notes, got, want)
	}
	if dev.software && (dev.hwF16&hwNarrow != 0 || !strings.Contains(narrow, "not probed on a CPU device")) {
		t.Errorf("status %q: a CPU device narrows with the integer rounding, unprobed", notes)
	}
	st := soft.Status()
	sdev, _ := soft.device()
	if !strings.Contains(st.Notes, "widening: software") || !strings.Contains(st.Notes, "narrowing: integer rounding") || sdev.hwF16 != 0 {
		t.Errorf("status with the software conversions: %q (bits %#x)", st, sdev.hwF16)
	}
}

// TestMingruRange: mingru_scan with |k| up to 100 and |x| up to 1.5e4
// (conformancetest.TestMingruRange).
func TestMingruRange(t *testing.T) {
	conformancetest.TestMingruRange(t, testBackend(t))
}

// TestMingruNegativeH0: a negative h0 entry makes its lane NaN, and only
// its lane (conformancetest.TestMingruNegativeH0).
func TestMingruNegativeH0(t *testing.T) {
	conformancetest.TestMingruNegativeH0(t, testBackend(t))
}

// TestLogRange: parallel_scan_log far outside the benchmark's inputs
// (strong decays, states far below their inputs, overflow) agrees with
// eager (conformancetest.TestLogRange).
func TestLogRange(t *testing.T) {
	conformancetest.TestLogRange(t, testBackend(t))
}

// testAngleRanges: Upload notes the range of a theta's angles (within
// pi, needing Cody and Waite's reduction, needing Payne and Hanek's), an
// operation's output is taken to need the exact one, and givens_scan runs
// each on a pipeline specialized to its range.
func testAngleRanges(t *testing.T, b *Backend) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	d := scans.Dims{B: 2, T: 9, N: 3, K: 4, V: 1}
	host := func(gen func() float64, shape ...int) *scans.Host {
		t.Helper()
		h, err := scans.NewHost(scans.F32, shape...)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < h.Len(); i++ {
			h.Set(i, float32(gen()))
		}
		return h
	}
	upload := func(h *scans.Host) *Tensor {
		t.Helper()
		u, err := b.Upload(h)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Release(u) })
		return u.(*Tensor)
	}
	sigma := upload(host(func() float64 { return 0.5 + 0.5*rng.Float64() }, d.B, d.T, d.N, d.K))
	theta := host(func() float64 { return (2*rng.Float64() - 1) * math.Pi }, d.B, d.T, d.N, d.K-1)
	for _, c := range []struct {
		what string
		odd  float32
		want angles.Range
	}{
		{"angles within pi", 0, angles.Turn},
		{"an angle of 100", 100, angles.Reduce},
		{"an angle of -3e5", -3e5, angles.Any},
	} {
		if c.odd != 0 {
			theta.Set(rng.IntN(theta.Len()), c.odd)
		}
		th := upload(theta)
		if th.angles != c.want {
			t.Errorf("%s: range %d, want %d", c.what, th.angles, c.want)
		}
		h, err := b.GivensScan(th, sigma, sigma, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !givensPipelineBuilt(t, b, d.K, c.want) {
			t.Errorf("%s: no Givens pipeline for k=%d specialized to range %d", c.what, d.K, c.want)
		}
		if r := h.(*Tensor).angles; r != angles.Any {
			t.Errorf("an operation's output: range %d, want %d", r, angles.Any)
		}
		b.Release(h)
	}
}

// givensPipelineBuilt says whether the device holds a Givens pipeline for
// k specialized to the angle range r.
func givensPipelineBuilt(t *testing.T, b *Backend, k int, r angles.Range) bool {
	t.Helper()
	dev, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	dev.pipeMu.Lock()
	defer dev.pipeMu.Unlock()
	for key := range dev.pipes {
		if strings.HasPrefix(key.module, "givens_scan") && key.spec[specK] == uint32(k) && key.spec[specAngles] == uint32(r) {
			return true
		}
	}
	return false
}
