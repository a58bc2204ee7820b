//go:build cgo

package vk

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/conformance"
	"github.com/mingru/scans/conformance/conformancetest"
	"github.com/mingru/scans/eager"
	"github.com/mingru/scans/shaders"
)

// patternRange is a run of f32 bit patterns for the narrowing probe:
// base + j*stride (mod 2^32) for j < count.
type patternRange struct {
	name         string
	base, stride uint32
	count        uint64
}

// sampleRange draws an odd stride (which visits every pattern once in
// 2^32 steps, so the sample spreads over the whole space) and a base.
func sampleRange(rng *rand.Rand, count uint64) patternRange {
	return patternRange{name: "strided sample", base: rng.Uint32(), stride: rng.Uint32() | 1, count: count}
}

// around is the contiguous range of n patterns centred on p, for both signs.
func around(name string, p uint32, n uint64) []patternRange {
	base := p - uint32(n/2)
	return []patternRange{
		{name: "+" + name, base: base, stride: 1, count: n},
		{name: "-" + name, base: base | 0x80000000, stride: 1, count: n},
	}
}

// boundaryRanges are contiguous ranges of n patterns, both signs, at each
// boundary of the f16 narrowing: zero and the f32 subnormals, every power
// of two from 2^-26 (below half the smallest f16 subnormal) to 2^-13
// (above the smallest normal), the largest finite f16 and the rounding
// midpoint above it (65504, 65520), 65536, and Inf with the NaNs nearest
// to it (a NaN whose payload lies in the low 13 bits is where a narrowing
// that only drops bits gives Inf).
func boundaryRanges(n uint64) []patternRange {
	var out []patternRange
	out = append(out, around("zero", uint32(n/2), n)...)
	for e := -26; e <= -13; e++ {
		out = append(out, around("2^"+strconv.Itoa(e), math.Float32bits(float32(math.Ldexp(1, e))), n)...)
	}
	out = append(out, around("65504", 0x477fe000, n)...)
	out = append(out, around("65520", 0x477ff000, n)...)
	out = append(out, around("65536", 0x47800000, n)...)
	out = append(out, around("Inf", 0x7f800000, n)...)
	out = append(out, around("largest NaN", 0x80000000-uint32(n/2), n)...)
	return out
}

// f16Finite holds every finite non-negative f16 value in order of its
// bits, widened by scans.F16ToFloat32.
var f16Finite = func() []float32 {
	v := make([]float32, 0x7c00)
	for h := range v {
		v[h] = scans.F16ToFloat32(uint16(h))
	}
	return v
}()

// f16TowardZero rounds f (not a NaN) toward zero: the largest f16
// magnitude not above |f|, found by searching the f16 values rather than
// by bit arithmetic, so that it shares nothing with the shaders'
// rounding. Inf stays Inf; every finite f beyond 65504 becomes 65504.
func f16TowardZero(f float32) uint16 {
	sign := uint16(math.Float32bits(f)>>16) & 0x8000
	a := float32(math.Abs(float64(f)))
	if math.IsInf(float64(a), 1) {
		return sign | 0x7c00
	}
	i := sort.Search(len(f16Finite), func(i int) bool { return f16Finite[i] > a })
	return sign | uint16(i-1)
}

// TestF16TowardZero checks the Go reference the probe test relies on:
// never above |f|, and the next f16 value up is above it.
func TestF16TowardZero(t *testing.T) {
	rng := seeded(t)
	for i := 0; i < 1<<16; i++ {
		f := math.Float32frombits(rng.Uint32())
		if f != f {
			continue
		}
		h := f16TowardZero(f)
		a := math.Abs(float64(f))
		got := math.Abs(float64(scans.F16ToFloat32(h)))
		next := math.Abs(float64(scans.F16ToFloat32((h & 0x7fff) + 1)))
		if got > a || (h&0x7fff < 0x7c00 && next <= a) || (h&0x8000 != 0) != math.Signbit(float64(f)) {
			t.Fatalf("f16TowardZero(%g = %#08x) = %#04x (%g)", f, math.Float32bits(f), h, got)
		}
	}
	for _, c := range []struct {
		f    float32
		want uint16
	}{
		{65519, 0x7bff}, {65520, 0x7bff}, {1e9, 0x7bff}, {float32(math.Inf(-1)), 0xfc00},
		{0x1p-25, 0}, {-0x1p-24, 0x8001}, {0x1.ffcp-15, 0x3ff}, {1.0009, 0x3c00}, {-1.0009766, 0xbc01},
	} {
		if got := f16TowardZero(c.f); got != c.want {
			t.Errorf("f16TowardZero(%g) = %#04x, want %#04x", c.f, got, c.want)
		}
	}
}

