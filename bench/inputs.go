package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mingru/scans"
)

// Regime is a distribution of inputs.
type Regime string

// The two regimes of the contract.
const (
	// Typical draws the benchmark's distributions: a, sigma uniform in
	// (0.5, 1); b, x, X, h0 standard normal; A = 0.9 R(theta) with uniform
	// angles; log_coeffs = -softplus(z), log_values = -softplus(z');
	// theta uniform in (-pi, pi); for mingru_scan k, x standard normal
	// and h0 uniform in (0.5, 1) (h0 must be >= 0).
	Typical Regime = "benchmark"
	// LongMemory draws decays near 1 (a, sigma = 0.999 + 0.001u,
	// log_coeffs = log(0.999 + 0.001u), A = rho R(theta) with rho =
	// 0.999 + 0.001u; mingru_scan's k = log((1-a)/a) with a = 0.999 +
	// 0.001u, so that its decay 1 - sigmoid(k) is a), where rounding
	// errors accumulate over T.
	LongMemory Regime = "long-memory"
)

// InputSet is the data of one check: the forward inputs of an operation
// and a gradient for its output, all host tensors of one element type.
type InputSet struct {
	Op     scans.Op
	Dims   scans.Dims
	DType  scans.DType
	Regime Regime
	// Args are the forward inputs in the contract's order (ArgNames). The
	// optional initial state (h0, H0) is nil when absent.
	Args []*scans.Host
	// Grad is a random gradient of the forward output (standard normal).
	Grad *scans.Host
}

// Init reports whether the optional initial state is present (always false
// for parallel_scan_log, which has none).
func (s *InputSet) Init() bool {
	i := initIndex(s.Op)
	return i >= 0 && s.Args[i] != nil
}

// Tensors returns Args as scans.Tensor values, with a nil interface (not a
// typed nil) for an absent initial state.
func (s *InputSet) Tensors() []scans.Tensor {
	out := make([]scans.Tensor, len(s.Args))
	for i, a := range s.Args {
		if a != nil {
			out[i] = a
		}
	}
	return out
}

// Bytes is the size of the forward inputs in bytes.
func (s *InputSet) Bytes() int64 {
	var n int64
	for _, a := range s.Args {
		if a != nil {
			n += int64(a.Bytes())
		}
	}
	return n
}

// ArgNames lists an operation's forward inputs in the contract's order
// (scans.Spec's).
func ArgNames(op scans.Op) []string {
	if spec := scans.Spec(op); spec != nil {
		return spec.ArgNames(scans.Forward)
	}
	return nil
}

// GradNames lists the names of an operation's input gradients, in the
// order its backward returns them.
func GradNames(op scans.Op) []string {
	names := ArgNames(op)
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "d" + n
	}
	return out
}

// OutputName is the name of an operation's forward output ("h" or "H").
func OutputName(op scans.Op) string {
	if op == scans.OpMatrixAffineScan {
		return "H"
	}
	return "h"
}

// initIndex is the position of the optional initial state among the
// forward inputs, or -1.
func initIndex(op scans.Op) int {
	switch op {
	case scans.OpLinearScan, scans.OpMatrixScan, scans.OpMatrixAffineScan, scans.OpMingruScan:
		return 2
	case scans.OpGivensScan:
		return 3
	}
	return -1
}

// HasInit reports whether op takes an optional initial state.
func HasInit(op scans.Op) bool { return initIndex(op) >= 0 }

// ArgShapes returns the shape of each forward input of op at d, in
// ArgNames order, and the output's shape. For the elementwise operations
// D is d.N.
func ArgShapes(op scans.Op, d scans.Dims) (args [][]int, out []int, err error) {
	B, T, N, K, V := d.B, d.T, d.N, d.K, d.V
	switch op {
	case scans.OpLinearScan, scans.OpMingruScan:
		out = []int{B, T, N}
		return [][]int{out, out, {B, N}}, out, nil
	case scans.OpMatrixScan:
		out = []int{B, T, N, 2}
		return [][]int{{B, T, N, 2, 2}, out, {B, N, 2}}, out, nil
	case scans.OpMatrixAffineScan:
		out = []int{B, T, N, K, V}
		return [][]int{{B, T, N, K, K}, out, {B, N, K, V}}, out, nil
	case scans.OpParallelScanLog:
		out = []int{B, T, N}
		return [][]int{out, {B, T + 1, N}}, out, nil
	case scans.OpGivensScan:
		out = []int{B, T, N, K}
		return [][]int{{B, T, N, K - 1}, out, out, {B, N, K}}, out, nil
	}
	return nil, nil, fmt.Errorf("bench: unknown operation %q", op)
}

