package eager

import (
	"runtime"
	"testing"

	"github.com/mingru/scans"
)

// benchOp times op's forward (bwd false) or forward plus backward through
// the Backend at SPEC's lab shape and reports output elements per second,
// overall and per core.
func benchOp(b *testing.B, op scans.Op, d scans.Dims, bwd bool) {
	r := newRand(b)
	c := newCase(r, op, d, true, benchDist)
	in := c.tensors(b, scans.F32)
	dh := host(b, normal(r, scans.NumElements(c.outShape())), c.outShape()...)
	be := New()
	elems := scans.NumElements(c.outShape())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h, err := forward(be, op, in)
		if err != nil {
			b.Fatal(err)
		}
		if bwd {
			if _, err := backward(be, op, in, h, dh); err != nil {
				b.Fatal(err)
			}
		}
	}
	rate := float64(elems) * float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "elem/s")
	b.ReportMetric(rate/float64(runtime.GOMAXPROCS(0)), "elem/s/core")
}

// SPEC's lab shape: B = 128, T = 64, D = 64; matrix_scan N = 32;
// matrix_affine_scan N = 8, k = 8, v = 8; givens N = 8, k = 8.
var (
	labLinear = scans.Dims{B: 128, T: 64, N: 64, K: 1, V: 1}
	labMatrix = scans.Dims{B: 128, T: 64, N: 32, K: 2, V: 1}
	labAffine = scans.Dims{B: 128, T: 64, N: 8, K: 8, V: 8}
	labGivens = scans.Dims{B: 128, T: 64, N: 8, K: 8, V: 1}
)

func BenchmarkLinearScan(b *testing.B)         { benchOp(b, scans.OpLinearScan, labLinear, false) }
func BenchmarkLinearScanBackward(b *testing.B) { benchOp(b, scans.OpLinearScan, labLinear, true) }
func BenchmarkMatrixScan(b *testing.B)         { benchOp(b, scans.OpMatrixScan, labMatrix, false) }
func BenchmarkMatrixAffineScan(b *testing.B)   { benchOp(b, scans.OpMatrixAffineScan, labAffine, false) }
func BenchmarkMatrixAffineScanBackward(b *testing.B) {
	benchOp(b, scans.OpMatrixAffineScan, labAffine, true)
}
func BenchmarkParallelScanLog(b *testing.B) { benchOp(b, scans.OpParallelScanLog, labLinear, false) }
func BenchmarkParallelScanLogBackward(b *testing.B) {
	benchOp(b, scans.OpParallelScanLog, labLinear, true)
}
func BenchmarkGivensScan(b *testing.B)         { benchOp(b, scans.OpGivensScan, labGivens, false) }
func BenchmarkGivensScanBackward(b *testing.B) { benchOp(b, scans.OpGivensScan, labGivens, true) }
