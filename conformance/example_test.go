package conformance_test

import (
	"fmt"

	"github.com/mingru/scans"
	"github.com/mingru/scans/conformance"
	"github.com/mingru/scans/eager"
	"github.com/mingru/scans/reference"
)

// Parity runs conformance cases on a backend and compares every output
// with a reference; here eager's linear_scan rows in f32 against the
// float64 reference.
func ExampleParity() {
	cases := conformance.FilterCases(conformance.Cases(true),
		[]scans.Op{scans.OpLinearScan}, []scans.DType{scans.F32})
	rows := conformance.Parity(eager.New(), reference.New(), cases, nil)
	passed := 0
	for _, r := range rows {
		if r.Pass {
			passed++
		}
	}
	fmt.Printf("%s: rows=%d passed=%d\n", rows[0].Case, len(rows), passed)
	// Output: linear_scan/forward/f32/k1,v1/T1: rows=14 passed=14
}
