package eager

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/mingru/scans"
)

// Backend is the pure Go reference backend. It implements scans.Backend on
// *scans.Host tensors: it checks that every tensor is a *scans.Host,
// validates the arguments against the op table, widens the
// inputs to float32, runs the float32 kernels of this package (f32
// accumulation) and stores each output in the inputs' element type,
// rounded to nearest even. f32 inputs are read in place, never written.
// It holds no state; every method is safe for concurrent use.
type Backend struct {
	// Typed gives the backend the typed method of each operation
	// (LinearScan, GivensScanBackward, ...).
	scans.Typed
}

// New returns the eager backend.
func New() *Backend {
	b := &Backend{}
	b.Typed = scans.Typed{Runner: b}
	return b
}

var _ scans.Backend = (*Backend)(nil)

// Name returns "eager".
func (*Backend) Name() string { return "eager" }

// Status reports the backend as always available, on the Go runtime, e.g.
// "Go 1.26.8 linux/amd64, 2 cores" (the cores are runtime.GOMAXPROCS).
func (*Backend) Status() scans.Status {
	return scans.Status{
		Backend:   "eager",
		Available: true,
		Device: fmt.Sprintf("Go %s %s/%s, %d cores", strings.TrimPrefix(runtime.Version(), "go"),
			runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0)),
	}
}

// Supports returns nil: eager computes every shape (any T >= 1, any k and v,
// Givens blocks of any k >= 2) in every element type. Bad arguments are
// still reported by the operations themselves.
func (*Backend) Supports(op scans.Op, d scans.Dims, dt scans.DType) error { return nil }

// Upload returns a copy of h.
func (*Backend) Upload(h *scans.Host) (scans.Tensor, error) {
	if h == nil {
		return nil, fmt.Errorf("eager: Upload: nil tensor")
	}
	return h.Clone(), nil
}

// Download returns a copy of t, which must be a *scans.Host.
func (*Backend) Download(t scans.Tensor) (*scans.Host, error) {
	if scans.IsNil(t) {
		return nil, fmt.Errorf("eager: Download: nil tensor")
	}
	h, ok := t.(*scans.Host)
	if !ok {
		return nil, fmt.Errorf("eager: Download: tensor on %s, want a host tensor (*scans.Host)", t.Location())
	}
	return h.Clone(), nil
}

// Release does nothing: host memory belongs to the garbage collector.
func (*Backend) Release(t scans.Tensor) error { return nil }

// guard turns a panic inside an operation into an error, so that none
// escapes the Backend.
func guard(op scans.Op, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("eager: %s: internal error: %v", op, r)
	}
}

// onHost checks that every non-nil argument is a *scans.Host, and
// otherwise returns an ArgError naming the first that is not. It runs
// before the shape checks, so that a foreign tensor is named even when it
// comes first.
func onHost(op scans.Op, names []string, ts ...scans.Tensor) error {
	for i, t := range ts {
		if scans.IsNil(t) {
			continue
		}
		if _, ok := t.(*scans.Host); !ok {
			return &scans.ArgError{Op: op, Arg: names[i],
				Want: "a host tensor (*scans.Host): the eager backend computes on the host",
				Got:  scans.ShapeString(t.DType(), t.Shape()) + " on " + t.Location()}
		}
	}
	return nil
}

// widen returns the data of host tensors widened to float32 (nil for an
// absent one). F32 data is used in place: the kernels never write their
// inputs.
func widen(ts ...scans.Tensor) [][]float32 {
	out := make([][]float32, len(ts))
	for i, t := range ts {
		if scans.IsNil(t) {
			continue
		}
		h := t.(*scans.Host)
		if h.DType() == scans.F32 {
			out[i] = h.Float32Data()
		} else {
			out[i] = h.Float32s()
		}
	}
	return out
}

// store makes the output tensor of type dt and shape from vals, rounding
// to dt (nearest, ties to even). vals is kept, not copied, for f32.
func store(dt scans.DType, vals []float32, shape []int) (scans.Tensor, error) {
	var (
		h   *scans.Host
		err error
	)
	if dt == scans.F32 {
		h, err = scans.FromFloat32(vals, shape...)
	} else {
		h, err = scans.Convert(dt, vals, shape...)
	}
	if err != nil {
		return nil, fmt.Errorf("eager: store output: %w", err)
	}
	return h, nil
}

