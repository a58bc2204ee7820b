//go:build cgo

package vk

import (
	"errors"
	"testing"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/conformance"
	"github.com/mingru/scans/eager"
)

// A CPU Vulkan device truncates long loops silently, so sequences past
// softwareMaxT are declined there, from Supports and from the operation;
// up to the bound they run and match eager.
func TestSoftwareDeviceSequenceLimit(t *testing.T) {
	b := testBackend(t)
	st := b.Status()
	if !st.Software {
		t.Skipf("%s is not a CPU device: the limit does not apply", st.Device)
	}
	rng := seeded(t)
	long := scans.Dims{B: 1, T: softwareMaxT + 1, N: 3, K: 1, V: 1}
	var fb *scans.ScanFallback
	if err := b.Supports(scans.OpLinearScan, long, scans.F32); !errors.As(err, &fb) {
		t.Fatalf("Supports(T=%d) = %v, want ScanFallback", long.T, err)
	}
	in, err := bench.Inputs(scans.OpLinearScan, long, scans.F32, bench.Typical, rng)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := b.Upload(in.Args[0])
	x, _ := b.Upload(in.Args[1])
	if _, err := b.LinearScan(a, x, nil); !errors.As(err, &fb) {
		t.Fatalf("LinearScan(T=%d) = %v, want ScanFallback", long.T, err)
	}
	c := conformance.Case{Init: true, Op: scans.OpLinearScan, Dir: scans.Forward, Dims: scans.Dims{B: 1, T: softwareMaxT, N: 3, K: 1, V: 1}, DType: scans.F32, Regime: bench.Typical}
	if r := conformance.CheckCase(b, eager.New(), c, rng.Uint64()); !r.Pass {
		t.Errorf("T=%d on %s: %s", softwareMaxT, st.Device, r.Summary())
	}
}
