package eager

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/mingru/scans"
)

// Backend is the pure Go reference backend. It implements scans.Backend on
// *scans.Host tensors: it checks that every tensor is a *scans.Host,
// validates the arguments with the scans.Check* functions, widens the
// inputs to float32, runs the float32 kernels of this package (f32
// accumulation) and stores each output in the inputs' element type,
// rounded to nearest even. f32 inputs are read in place, never written.
// It holds no state; every method is safe for concurrent use.
type Backend struct{}

// New returns the eager backend.
func New() *Backend { return &Backend{} }

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

// optional allocates n elements when t is present, and returns nil
// otherwise.
func optional(t scans.Tensor, n int) []float32 {
	if scans.IsNil(t) {
		return nil
	}
	return make([]float32, n)
}

func shapeOf(t scans.Tensor) []int {
	if scans.IsNil(t) {
		return nil
	}
	return t.Shape()
}

// LinearScan computes h_t = a_t * h_{t-1} + b_t (see LinearForward).
func (*Backend) LinearScan(a, b, h0 scans.Tensor) (h scans.Tensor, err error) {
	op := scans.OpLinearScan
	defer guard(op, &err)
	if err := onHost(op, []string{"a", "b", "h0"}, a, b, h0); err != nil {
		return nil, err
	}
	d, err := scans.CheckLinearScan(a, b, h0)
	if err != nil {
		return nil, err
	}
	in := widen(a, b, h0)
	out := make([]float32, d.B*d.T*d.N)
	LinearForward(d, in[0], in[1], in[2], out)
	return store(a.DType(), out, a.Shape())
}

// LinearScanBackward returns the gradients of a, b and h0 (nil when h0 is
// nil) (see LinearBackward).
func (*Backend) LinearScanBackward(a, b, h0, h, dh scans.Tensor) (da, db, dh0 scans.Tensor, err error) {
	op := scans.OpLinearScan
	defer guard(op, &err)
	if err := onHost(op, []string{"a", "b", "h0", "h", "dh"}, a, b, h0, h, dh); err != nil {
		return nil, nil, nil, err
	}
	d, err := scans.CheckLinearScanBackward(a, b, h0, h, dh)
	if err != nil {
		return nil, nil, nil, err
	}
	in := widen(a, b, h0, h, dh)
	n := d.B * d.T * d.N
	gA, gB, gH0 := make([]float32, n), make([]float32, n), optional(h0, d.B*d.N)
	LinearBackward(d, in[0], in[2], in[3], in[4], gA, gB, gH0)
	out, err := stores(a.DType(), [][]float32{gA, gB, gH0}, [][]int{a.Shape(), b.Shape(), shapeOf(h0)})
	if err != nil {
		return nil, nil, nil, err
	}
	return out[0], out[1], out[2], nil
}

// MatrixScan computes h_t = A_t h_{t-1} + b_t per 2x2 block (see
// AffineForward with k = 2, v = 1).
func (*Backend) MatrixScan(A, b, h0 scans.Tensor) (h scans.Tensor, err error) {
	op := scans.OpMatrixScan
	defer guard(op, &err)
	if err := onHost(op, []string{"A", "b", "h0"}, A, b, h0); err != nil {
		return nil, err
	}
	d, err := scans.CheckMatrixScan(A, b, h0)
	if err != nil {
		return nil, err
	}
	in := widen(A, b, h0)
	out := make([]float32, d.B*d.T*d.N*2)
	AffineForward(d, in[0], in[1], in[2], out)
	return store(A.DType(), out, b.Shape())
}

// MatrixScanBackward returns the gradients of A, b and h0 (nil when h0 is
// nil) (see AffineBackward).
func (*Backend) MatrixScanBackward(A, b, h0, h, dh scans.Tensor) (dA, db, dh0 scans.Tensor, err error) {
	op := scans.OpMatrixScan
	defer guard(op, &err)
	if err := onHost(op, []string{"A", "b", "h0", "h", "dh"}, A, b, h0, h, dh); err != nil {
		return nil, nil, nil, err
	}
	d, err := scans.CheckMatrixScanBackward(A, b, h0, h, dh)
	if err != nil {
		return nil, nil, nil, err
	}
	in := widen(A, b, h0, h, dh)
	n := d.B * d.T * d.N
	gA, gB, gH0 := make([]float32, n*4), make([]float32, n*2), optional(h0, d.B*d.N*2)
	AffineBackward(d, in[0], in[2], in[3], in[4], gA, gB, gH0)
	out, err := stores(A.DType(), [][]float32{gA, gB, gH0}, [][]int{A.Shape(), b.Shape(), shapeOf(h0)})
	if err != nil {
		return nil, nil, nil, err
	}
	return out[0], out[1], out[2], nil
}

// MatrixAffineScan computes H_t = A_t H_{t-1} + X_t per kxk block acting
// on kxv states (see AffineForward).
func (*Backend) MatrixAffineScan(A, X, H0 scans.Tensor) (H scans.Tensor, err error) {
	op := scans.OpMatrixAffineScan
	defer guard(op, &err)
	if err := onHost(op, []string{"A", "X", "H0"}, A, X, H0); err != nil {
		return nil, err
	}
	d, err := scans.CheckMatrixAffineScan(A, X, H0)
	if err != nil {
		return nil, err
	}
	in := widen(A, X, H0)
	out := make([]float32, d.B*d.T*d.N*d.K*d.V)
	AffineForward(d, in[0], in[1], in[2], out)
	return store(A.DType(), out, X.Shape())
}

