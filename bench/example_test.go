package bench_test

import (
	"fmt"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/eager"
)

// bench.Measure times one operation at a benchmark shape and reports its
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