// NormalizeDims fills the sizes an operation fixes (K = V = 1 for the
// elementwise ops, K = 2, V = 1 for matrix_scan, V = 1 for givens_scan) and
// checks that every size is at least 1 (Givens: k >= 2).
func NormalizeDims(op scans.Op, d scans.Dims) (scans.Dims, error) {
	switch op {
	case scans.OpLinearScan, scans.OpParallelScanLog, scans.OpMingruScan:
		d.K, d.V = 1, 1
	case scans.OpMatrixScan:
		d.K, d.V = 2, 1
	case scans.OpGivensScan:
		d.V = 1
		if d.K < 2 {
			return d, fmt.Errorf("bench: %s needs k >= 2, got %v", op, d)
		}
	case scans.OpMatrixAffineScan:
	default:
		return d, fmt.Errorf("bench: unknown operation %q", op)
	}
	if d.B < 1 || d.T < 1 || d.N < 1 || d.K < 1 || d.V < 1 {
		return d, fmt.Errorf("bench: %s: every size must be >= 1, got %v", op, d)
	}
	return d, nil
}

// Inputs draws fresh inputs for op at dims d in element type dt from the
// regime's distributions, and a standard-normal output gradient. The
// optional initial state is present (standard normal) with probability 3/4
// and absent otherwise, so both paths get exercised; use InputsInit to
// choose. No element is zero after rounding to dt. A nil rng means one
// seeded from the clock.
func Inputs(op scans.Op, d scans.Dims, dt scans.DType, r Regime, rng *rand.Rand) (*InputSet, error) {
	rng = orClock(rng)
	return InputsInit(op, d, dt, r, rng.IntN(4) != 0, rng)
}

// InputsInit is Inputs with the presence of the initial state chosen by
// init (ignored for parallel_scan_log).
func InputsInit(op scans.Op, d scans.Dims, dt scans.DType, r Regime, init bool, rng *rand.Rand) (*InputSet, error) {
	rng = orClock(rng)
	if !dt.Valid() {
		return nil, fmt.Errorf("bench: invalid element type %v", dt)
	}
	if r != Typical && r != LongMemory {
		return nil, fmt.Errorf("bench: unknown regime %q", r)
	}
	d, err := NormalizeDims(op, d)
	if err != nil {
		return nil, err
	}
	shapes, outShape, err := ArgShapes(op, d)
	if err != nil {
		return nil, err
	}
	g := gen{rng: rng, dt: dt}
	long := r == LongMemory
	vals := make([][]float32, len(shapes))
	switch op {
	case scans.OpLinearScan:
		vals[0] = g.decay(shapes[0], long)
		vals[1] = g.normal(shapes[1])
		vals[2] = g.normal(shapes[2])
	case scans.OpMatrixScan, scans.OpMatrixAffineScan:
		vals[0] = g.transitions(d, long)
		vals[1] = g.normal(shapes[1])
		vals[2] = g.normal(shapes[2])
	case scans.OpParallelScanLog:
		vals[0] = g.logCoeffs(shapes[0], long)
		vals[1] = g.fill(shapes[1], func(r *rand.Rand) float64 { return -softplus(r.NormFloat64()) })
	case scans.OpGivensScan:
		vals[0] = g.fill(shapes[0], func(r *rand.Rand) float64 { return math.Pi * (2*r.Float64() - 1) })
		vals[1] = g.decay(shapes[1], long)
		vals[2] = g.normal(shapes[2])
		vals[3] = g.normal(shapes[3])
	case scans.OpMingruScan:
		if long {
			vals[0] = g.fill(shapes[0], func(r *rand.Rand) float64 {
				keep := 0.999 + 0.001*r.Float64()
				return math.Log((1 - keep) / keep)
			})
		} else {
			vals[0] = g.normal(shapes[0])
		}
		vals[1] = g.normal(shapes[1])
		vals[2] = g.decay(shapes[2], false)
	}
	s := &InputSet{Op: op, Dims: d, DType: dt, Regime: r, Args: make([]*scans.Host, len(shapes))}
	for i, v := range vals {
		if i == initIndex(op) && !init {
			continue
		}
		if s.Args[i], err = hostOf(dt, v, shapes[i]); err != nil {
			return nil, err
		}
	}
	if s.Grad, err = hostOf(dt, g.normal(outShape), outShape); err != nil {
		return nil, err
	}
	return s, nil
}

// hostOf wraps vals (f32, no copy) or rounds them to a 16-bit type.
func hostOf(dt scans.DType, vals []float32, shape []int) (*scans.Host, error) {
	if dt == scans.F32 {
		return scans.FromFloat32(vals, shape...)
	}
	return scans.Convert(dt, vals, shape...)
}

func orClock(rng *rand.Rand) *rand.Rand {
	if rng != nil {
		return rng
	}
	return rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x5ca9))
}

// gen draws values that are never zero once rounded to dt. Large tensors
// are drawn in fixed chunks of chunkElems elements on all cores, each chunk
// from its own generator seeded from rng in order, so that the values
// depend on rng's seed only, not on the number of cores.
type gen struct {
	rng *rand.Rand
	dt  scans.DType
}

