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

// Run implements scans.Backend: it names any argument that is not one of
// this backend's tensors, checks the call, and runs it (run).
func (b *Backend) Run(c *scans.Call) (out []scans.Tensor, err error) {
	if c == nil {
		return nil, errors.New("cuda: Run: nil call")
	}
	defer guard(c.Op, &err)
	spec := c.Spec()
	if spec == nil {
		return nil, c.Check()
	}
	if len(c.Args) == len(spec.ArgNames(c.Dir)) {
		if err := b.owns(c.Op, c.Dir, c.Args...); err != nil {
			return nil, err
		}
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	return b.run(c.Op, c.Dir, c.Dims, c.Args...)
}
