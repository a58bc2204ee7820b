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

	life scans.Lifecycle // Close
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
func (b *Backend) Upload(h *scans.Host) (scans.Tensor, error) {
	leave, err := b.life.Enter()
	if err != nil {
		return nil, fmt.Errorf("eager: Upload: %w", err)
	}
	defer leave()
	if h == nil {
		return nil, fmt.Errorf("eager: Upload: nil tensor")
	}
	return h.Clone(), nil
}

// Download returns a copy of t, which must be a *scans.Host.
func (b *Backend) Download(t scans.Tensor) (*scans.Host, error) {
	leave, err := b.life.Enter()
	if err != nil {
		return nil, fmt.Errorf("eager: Download: %w", err)
	}
	defer leave()
	if scans.IsNil(t) {
		return nil, fmt.Errorf("eager: Download: nil tensor")
	}
	h, ok := t.(*scans.Host)
	if !ok {
		return nil, fmt.Errorf("eager: Download: tensor on %s, want a host tensor (*scans.Host)", t.Location())
	}
	return h.Clone(), nil
}

// Release does nothing (host memory belongs to the garbage collector)
// but return an error after Close.
func (b *Backend) Release(t scans.Tensor) error {
	leave, err := b.life.Enter()
	if err != nil {
		return fmt.Errorf("eager: Release: %w", err)
	}
	leave()
	return nil
}

// NewQueue implements scans.Queuer with a queue that runs each call at
// once (scans.NewImmediateQueue): eager's calls are synchronous.
func (b *Backend) NewQueue() (scans.Queue, error) {
	leave, err := b.life.Enter()
	if err != nil {
		return nil, fmt.Errorf("eager: NewQueue: %w", err)
	}
	leave()
	return scans.NewImmediateQueue(b), nil
}

// Close implements io.Closer. Eager holds no memory of its own; after
// Close, as on every backend, each call returns an error wrapping
// scans.ErrClosed.
func (b *Backend) Close() error {
	b.life.Close(func() {})
	return nil
}

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

// kernel is an operation's pair of float32 kernels: the forward writes
// out (of the shape Call.ResultShapes gives); the backward writes one
// gradient per input (nil for an absent optional input).
type kernel struct {
	fwd func(d scans.Dims, in [][]float32, out []float32)
	bwd func(d scans.Dims, in [][]float32, g [][]float32)
}

// kernels maps each operation to this package's kernels.
var kernels = map[scans.Op]kernel{
	scans.OpLinearScan: {
		func(d scans.Dims, in [][]float32, out []float32) { LinearForward(d, in[0], in[1], in[2], out) },
		func(d scans.Dims, in [][]float32, g [][]float32) {
			LinearBackward(d, in[0], in[2], in[3], in[4], g[0], g[1], g[2])
		}},
	scans.OpMatrixScan: {
		func(d scans.Dims, in [][]float32, out []float32) { AffineForward(d, in[0], in[1], in[2], out) },
		func(d scans.Dims, in [][]float32, g [][]float32) {
			AffineBackward(d, in[0], in[2], in[3], in[4], g[0], g[1], g[2])
		}},
	scans.OpMatrixAffineScan: {
		func(d scans.Dims, in [][]float32, out []float32) { AffineForward(d, in[0], in[1], in[2], out) },
		func(d scans.Dims, in [][]float32, g [][]float32) {
			AffineBackward(d, in[0], in[2], in[3], in[4], g[0], g[1], g[2])
		}},
	scans.OpParallelScanLog: {
		func(d scans.Dims, in [][]float32, out []float32) { LogForward(d, in[0], in[1], out) },
		func(d scans.Dims, in [][]float32, g [][]float32) {
			LogBackward(d, in[0], in[1], in[2], in[3], g[0], g[1])
		}},
	scans.OpGivensScan: {
		func(d scans.Dims, in [][]float32, out []float32) { GivensForward(d, in[0], in[1], in[2], in[3], out) },
		func(d scans.Dims, in [][]float32, g [][]float32) {
			GivensBackward(d, in[0], in[1], in[3], in[4], in[5], g[0], g[1], g[2], g[3])
		}},
	scans.OpMingruScan: {
		func(d scans.Dims, in [][]float32, out []float32) { MingruForward(d, in[0], in[1], in[2], out) },
		func(d scans.Dims, in [][]float32, g [][]float32) {
			MingruBackward(d, in[0], in[1], in[2], in[3], in[4], g[0], g[1], g[2])
		}},
}

// Run implements scans.Backend: it names the first argument that is not a
// host tensor, checks the call, widens the inputs to float32, runs the
// operation's kernel (see LinearForward, AffineForward, LogForward,
// GivensForward, MingruForward and their backwards) and stores the results in the
// inputs' element type.
func (b *Backend) Run(c *scans.Call) (res []scans.Tensor, err error) {
	if c == nil {
		return nil, errors.New("eager: Run: nil call")
	}
	defer guard(c.Op, &err)
	leave, err := b.life.Enter()
	if err != nil {
		return nil, fmt.Errorf("eager: %s: %w", c.Op, err)
	}
	defer leave()
	spec := c.Spec()
	if spec == nil {
		return nil, c.Check()
	}
	if err := onHost(c.Op, spec.ArgNames(c.Dir), c.Args...); err != nil {
		return nil, err
	}
	if len(c.Out) == len(spec.Results(c.Dir)) {
		names := make([]string, len(c.Out))
		for i := range names {
			names[i] = c.OutName(i)
		}
		if err := onHost(c.Op, names, c.Out...); err != nil {
			return nil, err
		}
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	k, ok := kernels[c.Op]
	if !ok {
		return nil, fmt.Errorf("eager: %s: no kernel", c.Op)
	}
	in := widen(c.Args...)
	shapes := c.ResultShapes()
	vals := make([][]float32, len(shapes))
	for i, s := range shapes {
		if s == nil {
			continue
		}
		if o := given(c, i); o != nil && o.DType() == scans.F32 {
			// The kernels assign every element; clear keeps a kernel
			// that accumulates from reading what the caller left.
			vals[i] = o.Float32Data()
			clear(vals[i])
		} else {
			vals[i] = make([]float32, elements(s))
		}
	}
	if c.Dir == scans.Forward {
		k.fwd(c.Dims, in, vals[0])
	} else {
		k.bwd(c.Dims, in, vals)
	}
	if c.Out == nil {
		return stores(c.DType, vals, shapes)
	}
	outs := make([]scans.Tensor, len(shapes))
	for i, v := range vals {
		o := given(c, i)
		if o == nil {
			continue
		}
		if o.DType() != scans.F32 {
			o.SetFloat32s(v)
		}
		outs[i] = o
	}
	return outs, nil
}

// given is the caller's output i (scans.Call.Out), or nil.
func given(c *scans.Call, i int) *scans.Host {
	if c.Out == nil || scans.IsNil(c.Out[i]) {
		return nil
	}
	return c.Out[i].(*scans.Host)
}

func elements(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

func init() { scans.Register("eager", 0, func() scans.Backend { return New() }) }