const chunkElems = 1 << 16

// chunks runs fn(r, lo, hi) over [0, n) in chunks of size step, each with
// a generator seeded from g.rng in chunk order, on GOMAXPROCS goroutines.
func (g gen) chunks(n, step int, fn func(r *rand.Rand, lo, hi int)) {
	nc := (n + step - 1) / step
	seeds := make([]uint64, nc)
	for i := range seeds {
		seeds[i] = g.rng.Uint64()
	}
	work := func(c int) {
		r := rand.New(rand.NewPCG(seeds[c], uint64(c)))
		fn(r, c*step, min((c+1)*step, n))
	}
	workers := min(runtime.GOMAXPROCS(0), nc)
	if workers <= 1 {
		for c := 0; c < nc; c++ {
			work(c)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := int(next.Add(1) - 1); c < nc; c = int(next.Add(1) - 1) {
				work(c)
			}
		}()
	}
	wg.Wait()
}

func (g gen) fill(shape []int, draw func(r *rand.Rand) float64) []float32 {
	out := make([]float32, scans.NumElements(shape))
	g.chunks(len(out), chunkElems, func(r *rand.Rand, lo, hi int) {
		for i := lo; i < hi; i++ {
			for {
				v := float32(draw(r))
				if scans.RoundTo(g.dt, v) != 0 {
					out[i] = v
					break
				}
			}
		}
	})
	return out
}

func (g gen) normal(shape []int) []float32 {
	return g.fill(shape, func(r *rand.Rand) float64 { return r.NormFloat64() })
}

// decay is a, sigma: uniform in (0.5, 1), or in (0.999, 1) for long memory.
func (g gen) decay(shape []int, long bool) []float32 {
	if long {
		return g.fill(shape, func(r *rand.Rand) float64 { return 0.999 + 0.001*r.Float64() })
	}
	return g.fill(shape, func(r *rand.Rand) float64 { return 0.5 + 0.5*r.Float64() })
}

// logCoeffs is -softplus(z), or log(0.999 + 0.001u) (just below 0) for long
// memory.
func (g gen) logCoeffs(shape []int, long bool) []float32 {
	if long {
		return g.fill(shape, func(r *rand.Rand) float64 { return math.Log(0.999 + 0.001*r.Float64()) })
	}
	return g.fill(shape, func(r *rand.Rand) float64 { return -softplus(r.NormFloat64()) })
}

// transitions draws A (B,T,N,k,k) = rho * R(theta), rho = 0.9 (or
// 0.999 + 0.001u for long memory), R the Givens rotation of k-1 uniform
// angles; for k = 1 it is rho. Zero entries of R (k >= 4 has them) are
// exact zeros of the transition, part of the distribution, not a fill.
func (g gen) transitions(d scans.Dims, long bool) []float32 {
	k := d.K
	out := make([]float32, d.B*d.T*d.N*k*k)
	g.chunks(d.B*d.T*d.N, max(chunkElems/(k*k), 1), func(r *rand.Rand, lo, hi int) {
		angles := make([]float64, max(k-1, 0))
		m := make([]float64, k*k)
		for blk := lo; blk < hi; blk++ {
			rho := 0.9
			if long {
				rho = 0.999 + 0.001*r.Float64()
			}
			for i := range angles {
				angles[i] = math.Pi * (2*r.Float64() - 1)
			}
			GivensRotation(k, angles, m)
			for i, v := range m {
				out[blk*k*k+i] = float32(rho * v)
			}
		}
	})
	return out
}

// GivensRotation writes into m (k*k, row-major) the rotation R(theta) of
// the angle-fused Givens scan: the first k/2 angles rotate the pairs
// (0,1), (2,3), ..., then the remaining angles rotate (1,2), (3,4), ....
// len(angles) must be k-1 (nothing for k = 1, when R = 1).
func GivensRotation(k int, angles []float64, m []float64) {
	clear(m[:k*k])
	for i := 0; i < k; i++ {
		m[i*k+i] = 1
	}
	// R = L2 L1: apply each rotation to the rows of m, layer by layer.
	first, second := scans.GivensAngles(k)
	rows := func(th float64, i, j int) {
		s, c := math.Sincos(th)
		ri, rj := m[i*k:(i+1)*k], m[j*k:(j+1)*k]
		for col := range ri {
			xi, xj := ri[col], rj[col]
			ri[col] = c*xi - s*xj
			rj[col] = s*xi + c*xj
		}
	}
	for p := 0; p < first; p++ {
		rows(angles[p], 2*p, 2*p+1)
	}
	for q := 0; q < second; q++ {
		rows(angles[first+q], 2*q+1, 2*q+2)
	}
}

func softplus(z float64) float64 {
	if z > 30 {
		return z
	}
	return math.Log1p(math.Exp(z))
}