// MatrixAffineScanBackward returns the gradients of A, X and H0 (nil when
// H0 is nil) (see AffineBackward).
func (*Backend) MatrixAffineScanBackward(A, X, H0, H, dH scans.Tensor) (dA, dX, dH0 scans.Tensor, err error) {
	op := scans.OpMatrixAffineScan
	defer guard(op, &err)
	if err := onHost(op, []string{"A", "X", "H0", "H", "dH"}, A, X, H0, H, dH); err != nil {
		return nil, nil, nil, err
	}
	d, err := scans.CheckMatrixAffineScanBackward(A, X, H0, H, dH)
	if err != nil {
		return nil, nil, nil, err
	}
	in := widen(A, X, H0, H, dH)
	n := d.B * d.T * d.N
	gA, gX, gH0 := make([]float32, n*d.K*d.K), make([]float32, n*d.K*d.V), optional(H0, d.B*d.N*d.K*d.V)
	AffineBackward(d, in[0], in[2], in[3], in[4], gA, gX, gH0)
	out, err := stores(A.DType(), [][]float32{gA, gX, gH0}, [][]int{A.Shape(), X.Shape(), shapeOf(H0)})
	if err != nil {
		return nil, nil, nil, err
	}
	return out[0], out[1], out[2], nil
}

// ParallelScanLog computes h_t = exp(log_coeffs_t) h_{t-1} +
// exp(log_values_{t+1}), h_{-1} = exp(log_values_0), in log space (see
// LogForward).
func (*Backend) ParallelScanLog(logCoeffs, logValues scans.Tensor) (h scans.Tensor, err error) {
	op := scans.OpParallelScanLog
	defer guard(op, &err)
	if err := onHost(op, []string{"log_coeffs", "log_values"}, logCoeffs, logValues); err != nil {
		return nil, err
	}
	d, err := scans.CheckParallelScanLog(logCoeffs, logValues)
	if err != nil {
		return nil, err
	}
	in := widen(logCoeffs, logValues)
	out := make([]float32, d.B*d.T*d.N)
	LogForward(d, in[0], in[1], out)
	return store(logCoeffs.DType(), out, logCoeffs.Shape())
}

// ParallelScanLogBackward returns the gradients of log_coeffs and
// log_values (see LogBackward).
func (*Backend) ParallelScanLogBackward(logCoeffs, logValues, h, dh scans.Tensor) (dLogCoeffs, dLogValues scans.Tensor, err error) {
	op := scans.OpParallelScanLog
	defer guard(op, &err)
	if err := onHost(op, []string{"log_coeffs", "log_values", "h", "dh"}, logCoeffs, logValues, h, dh); err != nil {
		return nil, nil, err
	}
	d, err := scans.CheckParallelScanLogBackward(logCoeffs, logValues, h, dh)
	if err != nil {
		return nil, nil, err
	}
	in := widen(logCoeffs, logValues, h, dh)
	gC, gV := make([]float32, d.B*d.T*d.N), make([]float32, d.B*(d.T+1)*d.N)
	LogBackward(d, in[0], in[1], in[2], in[3], gC, gV)
	out, err := stores(logCoeffs.DType(), [][]float32{gC, gV}, [][]int{logCoeffs.Shape(), logValues.Shape()})
	if err != nil {
		return nil, nil, err
	}
	return out[0], out[1], nil
}

// GivensScan computes h_t = sigma_t * R(theta_t) h_{t-1} + x_t without
// forming R (see GivensForward).
func (*Backend) GivensScan(theta, sigma, x, h0 scans.Tensor) (h scans.Tensor, err error) {
	op := scans.OpGivensScan
	defer guard(op, &err)
	if err := onHost(op, []string{"theta", "sigma", "x", "h0"}, theta, sigma, x, h0); err != nil {
		return nil, err
	}
	d, err := scans.CheckGivensScan(theta, sigma, x, h0)
	if err != nil {
		return nil, err
	}
	in := widen(theta, sigma, x, h0)
	out := make([]float32, d.B*d.T*d.N*d.K)
	GivensForward(d, in[0], in[1], in[2], in[3], out)
	return store(sigma.DType(), out, x.Shape())
}

// GivensScanBackward returns the gradients of theta, sigma, x and h0 (nil
// when h0 is nil) (see GivensBackward).
func (*Backend) GivensScanBackward(theta, sigma, x, h0, h, dh scans.Tensor) (dTheta, dSigma, dx, dh0 scans.Tensor, err error) {
	op := scans.OpGivensScan
	defer guard(op, &err)
	if err := onHost(op, []string{"theta", "sigma", "x", "h0", "h", "dh"}, theta, sigma, x, h0, h, dh); err != nil {
		return nil, nil, nil, nil, err
	}
	d, err := scans.CheckGivensScanBackward(theta, sigma, x, h0, h, dh)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	in := widen(theta, sigma, x, h0, h, dh)
	n := d.B * d.T * d.N
	gT, gS, gX := make([]float32, n*(d.K-1)), make([]float32, n*d.K), make([]float32, n*d.K)
	gH0 := optional(h0, d.B*d.N*d.K)
	GivensBackward(d, in[0], in[1], in[3], in[4], in[5], gT, gS, gX, gH0)
	out, err := stores(sigma.DType(), [][]float32{gT, gS, gX, gH0},
		[][]int{theta.Shape(), sigma.Shape(), x.Shape(), shapeOf(h0)})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return out[0], out[1], out[2], out[3], nil
}
