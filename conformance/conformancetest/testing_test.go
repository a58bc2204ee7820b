package conformancetest

import (
	"testing"

	"github.com/mingru/scans"
	"github.com/mingru/scans/conformance"
	"github.com/mingru/scans/eager"
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
