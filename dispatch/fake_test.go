package dispatch

import (
	"fmt"
	"sync/atomic"

	"github.com/mingru/scans"
	"github.com/mingru/scans/eager"
)

// fakeGPU is a stand-in GPU backend for dispatch's tests: it computes with
// eager but holds its tensors under its own location, so every move between
// host and device is exercised. Knobs make it unavailable, software, out of
// envelope for k > 2, or failing at launch.
type fakeGPU struct {
	name     string
	reason   string // non-empty: unavailable for this reason
	software bool
	maxK     int   // Supports refuses K > maxK (0: no limit)
	fail     error // returned by every op when set
	ref      *eager.Backend
	runs     atomic.Int64 // operations run
	live     atomic.Int64 // tensors held
}

type fakeTensor struct {
	h   *scans.Host
	loc string
}

func (t *fakeTensor) DType() scans.DType { return t.h.DType() }
func (t *fakeTensor) Shape() []int       { return t.h.Shape() }
func (t *fakeTensor) Location() string   { return t.loc }

func newFake(name string) *fakeGPU { return &fakeGPU{name: name, ref: eager.New()} }

func (f *fakeGPU) Name() string { return f.name }
func (f *fakeGPU) Status() scans.Status {
	if f.reason != "" {
		return scans.Status{Backend: f.name, Reason: f.reason}
	}
	return scans.Status{Backend: f.name, Available: true, Device: "fake", Software: f.software}
}
func (f *fakeGPU) Supports(op scans.Op, d scans.Dims, dt scans.DType) error {
	if f.maxK > 0 && d.K > f.maxK {
		return &scans.ScanFallback{Backend: f.name, Op: op, Reason: fmt.Sprintf("k=%d is over %d", d.K, f.maxK)}
	}
	return nil
}
func (f *fakeGPU) Upload(h *scans.Host) (scans.Tensor, error) {
	f.live.Add(1)
	return &fakeTensor{h.Clone(), f.name}, nil
}
func (f *fakeGPU) Download(t scans.Tensor) (*scans.Host, error) {
	ft, ok := t.(*fakeTensor)
	if !ok || ft.loc != f.name {
		return nil, fmt.Errorf("%s: foreign tensor", f.name)
	}
	return ft.h.Clone(), nil
}
func (f *fakeGPU) Release(t scans.Tensor) error {
	if !scans.IsNil(t) {
		f.live.Add(-1)
	}
	return nil
}

// wrap runs an eager computation on unwrapped inputs and wraps the outputs.
func (f *fakeGPU) wrap(in []scans.Tensor, fn func(in []scans.Tensor) ([]scans.Tensor, error)) ([]scans.Tensor, error) {
	f.runs.Add(1)
	if f.fail != nil {
		return nil, f.fail
	}
	hs := make([]scans.Tensor, len(in))
	for i, t := range in {
		if scans.IsNil(t) {
			continue
		}
		ft, ok := t.(*fakeTensor)
		if !ok || ft.loc != f.name {
			return nil, &scans.ArgError{Op: "fake", Arg: fmt.Sprint(i), Want: "a " + f.name + " tensor", Got: t.Location()}
		}
		hs[i] = ft.h
	}
	out, err := fn(hs)
	if err != nil {
		return nil, err
	}
	res := make([]scans.Tensor, len(out))
	for i, t := range out {
		if !scans.IsNil(t) {
			f.live.Add(1)
			res[i] = &fakeTensor{t.(*scans.Host), f.name}
		}
	}
	return res, nil
}

// Run runs the call on eager with the unwrapped inputs.
func (f *fakeGPU) Run(c *scans.Call) ([]scans.Tensor, error) {
	return f.wrap(c.Args, func(in []scans.Tensor) ([]scans.Tensor, error) {
		return f.ref.Run(&scans.Call{Op: c.Op, Dir: c.Dir, Args: in})
	})
}
