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

// owns checks, before any shape check, that every non-nil argument is one
// of this backend's tensors, so that an argument on another device is
// named as such whatever the others are.
func (b *Backend) owns(op scans.Op, dir scans.Direction, args ...scans.Tensor) error {
	names := argNames(op, dir)
	for i, t := range args {
		if _, err := b.mine(op, names[i], t); err != nil {
			return err
		}
	}
	return nil
}

// run runs one operation whose arguments passed check (d is what it
// returned): it converts them to this backend's tensors, checks the
// envelope and the device, plans the launch and runs it.
func (b *Backend) run(op scans.Op, dir scans.Direction, d scans.Dims, args ...scans.Tensor) ([]scans.Tensor, error) {
	names := argNames(op, dir)
	ts := make([]*Tensor, len(args))
	for i, t := range args {
		var err error
		if ts[i], err = b.mine(op, names[i], t); err != nil {
			return nil, err
		}
	}
	dt := args[0].DType()
	if err := envelope(op, d, dt); err != nil {
		return nil, err
	}
	if err := b.ensure(); err != nil {
		return nil, err
	}
	i := initArg(op)
	p := planFor(op, dir, d, dt, i >= 0 && ts[i] != nil, b.occ)
	p.withTheta(ts[0].angles)
	return b.call(&p, names, ts)
}

