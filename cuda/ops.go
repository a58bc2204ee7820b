//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/mingru/scans"
)

// guard turns a panic into an error at the public boundary.
func guard(op scans.Op, err *error) {
	if r := recover(); r != nil {
		*err = &scans.KernelError{Backend: backendName, Op: op, Err: fmt.Errorf("panic: %v", r)}
	}
}

// hostData is the address of a host tensor's elements.
func hostData(h *scans.Host) unsafe.Pointer {
	if h.DType() == scans.F32 {
		return unsafe.Pointer(&h.Float32Data()[0])
	}
	return unsafe.Pointer(&h.Bits()[0])
}

// mine returns t as one of this backend's tensors, or a *scans.ArgError
// naming the argument. A nil t gives a nil *Tensor (absent optional input).
func (b *Backend) mine(op scans.Op, name string, t scans.Tensor) (*Tensor, error) {
	if scans.IsNil(t) {
		return nil, nil
	}
	d, ok := t.(*Tensor)
	if !ok {
		return nil, &scans.ArgError{Op: op, Arg: name, Want: "a *cuda.Tensor (Upload it first)",
			Got: fmt.Sprintf("%T on %s", t, t.Location())}
	}
	if d.owner != b {
		return nil, &scans.ArgError{Op: op, Arg: name, Want: "a tensor of this CUDA backend", Got: "a tensor of another cuda.Backend"}
	}
	return d, nil
}

func releasedError(op scans.Op, name string, t *Tensor) error {
	return &scans.ArgError{Op: op, Arg: name, Want: "a live tensor", Got: t.String() + ", released"}
}

// wrapUnavailable returns nil, an UnavailableError or an ArgError as they
// are, and gives other errors the backend's context.
func wrapUnavailable(what string, err error) error {
	var u *scans.UnavailableError
	var a *scans.ArgError
	if err == nil || errors.As(err, &u) || errors.As(err, &a) {
		return err
	}
	return fmt.Errorf("cuda: %s: %w", what, err)
}

// kernelCall is one kernel launch of an operation: the inputs and outputs
// in the kernel's parameter order, then 64-bit scalars, and the launch
// geometry.
type kernelCall struct {
	op      scans.Op
	dir     scans.Direction
	d       scans.Dims
	dt      scans.DType
	inNames []string
	ins     []*Tensor // nil: an absent optional input (a null pointer)
	outs    [][]int   // output shapes; nil: an output not wanted (a null pointer)
	scalars []int64
	grid    int
	bx, by  int
	shared  int
}

// call validates the inputs' ownership, checks the envelope and runs the
// kernel, returning its outputs (nil interfaces for the ones not wanted).
func (b *Backend) call(c kernelCall) ([]scans.Tensor, error) {
	var outs []*Tensor
	err := b.do(func() error {
		params := make([]uint64, 0, len(c.ins)+len(c.outs)+len(c.scalars))
		for i, t := range c.ins {
			var p uint64
			if t != nil {
				if t.ptr == 0 {
					return releasedError(c.op, c.inNames[i], t)
				}
				p = t.ptr
			}
			params = append(params, p)
		}
		f, err := b.function(moduleOf(c.op, c.d, c.dt), kernelName(c.op, c.dir, c.d, c.dt))
		if err != nil {
			return &scans.KernelError{Backend: backendName, Op: c.op, Err: err}
		}
		made := make([]*Tensor, len(c.outs))
		fail := func(err error) error {
			for _, t := range made {
				if t != nil {
					b.free(t.ptr, t.bytes)
				}
			}
			return &scans.KernelError{Backend: backendName, Op: c.op, Err: err}
		}
		for i, shape := range c.outs {
			var p uint64
			if shape != nil {
				t, err := b.newTensor(c.dt, shape)
				if err != nil {
					return fail(err)
				}
				made[i] = t
				if b.poison {
					if err := fillNaN(t); err != nil {
						return fail(err)
					}
				}
				p = t.ptr
			}
			params = append(params, p)
		}
		for _, s := range c.scalars {
			params = append(params, uint64(s))
		}
		name := kernelName(c.op, c.dir, c.d, c.dt)
		dur, err := b.timed(func() error { return launch(name, f, c.grid, c.bx, c.by, c.shared, params) })
		if err != nil {
			return fail(fmt.Errorf("%s %s (%v, %v): %w", c.op, c.dir, c.dt, c.d, err))
		}
		b.mu.Lock()
		b.lastTime, b.hasTime = dur, true
		b.mu.Unlock()
		outs = made
		return nil
	})
	if err != nil {
		var u *scans.UnavailableError
		var a *scans.ArgError
		var k *scans.KernelError
		if !errors.As(err, &u) && !errors.As(err, &a) && !errors.As(err, &k) {
			err = &scans.KernelError{Backend: backendName, Op: c.op, Err: err}
		}
		return nil, err
	}
	res := make([]scans.Tensor, len(outs))
	for i, t := range outs {
		if t != nil {
			res[i] = t
		}
	}
	return res, nil
}

