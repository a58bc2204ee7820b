//go:build !cuda

package cuda

import (
	"errors"
	"testing"

	"github.com/mingru/scans"
)

func TestNotBuiltIn(t *testing.T) {
	b := New()
	if b.Name() != "cuda" {
		t.Fatalf("Name = %q, want cuda", b.Name())
	}
	st := b.Status()
	if st.Available || st.Reason != "CUDA not built in: rebuild with -tags cuda" || st.Backend != "cuda" {
		t.Fatalf("Status = %+v, want unavailable, not built in", st)
	}
	if got := st.String(); got != "cuda: CUDA not built in: rebuild with -tags cuda" {
		t.Fatalf("Status.String = %q", got)
	}
	h, err := scans.FromFloat32([]float32{1, 2, 3}, 1, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, err error) {
		t.Helper()
		var u *scans.UnavailableError
		if !errors.As(err, &u) || u.Reason != st.Reason {
			t.Errorf("%s: err = %v, want *scans.UnavailableError with the status reason", name, err)
		}
	}
	_, err = b.Upload(h)
	check("Upload", err)
	_, err = b.Download(h)
	check("Download", err)
	check("Release", b.Release(h))
	check("Supports", b.Supports(scans.OpLinearScan, scans.Dims{B: 1, T: 3, N: 1, K: 1, V: 1}, scans.F32))
	_, err = b.LinearScan(h, h, nil)
	check("LinearScan", err)
	_, _, _, err = b.LinearScanBackward(h, h, nil, h, h)
	check("LinearScanBackward", err)
	_, err = b.MatrixScan(h, h, nil)
	check("MatrixScan", err)
	_, _, _, err = b.MatrixScanBackward(h, h, nil, h, h)
	check("MatrixScanBackward", err)
	_, err = b.MatrixAffineScan(h, h, nil)
	check("MatrixAffineScan", err)
	_, _, _, err = b.MatrixAffineScanBackward(h, h, nil, h, h)
	check("MatrixAffineScanBackward", err)
	_, err = b.ParallelScanLog(h, h)
	check("ParallelScanLog", err)
	_, _, err = b.ParallelScanLogBackward(h, h, h, h)
	check("ParallelScanLogBackward", err)
	_, err = b.GivensScan(h, h, h, nil)
	check("GivensScan", err)
	_, _, _, _, err = b.GivensScanBackward(h, h, h, nil, h, h)
	check("GivensScanBackward", err)
	_, err = b.MingruScan(h, h, nil)
	check("MingruScan", err)
	_, _, _, err = b.MingruScanBackward(h, h, nil, h, h)
	check("MingruScanBackward", err)
	_, err = b.CopyBandwidth(1 << 20)
	check("CopyBandwidth", err)
	_, err = b.DispatchLatency()
	check("DispatchLatency", err)
	if _, ok := b.LastKernelTime(); ok {
		t.Error("LastKernelTime reports a time although nothing ran")
	}
	if p := b.PeakBytes(); p != 0 {
		t.Errorf("PeakBytes = %d, want 0", p)
	}
}
