package conformance

import (
	"math"

	"github.com/mingru/scans"
)

// Gate returns the contract's tolerances for op's output (Forward) or its
// gradients (Backward) with inputs of type dt drawn as in the benchmark:
//
//	affine scans (linear, matrix, matrix_affine)  out (1e-5, 0)     grads (1e-3, 0)
//	parallel_scan_log, mingru_scan                 out (1e-4, 1e-4)  grads (1e-3, 1e-3)
//	angle-fused Givens                             out (1e-5, 0)     grads (1e-3, 1e-3)
//
// For f16 and bf16 the type's machine epsilon is added to rtol (one unit in
// the last place of the rounded output). An element passes when
// |got - want| <= atol + rtol*|want|.
func Gate(op scans.Op, dir scans.Direction, dt scans.DType) (atol, rtol float64) {
	bwd := dir == scans.Backward
	switch op {
	case scans.OpParallelScanLog, scans.OpMingruScan:
		atol, rtol = 1e-4, 1e-4
		if bwd {
			atol, rtol = 1e-3, 1e-3
		}
	case scans.OpGivensScan:
		atol, rtol = 1e-5, 0
		if bwd {
			atol, rtol = 1e-3, 1e-3
		}
	default:
		atol, rtol = 1e-5, 0
		if bwd {
			atol = 1e-3
		}
	}
	if dt != scans.F32 {
		rtol += dt.Epsilon()
	}
	return atol, rtol
}

// LongMemoryAtol is the long-memory regime's tolerance for one output
// tensor, the forward-error bound of a length-T recurrence in f32:
// 2 * T * 2^-24 * max|want| (rtol is 0). Non-finite wants are ignored.
func LongMemoryAtol(T int, want []float64) float64 {
	m := 0.0
	for _, w := range want {
		if a := math.Abs(w); a > m && !math.IsInf(a, 0) {
			m = a
		}
	}
	return 2 * float64(T) * math.Exp2(-24) * m
}

// Diff summarises how far got is from want.
type Diff struct {
	N      int     // elements compared
	Bad    int     // elements outside the gate (NaN counts)
	First  int     // index of the first bad element, -1 when none
	Got    float64 // got[First] (0 when none)
	Want   float64 // want[First]
	MaxAbs float64 // max |got - want| over finite pairs
	MaxRel float64 // max |got - want| / |want| over finite pairs with want != 0
	// Ratio is the largest |got - want| / (atol + rtol*|want|): at most 1
	// when every element passes, +Inf when an element is non-finite where
	// it should not be.
	Ratio float64
}

// Pass reports whether every element is inside the gate.
func (d Diff) Pass() bool { return d.Bad == 0 }

// Compare checks got against want element by element with
// |got - want| <= atol + rtol*|want|. A NaN in got fails unless want is NaN
// at the same place; an infinity passes only against the same infinity;
// a finite got fails where want is not finite. Slices of different
// lengths fail as a whole.
func Compare(got, want []float64, atol, rtol float64) Diff {
	d := Diff{N: len(want), First: -1}
	if len(got) != len(want) {
		d.Bad, d.Ratio = max(len(want), 1), math.Inf(1)
		return d
	}
	for i, w := range want {
		g := got[i]
		ok := true
		var ratio float64
		switch {
		case math.IsNaN(w) || math.IsInf(w, 0) || math.IsNaN(g) || math.IsInf(g, 0):
			// Non-finite values match only themselves (NaN matches NaN).
			ok = (math.IsNaN(w) && math.IsNaN(g)) || (w == g)
			if !ok {
				ratio = math.Inf(1)
			}
		default:
			e := math.Abs(g - w)
			tol := atol + rtol*math.Abs(w)
			ok = e <= tol
			if tol > 0 {
				ratio = e / tol
			} else if e > 0 {
				ratio = math.Inf(1)
			}
			d.MaxAbs = math.Max(d.MaxAbs, e)
			if w != 0 {
				d.MaxRel = math.Max(d.MaxRel, e/math.Abs(w))
			}
		}
		d.Ratio = math.Max(d.Ratio, ratio)
		if !ok {
			if d.Bad == 0 {
				d.First, d.Got, d.Want = i, g, w
			}
			d.Bad++
		}
	}
	return d
}
