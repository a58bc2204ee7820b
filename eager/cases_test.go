package eager

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mingru/scans"
)

// regime selects the input distributions: SPEC's benchmark draws, or the
// long-memory regime (decays 0.999 + 0.001u) where errors accumulate over T.
type regime int

const (
	benchDist regime = iota
	longMemory
)

// opCase is one call of an operation: its dims and forward inputs, in
// argument order (nil for an absent optional input).
type opCase struct {
	op     scans.Op
	d      scans.Dims
	in     [][]float32
	shapes [][]int
}

func (c opCase) String() string {
	h0 := "with h0"
	if len(c.in) > 0 && c.optional() >= 0 && c.in[c.optional()] == nil {
		h0 = "no h0"
	}
	return fmt.Sprintf("%s %v %s", c.op, c.d, h0)
}

// optional is the index of the optional initial state, or -1.
func (c opCase) optional() int {
	switch c.op {
	case scans.OpLinearScan, scans.OpMatrixScan, scans.OpMatrixAffineScan, scans.OpMingruScan:
		return 2
	case scans.OpGivensScan:
		return 3
	}
	return -1
}

// outShape is the forward output's shape.
func (c opCase) outShape() []int {
	d := c.d
	switch c.op {
	case scans.OpLinearScan, scans.OpParallelScanLog, scans.OpMingruScan:
		return []int{d.B, d.T, d.N}
	case scans.OpMatrixAffineScan:
		return []int{d.B, d.T, d.N, d.K, d.V}
	}
	return []int{d.B, d.T, d.N, d.K}
}

// gates are SPEC's (atol, rtol) for the output and for the gradients.
func (c opCase) gates() (atol, rtol, gatol, grtol float64) {
	switch c.op {
	case scans.OpParallelScanLog, scans.OpMingruScan:
		return logAtol, logRtol, logGradAtol, logGradRtol
	case scans.OpGivensScan:
		return givensAtol, 0, givensGradAtol, givensGradRtol
	}
	return affineAtol, 0, affineGradAtol, 0
}

// newCase draws fresh inputs for op at d (for matrix_scan K = 2, V = 1;
// for the elementwise ops K = V = 1).
func newCase(r *rand.Rand, op scans.Op, d scans.Dims, withH0 bool, reg regime) opCase {
	B, T, N, k, v := d.B, d.T, d.N, d.K, d.V
	decay := func() float64 {
		if reg == longMemory {
			return 0.999 + 0.001*r.Float64()
		}
		return 0.5 + 0.5*r.Float64()
	}
	decays := func(n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = float32(decay())
		}
		return out
	}
	scale := func() float64 { return 0.9 }
	if reg == longMemory {
		scale = decay
	}
	var h0 []float32
	c := opCase{op: op, d: d}
	switch op {
	case scans.OpLinearScan:
		if withH0 {
			h0 = normal(r, B*N)
		}
		c.in = [][]float32{decays(B * T * N), normal(r, B*T*N), h0}
		c.shapes = [][]int{{B, T, N}, {B, T, N}, {B, N}}
	case scans.OpMatrixScan, scans.OpMatrixAffineScan:
		if withH0 {
			h0 = normal(r, B*N*k*v)
		}
		c.in = [][]float32{rotationBlocks(r, B*T*N, k, scale), normal(r, B*T*N*k*v), h0}
		if op == scans.OpMatrixScan {
			c.shapes = [][]int{{B, T, N, 2, 2}, {B, T, N, 2}, {B, N, 2}}
		} else {
			c.shapes = [][]int{{B, T, N, k, k}, {B, T, N, k, v}, {B, N, k, v}}
		}
	case scans.OpParallelScanLog:
		lc := negSoftplus(r, B*T*N)
		if reg == longMemory {
			for i := range lc {
				lc[i] = float32(math.Log(decay()))
			}
		}
		c.in = [][]float32{lc, negSoftplus(r, B*(T+1)*N)}
		c.shapes = [][]int{{B, T, N}, {B, T + 1, N}}
	case scans.OpGivensScan:
		if withH0 {
			h0 = normal(r, B*N*k)
		}
		c.in = [][]float32{uniform(r, B*T*N*(k-1), -math.Pi, math.Pi), decays(B * T * N * k), normal(r, B*T*N*k), h0}
		c.shapes = [][]int{{B, T, N, k - 1}, {B, T, N, k}, {B, T, N, k}, {B, N, k}}
	case scans.OpMingruScan:
		if withH0 {
			h0 = uniform(r, B*N, 0.1, 2)
		}
		k := normal(r, B*T*N)
		if reg == longMemory {
			for i := range k {
				a := decay()
				k[i] = float32(math.Log((1 - a) / a))
			}
		}
		c.in = [][]float32{k, normal(r, B*T*N), h0}
		c.shapes = [][]int{{B, T, N}, {B, T, N}, {B, N}}
	default:
		panic("unknown op " + string(op))
	}
	return c
}

