package cuda

import (
	"errors"
	"testing"

	"github.com/mingru/scans"
)

func TestEnvelope(t *testing.T) {
	in := []struct {
		op scans.Op
		d  scans.Dims
	}{
		{scans.OpLinearScan, scans.Dims{B: 2, T: 7, N: 33, K: 1, V: 1}},
		{scans.OpParallelScanLog, scans.Dims{B: 1, T: 1, N: 1, K: 1, V: 1}},
		{scans.OpMingruScan, scans.Dims{B: 3, T: 70, N: 65, K: 1, V: 1}},
		{scans.OpMatrixScan, scans.Dims{B: 3, T: 5, N: 4, K: 2, V: 1}},
		{scans.OpMatrixAffineScan, scans.Dims{B: 1, T: 9, N: 2, K: 16, V: 1}},
		{scans.OpMatrixAffineScan, scans.Dims{B: 1, T: 9, N: 2, K: 1, V: 16}},
		{scans.OpGivensScan, scans.Dims{B: 1, T: 9, N: 2, K: 2, V: 1}},
		{scans.OpGivensScan, scans.Dims{B: 1, T: 9, N: 2, K: 16, V: 1}},
	}
	for _, c := range in {
		for _, dt := range scans.DTypes {
			if err := envelope(c.op, c.d, dt); err != nil {
				t.Errorf("%s %v %v: %v, want in the envelope", c.op, c.d, dt, err)
			}
		}
	}
	out := []struct {
		op scans.Op
		d  scans.Dims
	}{
		{scans.OpMatrixAffineScan, scans.Dims{B: 1, T: 9, N: 2, K: 3, V: 1}},
		{scans.OpMatrixAffineScan, scans.Dims{B: 1, T: 9, N: 2, K: 4, V: 32}},
		{scans.OpMatrixAffineScan, scans.Dims{B: 1, T: 9, N: 2, K: 32, V: 4}},
		{scans.OpGivensScan, scans.Dims{B: 1, T: 9, N: 2, K: 6, V: 1}},
		{scans.OpGivensScan, scans.Dims{B: 1, T: 9, N: 2, K: 3, V: 1}},
		{scans.OpGivensScan, scans.Dims{B: 1, T: 9, N: 2, K: 1, V: 1}},
		{scans.OpMatrixScan, scans.Dims{B: 1, T: 9, N: 2, K: 3, V: 1}},
		{scans.OpMingruScan, scans.Dims{B: 1, T: 9, N: 2, K: 2, V: 1}},
		{scans.Op("nope"), scans.Dims{B: 1, T: 9, N: 2, K: 1, V: 1}},
	}
	for _, c := range out {
		err := envelope(c.op, c.d, scans.F32)
		var fb *scans.ScanFallback
		if !errors.As(err, &fb) || fb.Backend != "cuda" || fb.Op != c.op || fb.Reason == "" {
			t.Errorf("%s %v: err = %v, want a *scans.ScanFallback", c.op, c.d, err)
		}
	}
}

func TestKernelName(t *testing.T) {
	cases := []struct {
		op   scans.Op
		dir  scans.Direction
		d    scans.Dims
		dt   scans.DType
		want string
	}{
		{scans.OpMatrixAffineScan, scans.Forward, scans.Dims{K: 8, V: 8}, scans.F32, "matrix_affine_scan_fwd_f32_k8_v8"},
		{scans.OpMatrixAffineScan, scans.Backward, scans.Dims{K: 2, V: 16}, scans.BF16, "matrix_affine_scan_bwd_bf16_k2_v16"},
		{scans.OpGivensScan, scans.Forward, scans.Dims{K: 4, V: 1}, scans.F16, "givens_scan_fwd_f16_k4"},
		{scans.OpLinearScan, scans.Backward, scans.Dims{K: 1, V: 1}, scans.F32, "linear_scan_bwd_f32"},
		{scans.OpMatrixScan, scans.Forward, scans.Dims{K: 2, V: 1}, scans.F16, "matrix_scan_fwd_f16"},
		{scans.OpParallelScanLog, scans.Forward, scans.Dims{K: 1, V: 1}, scans.BF16, "parallel_scan_log_fwd_bf16"},
		{scans.OpMingruScan, scans.Backward, scans.Dims{K: 1, V: 1}, scans.F16, "mingru_scan_bwd_f16"},
	}
	for _, c := range cases {
		if got := kernelName(c.op, c.dir, c.d, c.dt); got != c.want {
			t.Errorf("kernelName(%s,%s,%v,%v) = %q, want %q", c.op, c.dir, c.d, c.dt, got, c.want)
		}
	}
}
