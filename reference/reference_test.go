package reference

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/eager"
)

func newRNG(t *testing.T) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, 0x5ca115))
}

// refCase is a small random problem in float64 for the reference's own
// checks, drawn from the benchmark distributions.
type refCase struct {
	op   scans.Op
	d    scans.Dims
	args [][]float64 // ArgNames order; nil for an absent initial state
	dout []float64
}

func drawRef(t *testing.T, rng *rand.Rand, op scans.Op, d scans.Dims, init bool) refCase {
	t.Helper()
	in, err := bench.InputsInit(op, d, scans.F32, bench.Typical, init, rng)
	if err != nil {
		t.Fatal(err)
	}
	c := refCase{op: op, d: in.Dims, dout: in.Grad.Float64s()}
	for _, a := range in.Args {
		if a == nil {
			c.args = append(c.args, nil)
		} else {
			c.args = append(c.args, a.Float64s())
		}
	}
	return c
}

func (c refCase) forward() []float64 {
	a := c.args
	switch c.op {
	case scans.OpLinearScan, scans.OpMatrixScan, scans.OpMatrixAffineScan:
		return affineFwd(c.d, a[0], a[1], a[2])
	case scans.OpParallelScanLog:
		return logFwd(c.d, a[0], a[1])
	case scans.OpGivensScan:
		return givensFwd(c.d, a[0], a[1], a[2], a[3])
	}
	panic("unknown op")
}

func (c refCase) backward(h []float64) [][]float64 {
	a := c.args
	switch c.op {
	case scans.OpLinearScan, scans.OpMatrixScan, scans.OpMatrixAffineScan:
		gA, gX, gH0 := affineBwd(c.d, a[0], a[2], h, c.dout)
		return [][]float64{gA, gX, gH0}
	case scans.OpParallelScanLog:
		glc, glv := logBwd(c.d, a[0], a[1], h, c.dout)
		return [][]float64{glc, glv}
	case scans.OpGivensScan:
		g0, g1, g2, g3 := givensBwd(c.d, a[0], a[1], a[3], h, c.dout)
		return [][]float64{g0, g1, g2, g3}
	}
	panic("unknown op")
}

// eager64 runs eager's generic kernels in float64: code written
// independently of the reference, so agreement checks both.
func (c refCase) eager64() (h []float64, grads [][]float64) {
	a, d := c.args, c.d
	h = make([]float64, len(c.dout))
	grads = make([][]float64, len(a))
	for i, x := range a {
		if x != nil {
			grads[i] = make([]float64, len(x))
		}
	}
	g := grads
	switch c.op {
	case scans.OpLinearScan:
		eager.LinearForward(d, a[0], a[1], a[2], h)
		eager.LinearBackward(d, a[0], a[2], h, c.dout, g[0], g[1], g[2])
	case scans.OpMatrixScan, scans.OpMatrixAffineScan:
		eager.AffineForward(d, a[0], a[1], a[2], h)
		eager.AffineBackward(d, a[0], a[2], h, c.dout, g[0], g[1], g[2])
	case scans.OpParallelScanLog:
		eager.LogForward(d, a[0], a[1], h)
		eager.LogBackward(d, a[0], a[1], h, c.dout, g[0], g[1])
	case scans.OpGivensScan:
		eager.GivensForward(d, a[0], a[1], a[2], a[3], h)
		eager.GivensBackward(d, a[0], a[1], a[3], h, c.dout, g[0], g[1], g[2], g[3])
	}
	return h, grads
}

var refShapes = []struct {
	op scans.Op
	d  scans.Dims
}{
	{scans.OpLinearScan, scans.Dims{B: 2, T: 7, N: 3}},
	{scans.OpMatrixScan, scans.Dims{B: 2, T: 6, N: 3}},
	{scans.OpMatrixAffineScan, scans.Dims{B: 2, T: 5, N: 2, K: 3, V: 2}},
	{scans.OpMatrixAffineScan, scans.Dims{B: 1, T: 4, N: 1, K: 4, V: 1}},
	{scans.OpParallelScanLog, scans.Dims{B: 2, T: 7, N: 3}},
	{scans.OpGivensScan, scans.Dims{B: 2, T: 5, N: 2, K: 2}},
	{scans.OpGivensScan, scans.Dims{B: 1, T: 6, N: 2, K: 5}},
	{scans.OpGivensScan, scans.Dims{B: 1, T: 4, N: 1, K: 8}},
}

func relClose(got, want []float64, tol float64) (int, bool) {
	if len(got) != len(want) {
		return -1, false
	}
	scale := 0.0
	for _, w := range want {
		scale = math.Max(scale, math.Abs(w))
	}
	for i := range want {
		if !(math.Abs(got[i]-want[i]) <= tol*(1+scale)) {
			return i, false
		}
	}
	return 0, true
}

// TestReferenceMatchesEagerFloat64 holds the reference and eager's
// generic kernels, run in float64, to each other: two independent
// implementations of the contract.
func TestReferenceMatchesEagerFloat64(t *testing.T) {
	rng := newRNG(t)
	for _, s := range refShapes {
		for _, init := range []bool{true, false} {
			c := drawRef(t, rng, s.op, s.d, init)
			h := c.forward()
			eh, eg := c.eager64()
			if i, ok := relClose(h, eh, 1e-12); !ok {
				t.Errorf("%s %v init=%v: forward differs at %d: reference %g, eager %g", s.op, s.d, init, i, h[i], eh[i])
			}
			grads := c.backward(eh)
			for j, g := range grads {
				if (g == nil) != (eg[j] == nil) {
					t.Errorf("%s %v: gradient %d nil-ness differs", s.op, s.d, j)
					continue
				}
				if i, ok := relClose(g, eg[j], 1e-12); !ok {
					t.Errorf("%s %v init=%v: %s differs at %d: reference %g, eager %g",
						s.op, s.d, init, bench.GradNames(s.op)[j], i, g[i], eg[j][i])
				}
			}
		}
	}
}

