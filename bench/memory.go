package bench

import (
	"fmt"
	"math/rand/v2"

	"github.com/mingru/scans"
	"github.com/mingru/scans/eager"
)

// MemoryDims is the contract's memory benchmark: the Givens backward at
// B = 128, T = 64, N = 8, k = 8 (d = 64).
var MemoryDims = scans.Dims{B: 128, T: 64, N: 8, K: 8, V: 1}

// MemoryResult compares the memory of the angle-fused Givens backward with
// the generic path (the transitions materialized as A (B,T,N,k,k) and run
// through matrix_affine_scan's backward).
type MemoryResult struct {
	Backend string     `json:"backend"`
	Dims    scans.Dims `json:"dims"`
	DType   string     `json:"dtype"`
	// Kind is "device peak" (scans.Instrumented.PeakBytes above what was
	// held before, measured) or "host bytes (computed)" (the sizes of the
	// tensors each path allocates, for the eager backend).
	Kind    string  `json:"kind"`
	Fused   int64   `json:"fused_bytes"`
	Generic int64   `json:"generic_bytes"`
	Ratio   float64 `json:"generic_over_fused"`
	// FusedTensors and GenericTensors list what each path holds.
	FusedTensors   string `json:"fused_tensors"`
	GenericTensors string `json:"generic_tensors"`
	// FusedTime and GenericTime are the medians, in seconds, of forward
	// plus backward of each path at the same dims (GivensPaths), with the
	// clock named by Clock; 0 when not timed.
	FusedTime   float64 `json:"fused_fwd_bwd_s,omitempty"`
	GenericTime float64 `json:"generic_fwd_bwd_s,omitempty"`
	Clock       string  `json:"clock,omitempty"`
	Skipped     string  `json:"skipped,omitempty"`
}

const (
	fusedList   = "theta, sigma, x, h0, h, dh in; dtheta, dsigma, dx, dh0 out"
	genericList = "A, x, h0, h, dh in; dA, dX, dH0 out"
)

// MemoryGivens measures, on an instrumented (GPU) backend, the peak device
// bytes of the fused Givens backward and of the generic path at d: for
// each path it releases everything, resets the peak, uploads the
// backward's inputs, runs the backward and reads the peak above the
// baseline. The generic path materializes A = diag(sigma) R(theta) on the
// host (eager.GivensMatrix), uploads it and runs MatrixAffineScanBackward
// on the device. For a backend that is not instrumented it reports the
// host bytes of the tensors each path allocates, computed, not measured.
func MemoryGivens(b scans.Backend, d scans.Dims, dt scans.DType, rng *rand.Rand) (MemoryResult, error) {
	d, err := NormalizeDims(scans.OpGivensScan, d)
	if err != nil {
		return MemoryResult{}, err
	}
	r := MemoryResult{Backend: b.Name(), Dims: d, DType: dt.String(), FusedTensors: fusedList, GenericTensors: genericList}
	in, err := InputsInit(scans.OpGivensScan, d, dt, Typical, true, rng)
	if err != nil {
		return r, err
	}
	// The forward output, computed once by the reference path on the host.
	fwd, err := Run(eager.New(), scans.OpGivensScan, scans.Forward, in, nil)
	if err != nil {
		return r, err
	}
	h := fwd[0]
	A, err := givensMatrixHost(in)
	if err != nil {
		return r, err
	}
	theta, sigma, x, h0 := in.Args[0], in.Args[1], in.Args[2], in.Args[3]

	inst, ok := b.(scans.Instrumented)
	if !ok {
		r.Kind = "host bytes (computed)"
		r.Fused = 2 * int64(theta.Bytes()+sigma.Bytes()+x.Bytes()+h0.Bytes())
		r.Fused += 2 * int64(h.Bytes())
		r.Generic = 2*int64(A.Bytes()+x.Bytes()+h0.Bytes()) + 2*int64(h.Bytes())
		r.Ratio = float64(r.Generic) / float64(r.Fused)
		return r, nil
	}
	r.Kind = "device peak"
	peak := func(op scans.Op, hosts []*scans.Host) (int64, error) {
		inst.ResetPeakBytes()
		base := inst.PeakBytes()
		dev, err := upload(b, hosts...)
		if err != nil {
			return 0, err
		}
		n := len(hosts) - 2
		grads, err := Backward(b, op, dev[:n], dev[n], dev[n+1])
		p := inst.PeakBytes() - base
		if rerr := release(b, append(dev, grads...)...); rerr != nil && err == nil {
			err = rerr
		}
		if err != nil {
			return 0, fmt.Errorf("%s backward: %w", op, err)
		}
		return p, nil
	}
	if r.Fused, err = peak(scans.OpGivensScan, []*scans.Host{theta, sigma, x, h0, h, in.Grad}); err != nil {
		return r, err
	}
	gen, err := genericInputs(in, A)
	if err != nil {
		return r, err
	}
	H5, err := reshape(h, d.B, d.T, d.N, d.K, 1)
	if err != nil {
		return r, err
	}
	if r.Generic, err = peak(scans.OpMatrixAffineScan, []*scans.Host{gen.Args[0], gen.Args[1], gen.Args[2], H5, gen.Grad}); err != nil {
		return r, err
	}
	if r.Fused > 0 {
		r.Ratio = float64(r.Generic) / float64(r.Fused)
	}
	return r, nil
}

