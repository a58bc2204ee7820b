package bench_test

import (
	"fmt"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/eager"
)

// Parity runs conformance cases on a backend and compares every output
// with a reference; here eager's linear_scan rows in f32 against the
// float64 reference.
func ExampleParity() {
	cases := bench.FilterCases(bench.ConformanceCases(true),
		[]scans.Op{scans.OpLinearScan}, []scans.DType{scans.F32})
	rows := bench.Parity(eager.New(), bench.Reference(), cases, nil)
	passed := 0
	for _, r := range rows {
		if r.Pass {
			passed++
		}
	}
	fmt.Printf("%s: rows=%d passed=%d\n", rows[0].Case, len(rows), passed)
	// Output: linear_scan/forward/f32/k1,v1/T1: rows=14 passed=14
}

// Measure times one operation at a benchmark shape and reports its
// achieved bandwidth.
func ExampleMeasure() {
	lab := bench.Shapes[0]
	m, err := bench.Measure(eager.New(), scans.OpLinearScan, lab.Dims(scans.OpLinearScan), scans.F32,
		bench.ModeForward, bench.QuickTiming, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s %s %s: %d bytes, clock %s, %v\n", m.Backend, m.Op, m.Dims, m.Bytes, m.Clock, m.Median > 0)
	// Output: eager linear_scan B=128 T=64 N=64 k=1 v=1: 6324224 bytes, clock wall, true
}