// TestReferenceGradients checks every gradient of the reference against
// central finite differences of L = sum(dout * forward(args)).
func TestReferenceGradients(t *testing.T) {
	rng := newRNG(t)
	for _, s := range refShapes {
		c := drawRef(t, rng, s.op, s.d, true)
		grads := c.backward(c.forward())
		loss := func() float64 {
			h := c.forward()
			l := 0.0
			for i := range h {
				l += c.dout[i] * h[i]
			}
			return l
		}
		for j, arg := range c.args {
			for i := range arg {
				const eps = 1e-6
				x := arg[i]
				arg[i] = x + eps
				lp := loss()
				arg[i] = x - eps
				lm := loss()
				arg[i] = x
				fd := (lp - lm) / (2 * eps)
				if math.Abs(fd-grads[j][i]) > 1e-6*(1+math.Abs(fd)) {
					t.Errorf("%s %v: %s[%d]: backward %g, finite difference %g",
						s.op, s.d, bench.GradNames(s.op)[j], i, grads[j][i], fd)
				}
			}
		}
	}
}

// TestReferenceGivensIsAffine checks the angle-fused Givens forward
// against the generic path: A = diag(sigma) R(theta) materialized with
// GivensRotation and run through the affine scan.
func TestReferenceGivensIsAffine(t *testing.T) {
	rng := newRNG(t)
	for _, k := range []int{2, 3, 4, 8, 16} {
		c := drawRef(t, rng, scans.OpGivensScan, scans.Dims{B: 2, T: 9, N: 2, K: k}, true)
		d := c.d
		theta, sigma := c.args[0], c.args[1]
		A := make([]float64, d.B*d.T*d.N*k*k)
		m := make([]float64, k*k)
		for blk := 0; blk < d.B*d.T*d.N; blk++ {
			bench.GivensRotation(k, theta[blk*(k-1):(blk+1)*(k-1)], m)
			for i := 0; i < k; i++ {
				for j := 0; j < k; j++ {
					A[blk*k*k+i*k+j] = sigma[blk*k+i] * m[i*k+j]
				}
			}
		}
		want := affineFwd(d, A, c.args[2], c.args[3])
		if i, ok := relClose(c.forward(), want, 1e-12); !ok {
			t.Errorf("k=%d: fused and generic differ at %d", k, i)
		}
	}
}

// TestReferenceLogSpace checks the log-space scan against the linear form
// where the latter is exact enough, and that it stays finite where the
// linear form would underflow.
func TestReferenceLogSpace(t *testing.T) {
	rng := newRNG(t)
	c := drawRef(t, rng, scans.OpParallelScanLog, scans.Dims{B: 2, T: 11, N: 3}, true)
	d := c.d
	lc, lv := c.args[0], c.args[1]
	a := make([]float64, len(lc))
	b := make([]float64, len(lc))
	h0 := make([]float64, d.B*d.N)
	for bi := 0; bi < d.B; bi++ {
		for t := 0; t < d.T; t++ {
			for n := 0; n < d.N; n++ {
				a[(bi*d.T+t)*d.N+n] = math.Exp(lc[(bi*d.T+t)*d.N+n])
				b[(bi*d.T+t)*d.N+n] = math.Exp(lv[(bi*(d.T+1)+t+1)*d.N+n])
			}
		}
		for n := 0; n < d.N; n++ {
			h0[bi*d.N+n] = math.Exp(lv[bi*(d.T+1)*d.N+n])
		}
	}
	lin := affineFwd(scans.Dims{B: d.B, T: d.T, N: d.N, K: 1, V: 1}, a, b, h0)
	if i, ok := relClose(c.forward(), lin, 1e-12); !ok {
		t.Errorf("log-space and linear forms differ at %d", i)
	}
	// exp(1000) overflows float64, but exp(-1000 + 1000) does not: the
	// log-space scan gets h_0 = exp(lc_0 + lv_0) + exp(lv_1) = 1 + e^-1
	// where the linear form would compute Inf * 0.
	d1 := scans.Dims{B: 1, T: 2, N: 1, K: 1, V: 1}
	h := logFwd(d1, []float64{-1000, -0.5}, []float64{1000, -1, -2})
	want0 := 1 + math.Exp(-1)
	want1 := math.Exp(-0.5)*want0 + math.Exp(-2)
	if math.Abs(h[0]-want0) > 1e-12 || math.Abs(h[1]-want1) > 1e-12 {
		t.Errorf("h = %v, want [%g %g]", h, want0, want1)
	}
}

// TestInputsIndependentOfCores: the same seed draws the same inputs
// whatever the number of cores.
func TestInputsIndependentOfCores(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	d := scans.Dims{B: 4, T: 300, N: 9, K: 8, V: 4} // several chunks
	draw := func(procs int) *bench.InputSet {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		in, err := bench.InputsInit(scans.OpMatrixAffineScan, d, scans.F32, bench.Typical, true, rand.New(rand.NewPCG(seed, 1)))
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	a, b := draw(1), draw(4)
	for i := range a.Args {
		if !slices.Equal(a.Args[i].Float32s(), b.Args[i].Float32s()) {
			t.Errorf("%s differs between 1 and 4 cores", bench.ArgNames(scans.OpMatrixAffineScan)[i])
		}
	}
	if !slices.Equal(a.Grad.Float32s(), b.Grad.Float32s()) {
		t.Error("the gradient differs between 1 and 4 cores")
	}
}