// stores is store for several outputs; an output whose vals are nil is a
// nil Tensor (the gradient of an absent optional input).
func stores(dt scans.DType, vals [][]float32, shapes [][]int) ([]scans.Tensor, error) {
	out := make([]scans.Tensor, len(vals))
	for i, v := range vals {
		if v == nil {
			continue
		}
		t, err := store(dt, v, shapes[i])
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

func shapeOf(t scans.Tensor) []int {
	if scans.IsNil(t) {
		return nil
	}
	return t.Shape()
}

// kernel is an operation's pair of float32 kernels: the forward writes
// out, whose shape is that of input shapeOf; the backward writes one
// gradient per input (nil for an absent optional input).
type kernel struct {
	shapeOf int
	fwd     func(d scans.Dims, in [][]float32, out []float32)
	bwd     func(d scans.Dims, in [][]float32, g [][]float32)
}

// kernels maps each operation to this package's kernels.
var kernels = map[scans.Op]kernel{
	scans.OpLinearScan: {0,
		func(d scans.Dims, in [][]float32, out []float32) { LinearForward(d, in[0], in[1], in[2], out) },
		func(d scans.Dims, in [][]float32, g [][]float32) {
			LinearBackward(d, in[0], in[2], in[3], in[4], g[0], g[1], g[2])
		}},
	scans.OpMatrixScan: {1,
		func(d scans.Dims, in [][]float32, out []float32) { AffineForward(d, in[0], in[1], in[2], out) },
		func(d scans.Dims, in [][]float32, g [][]float32) {
			AffineBackward(d, in[0], in[2], in[3], in[4], g[0], g[1], g[2])
		}},
	scans.OpMatrixAffineScan: {1,
		func(d scans.Dims, in [][]float32, out []float32) { AffineForward(d, in[0], in[1], in[2], out) },
		func(d scans.Dims, in [][]float32, g [][]float32) {
			AffineBackward(d, in[0], in[2], in[3], in[4], g[0], g[1], g[2])
		}},
	scans.OpParallelScanLog: {0,
		func(d scans.Dims, in [][]float32, out []float32) { LogForward(d, in[0], in[1], out) },
		func(d scans.Dims, in [][]float32, g [][]float32) {
			LogBackward(d, in[0], in[1], in[2], in[3], g[0], g[1])
		}},
	scans.OpGivensScan: {2,
		func(d scans.Dims, in [][]float32, out []float32) { GivensForward(d, in[0], in[1], in[2], in[3], out) },
		func(d scans.Dims, in [][]float32, g [][]float32) {
			GivensBackward(d, in[0], in[1], in[3], in[4], in[5], g[0], g[1], g[2], g[3])
		}},
}

// Run implements scans.Backend: it names the first argument that is not a
// host tensor, checks the call, widens the inputs to float32, runs the
// operation's kernel (see LinearForward, AffineForward, LogForward,
// GivensForward and their backwards) and stores the results in the
// inputs' element type.
func (*Backend) Run(c *scans.Call) (res []scans.Tensor, err error) {
	if c == nil {
		return nil, errors.New("eager: Run: nil call")
	}
	defer guard(c.Op, &err)
	spec := c.Spec()
	if spec == nil {
		return nil, c.Check()
	}
	if err := onHost(c.Op, spec.ArgNames(c.Dir), c.Args...); err != nil {
		return nil, err
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	k, ok := kernels[c.Op]
	if !ok {
		return nil, fmt.Errorf("eager: %s: no kernel", c.Op)
	}
	in := widen(c.Args...)
	if c.Dir == scans.Forward {
		shape := c.Args[k.shapeOf].Shape()
		out := make([]float32, elements(shape))
		k.fwd(c.Dims, in, out)
		t, err := store(c.DType, out, shape)
		if err != nil {
			return nil, err
		}
		return []scans.Tensor{t}, nil
	}
	inputs := c.Args[:len(spec.Inputs)]
	g, shapes := make([][]float32, len(inputs)), make([][]int, len(inputs))
	for i, t := range inputs {
		if shapes[i] = shapeOf(t); shapes[i] != nil {
			g[i] = make([]float32, elements(shapes[i]))
		}
	}
	k.bwd(c.Dims, in, g)
	return stores(c.DType, g, shapes)
}

func elements(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

func init() { scans.Register("eager", 0, func() scans.Backend { return New() }) }
