package conformance

import (
	"fmt"
	"math"

	"github.com/mingru/scans"
)

// IntoOutputs returns b with a Run that writes into outputs it allocates
// first (scans.Call.Out), filled with NaN, and checks that the results
// are those tensors: CheckCase through it runs the matrix through
// caller-given outputs, and a row passes only if every element was
// written. Every other method is b's.
func IntoOutputs(b scans.Backend) scans.Backend { return &into{b} }

type into struct{ scans.Backend }

func (w *into) Run(c *scans.Call) ([]scans.Tensor, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	shapes := c.ResultShapes()
	out := make([]scans.Tensor, len(shapes))
	release := func() {
		for _, t := range out {
			if !scans.IsNil(t) {
				w.Backend.Release(t)
			}
		}
	}
	for i, s := range shapes {
		if s == nil {
			continue
		}
		h, err := NaNHost(c.DType, s)
		if err != nil {
			release()
			return nil, err
		}
		if out[i], err = w.Backend.Upload(h); err != nil {
			release()
			return nil, fmt.Errorf("upload output %d: %w", i, err)
		}
	}
	c2 := *c
	c2.Out = out
	res, err := w.Backend.Run(&c2)
	if err != nil {
		release()
		return nil, err
	}
	for i := range out {
		if scans.IsNil(out[i]) != scans.IsNil(res[i]) || (!scans.IsNil(out[i]) && res[i] != out[i]) {
			release()
			return nil, fmt.Errorf("%s: result %d is not the tensor given as Out", c.Op, i)
		}
	}
	return res, nil
}

// ThroughQueue returns b, which must be a scans.Queuer, with a Run that
// enqueues the call on a queue of its own and waits for it: CheckCase
// through it runs the matrix through the asynchronous path. Every other
// method is b's.
func ThroughQueue(b scans.Backend) scans.Backend { return &queued{b} }

type queued struct{ scans.Backend }

func (w *queued) Run(c *scans.Call) ([]scans.Tensor, error) {
	qr, ok := w.Backend.(scans.Queuer)
	if !ok {
		return nil, fmt.Errorf("%s has no queues (scans.Queuer)", w.Backend.Name())
	}
	q, err := qr.NewQueue()
	if err != nil {
		return nil, err
	}
	out, err := q.Run(c)
	if werr := q.Wait(); werr != nil {
		for _, t := range out {
			if !scans.IsNil(t) {
				w.Backend.Release(t)
			}
		}
		return nil, werr
	}
	return out, err
}

// NaNHost is a host tensor of dt and shape filled with NaN.
func NaNHost(dt scans.DType, shape []int) (*scans.Host, error) {
	h, err := scans.NewHost(dt, shape...)
	if err != nil {
		return nil, err
	}
	nan := float32(math.NaN())
	for i := 0; i < h.Len(); i++ {
		h.Set(i, nan)
	}
	return h, nil
}

// ExecCases is the part of Cases(true) that the execution paths run (one
// case per operation, direction, element type and initial state): the
// kernels are the synchronous path's, so what these check is the path.
func ExecCases() []Case {
	type key struct {
		op   scans.Op
		dir  scans.Direction
		dt   scans.DType
		init bool
	}
	seen := map[key]bool{}
	var out []Case
	for _, c := range Cases(true) {
		k := key{c.Op, c.Dir, c.DType, c.Init}
		if c.OutOfEnvelope || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, c)
	}
	return out
}