// reference is the independent float64 recurrence of SPEC for c's inputs.
func (c opCase) reference() []float64 {
	d, in := c.d, make([][]float64, len(c.in))
	for i, x := range c.in {
		in[i] = f64(x)
	}
	switch c.op {
	case scans.OpLinearScan:
		return refLinear(d.B, d.T, d.N, in[0], in[1], in[2])
	case scans.OpMatrixScan, scans.OpMatrixAffineScan:
		return refAffine(d.B, d.T, d.N, d.K, d.V, in[0], in[1], in[2])
	case scans.OpParallelScanLog:
		return refLog(d.B, d.T, d.N, in[0], in[1])
	case scans.OpMingruScan:
		return refMingru(d.B, d.T, d.N, in[0], in[1], in[2])
	}
	return refGivens(d.B, d.T, d.N, d.K, in[0], in[1], in[2], in[3])
}

// tensors makes host tensors of type dt from c's inputs (rounded to dt).
func (c opCase) tensors(t testing.TB, dt scans.DType) []scans.Tensor {
	t.Helper()
	out := make([]scans.Tensor, len(c.in))
	for i, x := range c.in {
		if x == nil {
			continue
		}
		h, err := scans.Convert(dt, x, c.shapes[i]...)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = h
	}
	return out
}

// forward runs c's op on the backend.
func forward(be scans.Backend, op scans.Op, in []scans.Tensor) (scans.Tensor, error) {
	switch op {
	case scans.OpLinearScan:
		return scans.Typed{Runner: be}.LinearScan(in[0], in[1], in[2])
	case scans.OpMatrixScan:
		return scans.Typed{Runner: be}.MatrixScan(in[0], in[1], in[2])
	case scans.OpMatrixAffineScan:
		return scans.Typed{Runner: be}.MatrixAffineScan(in[0], in[1], in[2])
	case scans.OpParallelScanLog:
		return scans.Typed{Runner: be}.ParallelScanLog(in[0], in[1])
	case scans.OpMingruScan:
		return scans.Typed{Runner: be}.MingruScan(in[0], in[1], in[2])
	}
	return scans.Typed{Runner: be}.GivensScan(in[0], in[1], in[2], in[3])
}

// backward runs c's op's backward on the backend; the gradients come in
// argument order.
func backward(be scans.Backend, op scans.Op, in []scans.Tensor, h, dh scans.Tensor) ([]scans.Tensor, error) {
	var g [4]scans.Tensor
	var err error
	switch op {
	case scans.OpLinearScan:
		g[0], g[1], g[2], err = scans.Typed{Runner: be}.LinearScanBackward(in[0], in[1], in[2], h, dh)
		return g[:3], err
	case scans.OpMatrixScan:
		g[0], g[1], g[2], err = scans.Typed{Runner: be}.MatrixScanBackward(in[0], in[1], in[2], h, dh)
		return g[:3], err
	case scans.OpMatrixAffineScan:
		g[0], g[1], g[2], err = scans.Typed{Runner: be}.MatrixAffineScanBackward(in[0], in[1], in[2], h, dh)
		return g[:3], err
	case scans.OpParallelScanLog:
		g[0], g[1], err = scans.Typed{Runner: be}.ParallelScanLogBackward(in[0], in[1], h, dh)
		return g[:2], err
	case scans.OpMingruScan:
		g[0], g[1], g[2], err = scans.Typed{Runner: be}.MingruScanBackward(in[0], in[1], in[2], h, dh)
		return g[:3], err
	}
	g[0], g[1], g[2], g[3], err = scans.Typed{Runner: be}.GivensScanBackward(in[0], in[1], in[2], in[3], h, dh)
	return g[:4], err
}

