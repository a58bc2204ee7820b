package bench_test

import (
	"testing"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/eager"
)

// The training step runs both ways on eager and reports positive walls;
// without a device clock it reports no kernel sum.
func TestMeasureStep(t *testing.T) {
	r, err := bench.MeasureStep(eager.New(), "tiny", scans.Dims{B: 2, T: 9, N: 5, K: 1, V: 1}, scans.F32, bench.QuickTiming, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Runs < bench.QuickTiming.MinRuns || r.SyncWall <= 0 || r.QueueWall <= 0 || r.Calls != 4*bench.StepLayers {
		t.Errorf("step: %+v", r)
	}
	if r.KernelSum != 0 || r.SyncRatio != 0 {
		t.Errorf("eager has no device clock, got kernel sum %v ratio %v", r.KernelSum, r.SyncRatio)
	}
}
