package scans

import (
	"errors"
	"testing"
)

func TestCheckEnvelope(t *testing.T) {
	d := func(k, v int) Dims { return Dims{B: 3, T: 7, N: 5, K: k, V: v} }
	in := []struct {
		op   Op
		k, v int
	}{
		{OpLinearScan, 1, 1}, {OpParallelScanLog, 1, 1}, {OpMatrixScan, 2, 1},
		{OpGivensScan, 2, 1}, {OpGivensScan, 4, 1}, {OpGivensScan, 8, 1}, {OpGivensScan, 16, 1},
	}
	for _, k := range Envelope {
		for _, v := range Envelope {
			in = append(in, struct {
				op   Op
				k, v int
			}{OpMatrixAffineScan, k, v})
		}
	}
	for _, c := range in {
		for _, dt := range DTypes {
			if err := CheckEnvelope("gpu", c.op, d(c.k, c.v), dt); err != nil {
				t.Errorf("%s k=%d v=%d %v: %v, want served", c.op, c.k, c.v, dt, err)
			}
		}
	}
	out := []struct {
		op   Op
		k, v int
	}{
		{OpLinearScan, 2, 1}, {OpMatrixScan, 2, 2}, {OpMatrixScan, 4, 1},
		{OpMatrixAffineScan, 3, 1}, {OpMatrixAffineScan, 1, 5}, {OpMatrixAffineScan, 32, 1},
		{OpGivensScan, 1, 1}, {OpGivensScan, 6, 1}, {OpGivensScan, 32, 1}, {OpGivensScan, 4, 2},
		{"no_such_op", 1, 1},
	}
	for _, c := range out {
		err := CheckEnvelope("gpu", c.op, d(c.k, c.v), F32)
		var fb *ScanFallback
		if !errors.As(err, &fb) || fb.Backend != "gpu" || fb.Op != c.op || fb.Reason == "" {
			t.Errorf("%s k=%d v=%d: %v, want a ScanFallback from gpu with a reason", c.op, c.k, c.v, err)
		}
	}
	var fb *ScanFallback
	if err := CheckEnvelope("gpu", OpLinearScan, d(1, 1), DType(7)); !errors.As(err, &fb) {
		t.Errorf("invalid dtype: %v, want ScanFallback", err)
	}
	if err := CheckEnvelope("gpu", OpLinearScan, Dims{B: 1, T: 0, N: 1, K: 1, V: 1}, F32); !errors.As(err, &fb) {
		t.Errorf("T=0: %v, want ScanFallback", err)
	}
}