// kernelForward runs the generic kernel of c's op in F on in, into an
// output poisoned with NaN.
func kernelForward[F Float](c opCase, in [][]F) []F {
	d := c.d
	out := nanSlice[F](scans.NumElements(c.outShape()))
	switch c.op {
	case scans.OpLinearScan:
		LinearForward(d, in[0], in[1], in[2], out)
	case scans.OpMatrixScan, scans.OpMatrixAffineScan:
		AffineForward(d, in[0], in[1], in[2], out)
	case scans.OpParallelScanLog:
		LogForward(d, in[0], in[1], out)
	case scans.OpGivensScan:
		GivensForward(d, in[0], in[1], in[2], in[3], out)
	case scans.OpMingruScan:
		MingruForward(d, in[0], in[1], in[2], out)
	}
	return out
}

// kernelBackward runs the generic backward of c's op in F into gradients
// poisoned with NaN (nil for an absent optional input), in argument order.
func kernelBackward[F Float](c opCase, in [][]F, h, dh []F) [][]F {
	d := c.d
	g := make([][]F, len(in))
	for i, x := range in {
		if x != nil {
			g[i] = nanSlice[F](len(x))
		}
	}
	switch c.op {
	case scans.OpLinearScan:
		LinearBackward(d, in[0], in[2], h, dh, g[0], g[1], g[2])
	case scans.OpMatrixScan, scans.OpMatrixAffineScan:
		AffineBackward(d, in[0], in[2], h, dh, g[0], g[1], g[2])
	case scans.OpParallelScanLog:
		LogBackward(d, in[0], in[1], h, dh, g[0], g[1])
	case scans.OpGivensScan:
		GivensBackward(d, in[0], in[1], in[3], h, dh, g[0], g[1], g[2], g[3])
	case scans.OpMingruScan:
		MingruBackward(d, in[0], in[1], in[2], h, dh, g[0], g[1], g[2])
	}
	return g
}

// inputs64 and inputs32 return c's inputs as float64 or float32 slices.
func (c opCase) inputs64() [][]float64 {
	out := make([][]float64, len(c.in))
	for i, x := range c.in {
		out[i] = f64(x)
	}
	return out
}

// names are the argument names of each op, in order.
var names = map[scans.Op][]string{
	scans.OpLinearScan:       {"a", "b", "h0"},
	scans.OpMatrixScan:       {"A", "b", "h0"},
	scans.OpMatrixAffineScan: {"A", "X", "H0"},
	scans.OpParallelScanLog:  {"log_coeffs", "log_values"},
	scans.OpGivensScan:       {"theta", "sigma", "x", "h0"},
	scans.OpMingruScan:       {"k", "x", "h0"},
}

// dims returns the Dims of op for the given sizes.
func dims(op scans.Op, B, T, N, k, v int) scans.Dims {
	switch op {
	case scans.OpLinearScan, scans.OpParallelScanLog, scans.OpMingruScan:
		return scans.Dims{B: B, T: T, N: N, K: 1, V: 1}
	case scans.OpMatrixScan:
		return scans.Dims{B: B, T: T, N: N, K: 2, V: 1}
	case scans.OpGivensScan:
		return scans.Dims{B: B, T: T, N: N, K: k, V: 1}
	}
	return scans.Dims{B: B, T: T, N: N, K: k, V: v}
}

// blockSizes are the (k, v) of the block ops' tests: every op is checked
// at sizes inside the GPU envelope and outside it.
func blockSizes(op scans.Op) [][2]int {
	switch op {
	case scans.OpMatrixAffineScan:
		return [][2]int{{1, 1}, {2, 2}, {3, 5}, {4, 4}, {8, 8}, {16, 1}, {5, 3}}
	case scans.OpGivensScan:
		return [][2]int{{2, 1}, {3, 1}, {4, 1}, {5, 1}, {8, 1}, {16, 1}}
	}
	return [][2]int{{1, 1}}
}
