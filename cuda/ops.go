//go:build cuda

package cuda

/*
#include <cuda.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/mingru/scans"
	"github.com/mingru/scans/internal/angles"
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
// returned) now, or enqueues it on q: it converts its arguments and
// outputs to this backend's tensors, checks the envelope and the device,
// plans the launch and runs it.
func (b *Backend) run(c *scans.Call, q *Queue) ([]scans.Tensor, error) {
	op, dir, d := c.Op, c.Dir, c.Dims
	names := argNames(op, dir)
	ts := make([]*Tensor, len(c.Args))
	for i, t := range c.Args {
		var err error
		if ts[i], err = b.mine(op, names[i], t); err != nil {
			return nil, err
		}
	}
	var given []*Tensor
	if c.Out != nil {
		given = make([]*Tensor, len(c.Out))
		for i, t := range c.Out {
			var err error
			if given[i], err = b.mine(op, c.OutName(i), t); err != nil {
				return nil, err
			}
		}
	}
	if err := envelope(op, d, c.DType); err != nil {
		return nil, err
	}
	if err := b.ensure(); err != nil {
		return nil, err
	}
	i := initArg(op)
	p := planFor(op, dir, d, c.DType, i >= 0 && ts[i] != nil, b.occ)
	p.withTheta(ts[0].angles)
	return b.call(&p, names, ts, given, c, q)
}

// call runs a plan under do: it allocates the outputs, or takes the
// caller's (given), poisons them with NaN when b.poison is set, launches
// the kernel (between two events, or on q's stream) and returns the
// outputs (nil interfaces for the ones not wanted). On failure it frees
// what it allocated.
func (b *Backend) call(p *plan, names []string, args, given []*Tensor, c *scans.Call, q *Queue) ([]scans.Tensor, error) {
	var outs []*Tensor
	err := b.do(func() (err error) {
		params := make([]uint64, 0, len(p.ins)+len(p.outs)+len(p.scalars))
		for _, i := range p.ins {
			var ptr uint64
			if t := args[i]; t != nil {
				if !t.live() {
					return releasedError(p.op, names[i], t)
				}
				ptr = t.ptr
			}
			params = append(params, ptr)
		}
		for i, t := range given {
			if t != nil && !t.live() {
				return releasedError(p.op, c.OutName(i), t)
			}
		}
		f, name, err := b.planFunction(p)
		if err != nil {
			return &scans.KernelError{Backend: backendName, Op: p.op, Err: err}
		}
		res := make([]*Tensor, len(p.outs))
		var made []*Tensor
		fail := func(err error) error {
			for _, t := range made {
				b.free(t.ptr)
				t.ptr = 0
			}
			return &scans.KernelError{Backend: backendName, Op: p.op, Err: err}
		}
		for i, shape := range p.outs {
			var ptr uint64
			if shape != nil {
				t := (*Tensor)(nil)
				if given != nil {
					t = given[i]
					t.angles = angles.Any
				} else {
					if t, err = b.newTensor(p.dt, shape); err != nil {
						return fail(err)
					}
					made = append(made, t)
				}
				res[i] = t
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
		// The streams of wrapped tensors (WrapOn): the launch waits for
		// their work so far, and their later work waits for the launch.
		var stream C.CUstream
		if q != nil {
			stream = q.stream
		}
		others := orderStreams(stream, args, res)
		if err := b.orderBefore(stream, others); err != nil {
			return fail(err)
		}
		defer func() {
			if err == nil {
				if oerr := b.orderAfter(stream, others); oerr != nil {
					err = fail(oerr)
				}
			}
		}()
		if q != nil {
			if err := q.launch(p, f, name, params, args, res); err != nil {
				return fail(fmt.Errorf("%s %s (%v, %v): %w", p.op, p.dir, p.dt, p.d, err))
			}
			outs = res
			return nil
		}
		run := func() error { return launch(nil, name, f, p.grid, p.bx, p.by, p.shared, params) }
		if !b.queued.Load() {
			// Enqueued on the default stream between two events; the
			// call returns without waiting (see Backend).
			if err := b.bracket(run); err != nil {
				return fail(fmt.Errorf("%s %s (%v, %v): %w", p.op, p.dir, p.dt, p.d, err))
			}
			outs = res
			return nil
		}
		dur, err := b.timedOn(true, run)
		if err != nil {
			return fail(fmt.Errorf("%s %s (%v, %v): %w", p.op, p.dir, p.dt, p.d, err))
		}
		b.mu.Lock()
		b.lastTime, b.hasTime, b.timePending = dur, true, false
		b.mu.Unlock()
		outs = res
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
	return b.runCall(c, nil)
}

// runCall runs c now (q nil) or enqueues it on q.
func (b *Backend) runCall(c *scans.Call, q *Queue) (out []scans.Tensor, err error) {
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
	if len(c.Out) == len(spec.Results(c.Dir)) {
		for i, t := range c.Out {
			if _, err := b.mine(c.Op, c.OutName(i), t); err != nil {
				return nil, err
			}
		}
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	return b.run(c, q)
}