// roundingDevice opens the test device for a test whose premise is that
// the device's packHalf2x16 rounds to nearest even, and skips the test on
// a GPU whose probe found otherwise when it opened. A CPU device is not
// probed when it opens; there TestNarrowProbe checks the premise on a
// sample (lavapipe's rounds to nearest even).
func roundingDevice(t *testing.T) *device {
	t.Helper()
	dev, err := testBackend(t).device()
	if err != nil {
		t.Fatal(err)
	}
	if !dev.software && dev.hwF16&hwNarrow == 0 {
		t.Skipf("%s: f16 narrowing: %s", dev.name, dev.narrowing)
	}
	return dev
}

// TestNarrowProbe runs the narrowing probe (shaders/f16narrowprobe.comp)
// on lavapipe, or whatever device is present: over a strided sample of the
// whole 32-bit space and over contiguous ranges at every boundary of the
// f16 narrowing, packHalf2x16 must round to nearest even. (The full 2^32
// sweep, TestFullNarrowProbe, takes 11 to 15 s on lavapipe with two cores;
// a GPU's verdict on it is its status note.)
func TestNarrowProbe(t *testing.T) {
	dev := roundingDevice(t)
	rng := seeded(t)
	ranges := append([]patternRange{sampleRange(rng, 1<<26)}, boundaryRanges(1<<20)...)
	// Whole bands, both signs: every f32 from 2^-26 up to 2^-13 (all the
	// subnormal results and the smallest normals), from 32768 up to
	// 2^17 (the largest normals and overflow), and from 2^127 through
	// Inf and every NaN.
	for _, band := range []struct {
		name     string
		from, to uint32
	}{
		{"subnormal band", 0x32800000, 0x39000000},
		{"overflow band", 0x47000000, 0x48000000},
		{"Inf and NaN band", 0x7f000000, 0x80000000},
	} {
		n := uint64(band.to - band.from)
		ranges = append(ranges, patternRange{"+" + band.name, band.from, 1, n},
			patternRange{"-" + band.name, band.from | 0x80000000, 1, n})
	}
	var total uint64
	start := time.Now()
	for _, r := range ranges {
		res, err := dev.probeNarrow(r.base, r.stride, r.count, false)
		if err != nil {
			t.Fatal(err)
		}
		total += res.patterns
		if res.patterns != r.count || res.mismatches != 0 {
			t.Errorf("%s (base %#08x, stride %#x, %d patterns): packHalf2x16 differs from rounding to nearest even on %d, the first %#08x",
				r.name, r.base, r.stride, r.count, res.mismatches, res.first)
		}
	}
	t.Logf("%s: %d patterns in %v, packHalf2x16 rounds to nearest even on all", dev.name, total, time.Since(start))
}

// TestFullNarrowProbe runs the choice a GPU makes when it opens, over all
// 2^32 patterns in 16 dispatches, on whatever device is present (a CPU
// device skips it when it opens: 11 to 15 s on lavapipe with two cores).
// Not with -short.
func TestFullNarrowProbe(t *testing.T) {
	if testing.Short() {
		t.Skip("the full probe takes seconds on a CPU device")
	}
	b := testBackend(t)
	dev, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	software, bits, note := dev.software, dev.hwF16, dev.narrowing
	defer func() { dev.software, dev.hwF16, dev.narrowing = software, bits, note }()
	dev.software = false
	dev.hwF16 &^= hwNarrow
	if err := dev.chooseNarrowing(false); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: f16 narrowing: %s", dev.name, dev.narrowing)
	// A GPU decides as it did when it opened; a CPU device as its sample
	// in TestNarrowProbe says (lavapipe: packHalf2x16).
	want := software || bits&hwNarrow != 0
	chosen := strings.HasPrefix(dev.narrowing, "packHalf2x16 (round to nearest even on all 2^32 f32 values, probed in ")
	if got := dev.hwF16&hwNarrow != 0; got != want || chosen != want {
		t.Errorf("after the full probe: packHalf2x16 chosen %v, want %v (%q)", got, want, dev.narrowing)
	}
}