// call runs a plan on the device goroutine: it allocates the outputs
// (poisoned with NaN when b.poison is set), launches the kernel between
// two events and returns the outputs (nil interfaces for the ones not
// wanted). On failure it frees what it allocated.
func (b *Backend) call(p *plan, names []string, args []*Tensor) ([]scans.Tensor, error) {
	var outs []*Tensor
	err := b.do(func() error {
		params := make([]uint64, 0, len(p.ins)+len(p.outs)+len(p.scalars))
		for _, i := range p.ins {
			var ptr uint64
			if t := args[i]; t != nil {
				if t.ptr == 0 {
					return releasedError(p.op, names[i], t)
				}
				ptr = t.ptr
			}
			params = append(params, ptr)
		}
		f, err := b.function(p.module(), p.kernel())
		if err != nil {
			return &scans.KernelError{Backend: backendName, Op: p.op, Err: err}
		}
		made := make([]*Tensor, len(p.outs))
		fail := func(err error) error {
			for _, t := range made {
				if t != nil {
					b.free(t.ptr, t.bytes)
				}
			}
			return &scans.KernelError{Backend: backendName, Op: p.op, Err: err}
		}
		for i, shape := range p.outs {
			var ptr uint64
			if shape != nil {
				t, err := b.newTensor(p.dt, shape)
				if err != nil {
					return fail(err)
				}
				made[i] = t
				if b.poison {
					if err := fillNaN(t); err != nil {
						return fail(err)
					}
				}
				ptr = t.ptr
			}
			params = append(params, ptr)
		}
		for _, s := range p.scalars {
			params = append(params, uint64(s))
		}
		dur, err := b.timed(func() error { return launch(p.kernel(), f, p.grid, p.bx, p.by, p.shared, params) })
		if err != nil {
			return fail(fmt.Errorf("%s %s (%v, %v): %w", p.op, p.dir, p.dt, p.d, err))
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
			err = &scans.KernelError{Backend: backendName, Op: p.op, Err: err}
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

// LinearScan computes h_t = a_t * h_{t-1} + b_t over (B,T,D).
func (b *Backend) LinearScan(a, bv, h0 scans.Tensor) (h scans.Tensor, err error) {
	defer guard(scans.OpLinearScan, &err)
	if err := b.owns(scans.OpLinearScan, scans.Forward, a, bv, h0); err != nil {
		return nil, err
	}
	d, err := scans.CheckLinearScan(a, bv, h0)
	if err != nil {
		return nil, err
	}
	out, err := b.run(scans.OpLinearScan, scans.Forward, d, a, bv, h0)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// LinearScanBackward returns the gradients of a, b and h0 (nil when h0
// is nil).
func (b *Backend) LinearScanBackward(a, bv, h0, h, dh scans.Tensor) (da, db, dh0 scans.Tensor, err error) {
	defer guard(scans.OpLinearScan, &err)
	if err := b.owns(scans.OpLinearScan, scans.Backward, a, bv, h0, h, dh); err != nil {
		return nil, nil, nil, err
	}
	d, err := scans.CheckLinearScanBackward(a, bv, h0, h, dh)
	if err != nil {
		return nil, nil, nil, err
	}
	out, err := b.run(scans.OpLinearScan, scans.Backward, d, a, bv, h0, h, dh)
	if err != nil {
		return nil, nil, nil, err
	}
	return out[0], out[1], out[2], nil
}

// MatrixScan computes h_t = A_t h_{t-1} + b_t per 2x2 block.
func (b *Backend) MatrixScan(A, bv, h0 scans.Tensor) (h scans.Tensor, err error) {
	defer guard(scans.OpMatrixScan, &err)
	if err := b.owns(scans.OpMatrixScan, scans.Forward, A, bv, h0); err != nil {
		return nil, err
	}
	d, err := scans.CheckMatrixScan(A, bv, h0)
	if err != nil {
		return nil, err
	}
	out, err := b.run(scans.OpMatrixScan, scans.Forward, d, A, bv, h0)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// MatrixScanBackward returns the gradients of A, b and h0 (nil when h0 is
// nil).
func (b *Backend) MatrixScanBackward(A, bv, h0, h, dh scans.Tensor) (dA, db, dh0 scans.Tensor, err error) {
	defer guard(scans.OpMatrixScan, &err)
	if err := b.owns(scans.OpMatrixScan, scans.Backward, A, bv, h0, h, dh); err != nil {
		return nil, nil, nil, err
	}
	d, err := scans.CheckMatrixScanBackward(A, bv, h0, h, dh)
	if err != nil {
		return nil, nil, nil, err
	}
	out, err := b.run(scans.OpMatrixScan, scans.Backward, d, A, bv, h0, h, dh)
	if err != nil {
		return nil, nil, nil, err
	}
	return out[0], out[1], out[2], nil
}

// MatrixAffineScan computes H_t = A_t H_{t-1} + X_t per (k,k) x (k,v) block.
func (b *Backend) MatrixAffineScan(A, X, H0 scans.Tensor) (H scans.Tensor, err error) {
	defer guard(scans.OpMatrixAffineScan, &err)
	if err := b.owns(scans.OpMatrixAffineScan, scans.Forward, A, X, H0); err != nil {
		return nil, err
	}
	d, err := scans.CheckMatrixAffineScan(A, X, H0)
	if err != nil {
		return nil, err
	}
	out, err := b.run(scans.OpMatrixAffineScan, scans.Forward, d, A, X, H0)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// MatrixAffineScanBackward returns the gradients of A, X and H0 (nil when
// H0 is nil).
func (b *Backend) MatrixAffineScanBackward(A, X, H0, H, dH scans.Tensor) (dA, dX, dH0 scans.Tensor, err error) {
	defer guard(scans.OpMatrixAffineScan, &err)
	if err := b.owns(scans.OpMatrixAffineScan, scans.Backward, A, X, H0, H, dH); err != nil {
		return nil, nil, nil, err
	}
	d, err := scans.CheckMatrixAffineScanBackward(A, X, H0, H, dH)
	if err != nil {
		return nil, nil, nil, err
	}
	out, err := b.run(scans.OpMatrixAffineScan, scans.Backward, d, A, X, H0, H, dH)
	if err != nil {
		return nil, nil, nil, err
	}
	return out[0], out[1], out[2], nil
}

// ParallelScanLog computes h_t = exp(lc_t) h_{t-1} + exp(lv_{t+1}),
// h_{-1} = exp(lv_0), in log space.
func (b *Backend) ParallelScanLog(logCoeffs, logValues scans.Tensor) (h scans.Tensor, err error) {
	defer guard(scans.OpParallelScanLog, &err)
	if err := b.owns(scans.OpParallelScanLog, scans.Forward, logCoeffs, logValues); err != nil {
		return nil, err
	}
	d, err := scans.CheckParallelScanLog(logCoeffs, logValues)
	if err != nil {
		return nil, err
	}
	out, err := b.run(scans.OpParallelScanLog, scans.Forward, d, logCoeffs, logValues)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// ParallelScanLogBackward returns the gradients of log_coeffs and
// log_values.
func (b *Backend) ParallelScanLogBackward(logCoeffs, logValues, h, dh scans.Tensor) (dLogCoeffs, dLogValues scans.Tensor, err error) {
	defer guard(scans.OpParallelScanLog, &err)
	if err := b.owns(scans.OpParallelScanLog, scans.Backward, logCoeffs, logValues, h, dh); err != nil {
		return nil, nil, err
	}
	d, err := scans.CheckParallelScanLogBackward(logCoeffs, logValues, h, dh)
	if err != nil {
		return nil, nil, err
	}
	out, err := b.run(scans.OpParallelScanLog, scans.Backward, d, logCoeffs, logValues, h, dh)
	if err != nil {
		return nil, nil, err
	}
	return out[0], out[1], nil
}

// GivensScan computes h_t = sigma_t * R(theta_t) h_{t-1} + x_t without
// forming R.
func (b *Backend) GivensScan(theta, sigma, x, h0 scans.Tensor) (h scans.Tensor, err error) {
	defer guard(scans.OpGivensScan, &err)
	if err := b.owns(scans.OpGivensScan, scans.Forward, theta, sigma, x, h0); err != nil {
		return nil, err
	}
	d, err := scans.CheckGivensScan(theta, sigma, x, h0)
	if err != nil {
		return nil, err
	}
	out, err := b.run(scans.OpGivensScan, scans.Forward, d, theta, sigma, x, h0)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// GivensScanBackward returns the gradients of theta, sigma, x and h0 (nil
// when h0 is nil). It never divides by sigma: h_{t-1} comes from the
// forward output h, and the rotations are recomputed in registers.
func (b *Backend) GivensScanBackward(theta, sigma, x, h0, h, dh scans.Tensor) (dTheta, dSigma, dx, dh0 scans.Tensor, err error) {
	defer guard(scans.OpGivensScan, &err)
	if err := b.owns(scans.OpGivensScan, scans.Backward, theta, sigma, x, h0, h, dh); err != nil {
		return nil, nil, nil, nil, err
	}
	d, err := scans.CheckGivensScanBackward(theta, sigma, x, h0, h, dh)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	out, err := b.run(scans.OpGivensScan, scans.Backward, d, theta, sigma, x, h0, h, dh)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return out[0], out[1], out[2], out[3], nil
}
