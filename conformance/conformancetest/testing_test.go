package conformancetest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/conformance"
	"github.com/mingru/scans/eager"
	"github.com/mingru/scans/reference"
)

// TestConformanceEager runs the conformance matrix on eager against the
// float64 reference, so the harness itself runs in CI (the full matrix
// unless -short; under -race the quick matrix's f32 rows, which the race
// detector slows about tenfold).
func TestConformanceEager(t *testing.T) {
	if !raceEnabled {
		TestBackend(t, eager.New(), testing.Short())
		return
	}
	cases := conformance.FilterCases(conformance.Cases(true), nil, []scans.DType{scans.F32})
	for _, r := range conformance.Parity(eager.New(), nil, cases, nil) {
		if !r.Pass {
			t.Errorf("%s (seed %d)", r.Summary(), r.Seed)
		}
	}
}

// TestLogScan64 holds TestLogRange's float64 scan to the float64
// reference backend, on every regime TestLogRange draws from: the two
// agree to f32 rounding, infinities included.
func TestLogScan64(t *testing.T) {
	op, ref := scans.OpParallelScanLog, reference.New()
	for ri, lr := range logRanges {
		d := scans.Dims{B: 2, T: 37, N: 3, K: 1, V: 1}
		in := lr.draw(t, d, scans.F32, rand.New(rand.NewPCG(TestSeed(), uint64(ri))))
		lc, lv := in.Args[0], in.Args[1]
		out, err := bench.Run(ref, op, scans.Forward, in, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, got := out[0].Float32s(), logScan64(lc, lv, d)
		for i, w := range want {
			g := float32(got[i])
			if g != w && math.Abs(float64(g-w)) > 1e-6*math.Abs(float64(w)) {
				t.Fatalf("%s: element %d: %v, the reference %v", lr.name, i, got[i], w)
			}
		}
	}
}