// TestNarrowProbeCanFail runs the probe against rounding toward zero,
// which a device that rounds to nearest even misses wherever the two
// differ: the count and the smallest such pattern must be exactly what Go
// computes from scans.F16FromFloat32 and an independent truncation, over
// the same sample and boundary ranges, in several dispatches each (so the
// counts of the dispatches add up and the smallest pattern is the smallest
// over all of them).
func TestNarrowProbeCanFail(t *testing.T) {
	// The premise: on this device packHalf2x16 rounds to nearest even
	// (TestNarrowProbe).
	dev := roundingDevice(t)
	rng := seeded(t)
	dev.narrowPer = 1 << 16
	defer func() { dev.narrowPer = 0 }()
	ranges := append([]patternRange{sampleRange(rng, 1<<22)}, boundaryRanges(1<<16)...)
	var total, differ uint64
	for _, r := range ranges {
		var want uint64
		wantFirst := uint32(math.MaxUint32)
		for j := uint64(0); j < r.count; j++ {
			p := r.base + uint32(j)*r.stride
			f := math.Float32frombits(p)
			if f != f {
				continue
			}
			if scans.F16FromFloat32(f) != f16TowardZero(f) {
				want++
				wantFirst = min(wantFirst, p)
			}
		}
		if want == 0 && r.stride != 1 {
			t.Errorf("%s: no pattern where the roundings differ; the sample proves nothing", r.name)
		}
		res, err := dev.probeNarrow(r.base, r.stride, r.count, true)
		if err != nil {
			t.Fatal(err)
		}
		if res.mismatches != want || (want > 0 && res.first != wantFirst) {
			t.Errorf("%s (base %#08x, stride %#x, %d patterns): %d mismatches with truncation, the first %#08x; want %d, the first %#08x",
				r.name, r.base, r.stride, r.count, res.mismatches, res.first, want, wantFirst)
		}
		total += r.count
		differ += want
	}
	if differ == 0 {
		t.Error("no pattern where the roundings differ; the test proves nothing")
	}
	t.Logf("truncation differs from rounding to nearest even on %d of %d patterns; the probe counted each", differ, total)
}

// TestForcedNarrowing runs the f16 kernels with the packHalf2x16
// narrowing on any device, lavapipe included (whose packHalf2x16 rounds to
// nearest even: TestNarrowProbe): every f16 and bf16 pattern through
// linear_scan (conformancetest.TestHalfValues) and the f16 rows of the quick
// conformance matrix (the Givens rows also without subgroup operations),
// so that every f16 module runs, each pipeline specialized with that
// narrowing.
func TestForcedNarrowing(t *testing.T) {
	fullTier(t)
	roundingDevice(t) // skips without a device; checks the validation layer
	b := New()
	b.cfg.hwNarrow = true
	dev, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	notes := b.Status().Notes
	if dev.hwF16&hwNarrow == 0 || !strings.Contains(notes, "f16 narrowing: packHalf2x16 (forced") {
		t.Fatalf("the knob did not force the packHalf2x16 narrowing: bits %#x, %q", dev.hwF16, notes)
	}
	t.Logf("%s: %s", dev.name, notes)
	t.Run("halfvalues", func(t *testing.T) { conformancetest.TestHalfValues(t, b) })
	ref := eager.New()
	seed := conformancetest.TestSeed()
	t.Logf("seed %d", seed)
	cases := conformance.FilterCases(conformance.Cases(true), nil, []scans.DType{scans.F16})
	// The Givens rows again on the kernels without subgroup operations,
	// which a device with shuffles does not otherwise run.
	givens := conformance.FilterCases(cases, []scans.Op{scans.OpGivensScan}, nil)
	pass, rows := 0, 0
	for i, c := range append(cases, givens...) {
		b.cfg.noSubgroup = i >= len(cases)
		r := conformance.CheckCase(b, ref, c, seed)
		rows++
		if !r.Pass {
			t.Errorf("%s (seed %d, subgroup kernels off: %v)", r.Summary(), r.Seed, b.cfg.noSubgroup)
			continue
		}
		pass++
	}
	t.Logf("%d/%d f16 conformance rows pass with the packHalf2x16 narrowing", pass, rows)
	dev.pipeMu.Lock()
	defer dev.pipeMu.Unlock()
	modules := map[string]bool{}
	for k := range dev.pipes {
		if !strings.HasSuffix(k.module, "_f16") {
			continue
		}
		modules[k.module] = true
		if k.spec[specHWF16]&hwNarrow == 0 {
			t.Errorf("pipeline %s %v without the packHalf2x16 narrowing", k.module, k.spec)
		}
	}
	for _, m := range shaders.Modules() {
		if strings.HasSuffix(m, "_f16") && !subgroupGivens(m) && !modules[m] {
			t.Errorf("module %s did not run", m)
		}
	}
	names := make([]string, 0, len(modules))
	for m := range modules {
		names = append(names, m)
	}
	sort.Strings(names)
	t.Logf("f16 modules run: %v", names)
}