// prepare converts the arguments to this backend's tensors, checks the
// envelope and that the device is available.
func (b *Backend) prepare(op scans.Op, d scans.Dims, dt scans.DType, names []string, ts ...scans.Tensor) ([]*Tensor, error) {
	out := make([]*Tensor, len(ts))
	for i, t := range ts {
		var err error
		if out[i], err = b.mine(op, names[i], t); err != nil {
			return nil, err
		}
	}
	if err := envelope(op, d, dt); err != nil {
		return nil, err
	}
	if err := b.ensure(); err != nil {
		return nil, err
	}
	return out, nil
}

// elementwise sets the launch geometry of linear_scan and
// parallel_scan_log: one block per (b, tile of 32 channels), 32 x C
// threads, C = chunkCount, 2*C*32 floats of shared memory.
func (b *Backend) elementwise(c *kernelCall) {
	tiles := (c.d.N + tile - 1) / tile
	lanes := c.d.B * tiles
	chunks := chunkCount(c.d.T, lanes, b.resident)
	c.grid, c.bx, c.by, c.shared = lanes, tile, chunks, 2*chunks*tile*4
	c.scalars = []int64{int64(c.d.T), int64(c.d.N)}
}

// blockwise sets the launch geometry of the block ops: one block of
// threads threads per lane (b, n).
func blockwise(c *kernelCall, threads int) {
	c.grid, c.bx, c.by, c.shared = c.d.B*c.d.N, threads, 1, 0
	c.scalars = []int64{int64(c.d.T), int64(c.d.N)}
}

func optShape(t *Tensor, shape ...int) []int {
	if t == nil {
		return nil
	}
	return shape
}

