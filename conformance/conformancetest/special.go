package conformancetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/conformance"
)

// TestSpecialValues puts NaN, +Inf and -Inf into one element of one batch
// entry of one input (each input in turn) and checks that every output of
// b agrees with eager: non-finite where eager's is (the same kind), finite
// and within the gate elsewhere, so no other batch entry is touched. T =
// 40 and 300 reach the chunked paths of the GPU kernels. Every operation
// runs in f32; the elementwise ones also in f16 and bf16 with an even
// number of channels (the 16-bit kernels that take two channels at once).
// It is the contract's "NaN and Inf propagate as IEEE arithmetic says, on
// every backend alike".
func TestSpecialValues(t *testing.T, b scans.Backend) {
	t.Helper()
	ref, seed := checkStart(t, b)
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}
	type row struct {
		op scans.Op
		T  int
		dt scans.DType
	}
	rows := []row{
		{scans.OpLinearScan, 40, scans.F32}, {scans.OpLinearScan, 300, scans.F32},
		{scans.OpParallelScanLog, 40, scans.F32}, {scans.OpParallelScanLog, 300, scans.F32},
		{scans.OpMatrixScan, 40, scans.F32}, {scans.OpMatrixScan, 300, scans.F32},
		{scans.OpMatrixAffineScan, 40, scans.F32}, {scans.OpMatrixAffineScan, 300, scans.F32},
		{scans.OpGivensScan, 40, scans.F32}, {scans.OpGivensScan, 300, scans.F32},
		{scans.OpMingruScan, 40, scans.F32}, {scans.OpMingruScan, 300, scans.F32},
	}
	for _, dt := range []scans.DType{scans.F16, scans.BF16} {
		rows = append(rows, row{scans.OpLinearScan, 300, dt}, row{scans.OpParallelScanLog, 300, dt},
			row{scans.OpMatrixAffineScan, 300, dt}, row{scans.OpMingruScan, 300, dt})
	}
	for _, c := range rows {
		op := c.op
		d := scans.Dims{B: 3, T: c.T, N: 3, K: 1, V: 1}
		if c.dt != scans.F32 {
			d.N = 4
		}
		switch op {
		case scans.OpMatrixScan:
			d.K = 2
		case scans.OpMatrixAffineScan:
			d.K, d.V = 4, 2
		case scans.OpGivensScan:
			d.K = 4
		}
		for _, sp := range specials {
			for draw := 0; draw < 2*len(bench.ArgNames(op)); draw++ {
				dir := scans.Forward
				if draw%2 == 1 {
					dir = scans.Backward
				}
				rng := rand.New(rand.NewPCG(seed, uint64(len(op)*1000+int(c.dt)*100+draw)))
				in, err := bench.InputsInit(op, d, c.dt, bench.Typical, true, rng)
				if err != nil {
					t.Fatal(err)
				}
				// One element of batch entry 1 of one input: a pair of
				// draws (forward, backward) for each input in turn, the
				// initial state too (itself per batch entry).
				x := in.Args[(draw/2)%len(in.Args)]
				per := x.Len() / d.B
				x.Set(per+rng.IntN(per), sp)
				want, got := againstRef(t, ref, b, op, dir, in, fmt.Sprintf("%s %s %v %v", op, dir, c.dt, sp))
				atol, rtol := conformance.Gate(op, dir, c.dt)
				nonFinite := matchIEEE(t, fmt.Sprintf("%s %s %v with %v", op, dir, c.dt, sp), want, got, nil, atol, rtol)
				if nonFinite == 0 && math.IsNaN(float64(sp)) && draw < 2 {
					t.Errorf("%s %s %v with %v: no output is non-finite; the special value was not exercised", op, dir, c.dt, sp)
				}
			}
		}
	}
}

// matchIEEE checks got against want element by element: NaN where want is
// NaN, the same infinity where want is infinite, and within the gate
// (atol, rtol) elsewhere. It reports the first few mismatches under label
// and returns the number of non-finite elements of want.
//
// exact, when not nil, holds each output's exact values in float64
// (before any rounding): at the edge of the float range, where one of
// want and got is infinite and the other finite, got passes when it is
// the rounding of a value within the gate of the exact one (see
// overflowEdge).
func matchIEEE(t *testing.T, label string, want, got []*scans.Host, exact [][]float64, atol, rtol float64) (nonFinite int) {
	t.Helper()
	for k := range want {
		if want[k] == nil {
			continue
		}
		w, g := want[k].Float32s(), got[k].Float32s()
		bad := 0
		for i := range w {
			wf, gf := float64(w[i]), float64(g[i])
			ok := false
			if math.IsNaN(wf) || math.IsInf(wf, 0) {
				nonFinite++
			}
			switch {
			case math.IsNaN(wf):
				ok = math.IsNaN(gf)
			case math.IsInf(wf, 0):
				ok = gf == wf
			default:
				ok = !math.IsNaN(gf) && math.Abs(gf-wf) <= atol+rtol*math.Abs(wf)
			}
			if !ok && exact != nil && !math.IsNaN(gf) && (math.IsInf(wf, 0) || math.IsInf(gf, 0)) {
				ok = overflowEdge(want[k].DType(), exact[k][i], gf, atol, rtol)
			}
			if !ok {
				if bad < 3 {
					t.Errorf("%s: output %d element %d: got %v, want %v", label, k, i, gf, wf)
				}
				bad++
			}
		}
	}
	return nonFinite
}

// overflowEdge says whether g is what rounding to dt makes of some value
// within the gate of r, an exact result. Near the largest finite value of
// dt, a result inside the gate may round to it or to infinity: both are
// right.
func overflowEdge(dt scans.DType, r, g, atol, rtol float64) bool {
	if math.IsNaN(r) {
		return false
	}
	tol := atol + rtol*math.Abs(r)
	lo := float64(scans.RoundTo(dt, float32(r-tol)))
	hi := float64(scans.RoundTo(dt, float32(r+tol)))
	return lo <= g && g <= hi
}

// againstRef runs op in direction dir on in, on the reference ref and on
// b, and returns both results. The backward takes h from ref's forward.
// It ends the test where either fails; label names the row.
func againstRef(t *testing.T, ref, b scans.Backend, op scans.Op, dir scans.Direction, in *bench.InputSet,
	label string) (want, got []*scans.Host) {
	t.Helper()
	var h *scans.Host
	if dir == scans.Backward {
		out, err := bench.Run(ref, op, scans.Forward, in, nil)
		if err != nil {
			t.Fatalf("%s: the reference's forward: %v", label, err)
		}
		h = out[0]
	}
	want, err := bench.Run(ref, op, dir, in, h)
	if err != nil {
		t.Fatalf("%s: the reference: %v", label, err)
	}
	got, err = bench.Run(b, op, dir, in, h)
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	return want, got
}
