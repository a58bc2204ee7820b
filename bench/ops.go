package bench

import (
	"errors"
	"fmt"
	"slices"

	"github.com/mingru/scans"
)

// Forward runs op's forward on b with the inputs in ArgNames order (a nil
// entry for an absent initial state) and returns the output.
func Forward(b scans.Backend, op scans.Op, args []scans.Tensor) (scans.Tensor, error) {
	if err := wantArgs(op, len(args)); err != nil {
		return nil, err
	}
	out, err := b.Run(&scans.Call{Op: op, Dir: scans.Forward, Args: slices.Clone(args)})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// Backward runs op's backward on b with the forward inputs (ArgNames
// order), the forward output out and its gradient dout, and returns the
// gradients in GradNames order (nil for an absent initial state).
func Backward(b scans.Backend, op scans.Op, args []scans.Tensor, out, dout scans.Tensor) ([]scans.Tensor, error) {
	if err := wantArgs(op, len(args)); err != nil {
		return nil, err
	}
	g, err := b.Run(&scans.Call{Op: op, Dir: scans.Backward, Args: append(slices.Clone(args), out, dout)})
	if err != nil {
		return nil, err
	}
	for i, t := range g {
		if scans.IsNil(t) {
			g[i] = nil
		}
	}
	return g, nil
}

func wantArgs(op scans.Op, n int) error {
	spec := scans.Spec(op)
	if spec == nil {
		return fmt.Errorf("bench: unknown operation %q", op)
	}
	if names := spec.ArgNames(scans.Forward); n != len(names) {
		return fmt.Errorf("bench: %s takes %d inputs (%v), got %d", op, len(names), names, n)
	}
	return nil
}

// upload copies host tensors to b, keeping nil entries nil. On error it
// releases what it uploaded.
func upload(b scans.Backend, hs ...*scans.Host) ([]scans.Tensor, error) {
	out := make([]scans.Tensor, len(hs))
	for i, h := range hs {
		if h == nil {
			continue
		}
		t, err := b.Upload(h)
		if err != nil {
			release(b, out...)
			return nil, fmt.Errorf("upload %v: %w", h, err)
		}
		out[i] = t
	}
	return out, nil
}

// release frees every non-nil tensor and returns the first error.
func release(b scans.Backend, ts ...scans.Tensor) error {
	var first error
	for _, t := range ts {
		if scans.IsNil(t) {
			continue
		}
		if err := b.Release(t); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Run uploads the inputs to b, runs op in direction dir (backward uses
// the forward output h and in.Grad) and downloads the results: the output
// for Forward, the gradients in GradNames order (nil for an absent initial
// state) for Backward. It releases every tensor it or the backend
// allocated, and reports a release failure as an error.
func Run(b scans.Backend, op scans.Op, dir scans.Direction, in *InputSet, h *scans.Host) (out []*scans.Host, err error) {
	hosts := slices.Clone(in.Args)
	if dir == scans.Backward {
		if h == nil {
			return nil, errors.New("backward needs the forward output")
		}
		hosts = append(hosts, h, in.Grad)
	}
	dev, err := upload(b, hosts...)
	if err != nil {
		return nil, err
	}
	var results []scans.Tensor
	defer func() {
		if rerr := release(b, append(dev, results...)...); rerr != nil && err == nil {
			out, err = nil, fmt.Errorf("release: %w", rerr)
		}
	}()
	n := len(in.Args)
	if dir == scans.Forward {
		t, err := Forward(b, op, dev[:n])
		if err != nil {
			return nil, err
		}
		results = []scans.Tensor{t}
	} else {
		results, err = Backward(b, op, dev[:n], dev[n], dev[n+1])
		if err != nil {
			return nil, err
		}
	}
	out = make([]*scans.Host, len(results))
	for i, t := range results {
		if scans.IsNil(t) {
			continue
		}
		if out[i], err = b.Download(t); err != nil {
			return nil, fmt.Errorf("download: %w", err)
		}
	}
	return out, nil
}