// GivensPaths times forward+backward of the angle-fused Givens scan and of
// the generic path on b at d with cfg (MeasureInputs), on the same inputs:
// for the generic path A = diag(sigma) R(theta) is materialized on the
// host once, outside the timing, and matrix_affine_scan (v = 1) runs its
// forward and backward. The fused path's Measurement is for
// givens_scan, the generic path's for matrix_affine_scan.
func GivensPaths(b scans.Backend, d scans.Dims, dt scans.DType, cfg Timing, rng *rand.Rand) (fused, generic Measurement, err error) {
	d, err = NormalizeDims(scans.OpGivensScan, d)
	if err != nil {
		return fused, generic, err
	}
	in, err := InputsInit(scans.OpGivensScan, d, dt, Typical, true, rng)
	if err != nil {
		return fused, generic, err
	}
	A, err := givensMatrixHost(in)
	if err != nil {
		return fused, generic, err
	}
	gen, err := genericInputs(in, A)
	if err != nil {
		return fused, generic, err
	}
	if fused, err = MeasureInputs(b, in, ModeBackward, cfg); err != nil {
		return fused, generic, fmt.Errorf("timing the fused path: %w", err)
	}
	if generic, err = MeasureInputs(b, gen, ModeBackward, cfg); err != nil {
		return fused, generic, fmt.Errorf("timing the generic path: %w", err)
	}
	return fused, generic, nil
}

// genericInputs is the generic path's matrix_affine_scan input set for the
// Givens inputs in, with A materialized: A, X = x and H0 = h0 as (k, 1)
// columns, and the same output gradient.
func genericInputs(in *InputSet, A *scans.Host) (*InputSet, error) {
	d := in.Dims
	x, h0 := in.Args[2], in.Args[3]
	X5, err := reshape(x, d.B, d.T, d.N, d.K, 1)
	if err != nil {
		return nil, err
	}
	var H05 *scans.Host
	if h0 != nil {
		if H05, err = reshape(h0, d.B, d.N, d.K, 1); err != nil {
			return nil, err
		}
	}
	dH5, err := reshape(in.Grad, d.B, d.T, d.N, d.K, 1)
	if err != nil {
		return nil, err
	}
	return &InputSet{
		Op:     scans.OpMatrixAffineScan,
		Dims:   scans.Dims{B: d.B, T: d.T, N: d.N, K: d.K, V: 1},
		DType:  in.DType,
		Regime: in.Regime,
		Args:   []*scans.Host{A, X5, H05},
		Grad:   dH5,
	}, nil
}

// givensMatrixHost materializes A = diag(sigma) R(theta) (B,T,N,k,k) in
// the inputs' element type with eager.GivensMatrix.
func givensMatrixHost(in *InputSet) (*scans.Host, error) {
	d := in.Dims
	A := make([]float32, d.B*d.T*d.N*d.K*d.K)
	eager.GivensMatrix(d, in.Args[0].Float32s(), in.Args[1].Float32s(), A)
	return scans.Convert(in.DType, A, d.B, d.T, d.N, d.K, d.K)
}

// reshape returns a copy of h with another shape of the same size.
func reshape(h *scans.Host, shape ...int) (*scans.Host, error) {
	if scans.NumElements(shape) != h.Len() {
		return nil, fmt.Errorf("bench: reshape %v to %v", h, shape)
	}
	return scans.Convert(h.DType(), h.Float32s(), shape...)
}