// LinearScan computes h_t = a_t * h_{t-1} + b_t over (B,T,D).
func (b *Backend) LinearScan(a, bv, h0 scans.Tensor) (h scans.Tensor, err error) {
	const op = scans.OpLinearScan
	defer guard(op, &err)
	d, err := scans.CheckLinearScan(a, bv, h0)
	if err != nil {
		return nil, err
	}
	names := []string{"a", "b", "h0"}
	ts, err := b.prepare(op, d, a.DType(), names, a, bv, h0)
	if err != nil {
		return nil, err
	}
	c := kernelCall{op: op, dir: scans.Forward, d: d, dt: a.DType(), inNames: names, ins: ts,
		outs: [][]int{a.Shape()}}
	b.elementwise(&c)
	out, err := b.call(c)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// LinearScanBackward returns the gradients of a, b and h0 (nil when h0
// is nil).
func (b *Backend) LinearScanBackward(a, bv, h0, h, dh scans.Tensor) (da, db, dh0 scans.Tensor, err error) {
	const op = scans.OpLinearScan
	defer guard(op, &err)
	d, err := scans.CheckLinearScanBackward(a, bv, h0, h, dh)
	if err != nil {
		return nil, nil, nil, err
	}
	names := []string{"a", "h0", "h", "dh", "b"}
	ts, err := b.prepare(op, d, a.DType(), names, a, h0, h, dh, bv)
	if err != nil {
		return nil, nil, nil, err
	}
	c := kernelCall{op: op, dir: scans.Backward, d: d, dt: a.DType(), inNames: names, ins: ts[:4],
		outs: [][]int{a.Shape(), a.Shape(), optShape(ts[1], d.B, d.N)}}
	b.elementwise(&c)
	out, err := b.call(c)
	if err != nil {
		return nil, nil, nil, err
	}
	return out[0], out[1], out[2], nil
}

// MatrixScan computes h_t = A_t h_{t-1} + b_t per 2x2 block.
func (b *Backend) MatrixScan(A, bv, h0 scans.Tensor) (h scans.Tensor, err error) {
	const op = scans.OpMatrixScan
	defer guard(op, &err)
	d, err := scans.CheckMatrixScan(A, bv, h0)
	if err != nil {
		return nil, err
	}
	names := []string{"A", "b", "h0"}
	ts, err := b.prepare(op, d, A.DType(), names, A, bv, h0)
	if err != nil {
		return nil, err
	}
	c := kernelCall{op: op, dir: scans.Forward, d: d, dt: A.DType(), inNames: names, ins: ts,
		outs: [][]int{bv.Shape()}}
	blockwise(&c, 1)
	out, err := b.call(c)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// MatrixScanBackward returns the gradients of A, b and h0 (nil when h0 is
// nil).
func (b *Backend) MatrixScanBackward(A, bv, h0, h, dh scans.Tensor) (dA, db, dh0 scans.Tensor, err error) {
	const op = scans.OpMatrixScan
	defer guard(op, &err)
	d, err := scans.CheckMatrixScanBackward(A, bv, h0, h, dh)
	if err != nil {
		return nil, nil, nil, err
	}
	names := []string{"A", "h0", "h", "dh", "b"}
	ts, err := b.prepare(op, d, A.DType(), names, A, h0, h, dh, bv)
	if err != nil {
		return nil, nil, nil, err
	}
	c := kernelCall{op: op, dir: scans.Backward, d: d, dt: A.DType(), inNames: names, ins: ts[:4],
		outs: [][]int{A.Shape(), bv.Shape(), optShape(ts[1], d.B, d.N, 2)}}
	blockwise(&c, 1)
	out, err := b.call(c)
	if err != nil {
		return nil, nil, nil, err
	}
	return out[0], out[1], out[2], nil
}

// MatrixAffineScan computes H_t = A_t H_{t-1} + X_t per (k,k) x (k,v) block.
func (b *Backend) MatrixAffineScan(A, X, H0 scans.Tensor) (H scans.Tensor, err error) {
	const op = scans.OpMatrixAffineScan
	defer guard(op, &err)
	d, err := scans.CheckMatrixAffineScan(A, X, H0)
	if err != nil {
		return nil, err
	}
	names := []string{"A", "X", "H0"}
	ts, err := b.prepare(op, d, A.DType(), names, A, X, H0)
	if err != nil {
		return nil, err
	}
	c := kernelCall{op: op, dir: scans.Forward, d: d, dt: A.DType(), inNames: names, ins: ts,
		outs: [][]int{X.Shape()}}
	blockwise(&c, d.V)
	out, err := b.call(c)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// MatrixAffineScanBackward returns the gradients of A, X and H0 (nil when
// H0 is nil).
func (b *Backend) MatrixAffineScanBackward(A, X, H0, H, dH scans.Tensor) (dA, dX, dH0 scans.Tensor, err error) {
	const op = scans.OpMatrixAffineScan
	defer guard(op, &err)
	d, err := scans.CheckMatrixAffineScanBackward(A, X, H0, H, dH)
	if err != nil {
		return nil, nil, nil, err
	}
	names := []string{"A", "H0", "H", "dH", "X"}
	ts, err := b.prepare(op, d, A.DType(), names, A, H0, H, dH, X)
	if err != nil {
		return nil, nil, nil, err
	}
	c := kernelCall{op: op, dir: scans.Backward, d: d, dt: A.DType(), inNames: names, ins: ts[:4],
		outs: [][]int{A.Shape(), X.Shape(), optShape(ts[1], d.B, d.N, d.K, d.V)}}
	blockwise(&c, d.V)
	out, err := b.call(c)
	if err != nil {
		return nil, nil, nil, err
	}
	return out[0], out[1], out[2], nil
}

// ParallelScanLog computes h_t = exp(lc_t) h_{t-1} + exp(lv_{t+1}),
// h_{-1} = exp(lv_0), in log space.
func (b *Backend) ParallelScanLog(logCoeffs, logValues scans.Tensor) (h scans.Tensor, err error) {
	const op = scans.OpParallelScanLog
	defer guard(op, &err)
	d, err := scans.CheckParallelScanLog(logCoeffs, logValues)
	if err != nil {
		return nil, err
	}
	names := []string{"log_coeffs", "log_values"}
	ts, err := b.prepare(op, d, logCoeffs.DType(), names, logCoeffs, logValues)
	if err != nil {
		return nil, err
	}
	c := kernelCall{op: op, dir: scans.Forward, d: d, dt: logCoeffs.DType(), inNames: names, ins: ts,
		outs: [][]int{logCoeffs.Shape()}}
	b.elementwise(&c)
	out, err := b.call(c)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// ParallelScanLogBackward returns the gradients of log_coeffs and
// log_values.
func (b *Backend) ParallelScanLogBackward(logCoeffs, logValues, h, dh scans.Tensor) (dLogCoeffs, dLogValues scans.Tensor, err error) {
	const op = scans.OpParallelScanLog
	defer guard(op, &err)
	d, err := scans.CheckParallelScanLogBackward(logCoeffs, logValues, h, dh)
	if err != nil {
		return nil, nil, err
	}
	names := []string{"log_coeffs", "log_values", "h", "dh"}
	ts, err := b.prepare(op, d, logCoeffs.DType(), names, logCoeffs, logValues, h, dh)
	if err != nil {
		return nil, nil, err
	}
	c := kernelCall{op: op, dir: scans.Backward, d: d, dt: logCoeffs.DType(), inNames: names, ins: ts,
		outs: [][]int{logCoeffs.Shape(), logValues.Shape()}}
	b.elementwise(&c)
	out, err := b.call(c)
	if err != nil {
		return nil, nil, err
	}
	return out[0], out[1], nil
}

// GivensScan computes h_t = sigma_t * R(theta_t) h_{t-1} + x_t without
// forming R.
func (b *Backend) GivensScan(theta, sigma, x, h0 scans.Tensor) (h scans.Tensor, err error) {
	const op = scans.OpGivensScan
	defer guard(op, &err)
	d, err := scans.CheckGivensScan(theta, sigma, x, h0)
	if err != nil {
		return nil, err
	}
	names := []string{"theta", "sigma", "x", "h0"}
	ts, err := b.prepare(op, d, sigma.DType(), names, theta, sigma, x, h0)
	if err != nil {
		return nil, err
	}
	c := kernelCall{op: op, dir: scans.Forward, d: d, dt: sigma.DType(), inNames: names, ins: ts,
		outs: [][]int{sigma.Shape()}}
	blockwise(&c, 1)
	out, err := b.call(c)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// GivensScanBackward returns the gradients of theta, sigma, x and h0 (nil
// when h0 is nil). It never divides by sigma: h_{t-1} comes from the
// forward output h, and the rotations are recomputed in registers.
func (b *Backend) GivensScanBackward(theta, sigma, x, h0, h, dh scans.Tensor) (dTheta, dSigma, dx, dh0 scans.Tensor, err error) {
	const op = scans.OpGivensScan
	defer guard(op, &err)
	d, err := scans.CheckGivensScanBackward(theta, sigma, x, h0, h, dh)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	names := []string{"theta", "sigma", "h0", "h", "dh", "x"}
	ts, err := b.prepare(op, d, sigma.DType(), names, theta, sigma, h0, h, dh, x)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	c := kernelCall{op: op, dir: scans.Backward, d: d, dt: sigma.DType(), inNames: names, ins: ts[:5],
		outs: [][]int{theta.Shape(), sigma.Shape(), sigma.Shape(), optShape(ts[2], d.B, d.N, d.K)}}
	blockwise(&c, 1)
	out, err := b.call(c)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return out[0], out[1], out[2], out[3], nil
}
