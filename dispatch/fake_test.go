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

func (f *fakeGPU) LinearScan(a, b, h0 scans.Tensor) (scans.Tensor, error) {
	out, err := f.wrap([]scans.Tensor{a, b, h0}, func(in []scans.Tensor) ([]scans.Tensor, error) {
		h, err := f.ref.LinearScan(in[0], in[1], in[2])
		return []scans.Tensor{h}, err
	})
	return first(out, err)
}
func (f *fakeGPU) LinearScanBackward(a, b, h0, h, dh scans.Tensor) (scans.Tensor, scans.Tensor, scans.Tensor, error) {
	out, err := f.wrap([]scans.Tensor{a, b, h0, h, dh}, func(in []scans.Tensor) ([]scans.Tensor, error) {
		x, y, z, err := f.ref.LinearScanBackward(in[0], in[1], in[2], in[3], in[4])
		return []scans.Tensor{x, y, z}, err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return out[0], out[1], out[2], nil
}
func (f *fakeGPU) MatrixScan(A, b, h0 scans.Tensor) (scans.Tensor, error) {
	out, err := f.wrap([]scans.Tensor{A, b, h0}, func(in []scans.Tensor) ([]scans.Tensor, error) {
		h, err := f.ref.MatrixScan(in[0], in[1], in[2])
		return []scans.Tensor{h}, err
	})
	return first(out, err)
}
func (f *fakeGPU) MatrixScanBackward(A, b, h0, h, dh scans.Tensor) (scans.Tensor, scans.Tensor, scans.Tensor, error) {
	out, err := f.wrap([]scans.Tensor{A, b, h0, h, dh}, func(in []scans.Tensor) ([]scans.Tensor, error) {
		x, y, z, err := f.ref.MatrixScanBackward(in[0], in[1], in[2], in[3], in[4])
		return []scans.Tensor{x, y, z}, err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return out[0], out[1], out[2], nil
}
func (f *fakeGPU) MatrixAffineScan(A, X, H0 scans.Tensor) (scans.Tensor, error) {
	out, err := f.wrap([]scans.Tensor{A, X, H0}, func(in []scans.Tensor) ([]scans.Tensor, error) {
		h, err := f.ref.MatrixAffineScan(in[0], in[1], in[2])
		return []scans.Tensor{h}, err
	})
	return first(out, err)
}
func (f *fakeGPU) MatrixAffineScanBackward(A, X, H0, H, dH scans.Tensor) (scans.Tensor, scans.Tensor, scans.Tensor, error) {
	out, err := f.wrap([]scans.Tensor{A, X, H0, H, dH}, func(in []scans.Tensor) ([]scans.Tensor, error) {
		x, y, z, err := f.ref.MatrixAffineScanBackward(in[0], in[1], in[2], in[3], in[4])
		return []scans.Tensor{x, y, z}, err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return out[0], out[1], out[2], nil
}
func (f *fakeGPU) ParallelScanLog(lc, lv scans.Tensor) (scans.Tensor, error) {
	out, err := f.wrap([]scans.Tensor{lc, lv}, func(in []scans.Tensor) ([]scans.Tensor, error) {
		h, err := f.ref.ParallelScanLog(in[0], in[1])
		return []scans.Tensor{h}, err
	})
	return first(out, err)
}
func (f *fakeGPU) ParallelScanLogBackward(lc, lv, h, dh scans.Tensor) (scans.Tensor, scans.Tensor, error) {
	out, err := f.wrap([]scans.Tensor{lc, lv, h, dh}, func(in []scans.Tensor) ([]scans.Tensor, error) {
		x, y, err := f.ref.ParallelScanLogBackward(in[0], in[1], in[2], in[3])
		return []scans.Tensor{x, y}, err
	})
	if err != nil {
		return nil, nil, err
	}
	return out[0], out[1], nil
}
func (f *fakeGPU) GivensScan(theta, sigma, x, h0 scans.Tensor) (scans.Tensor, error) {
	out, err := f.wrap([]scans.Tensor{theta, sigma, x, h0}, func(in []scans.Tensor) ([]scans.Tensor, error) {
		h, err := f.ref.GivensScan(in[0], in[1], in[2], in[3])
		return []scans.Tensor{h}, err
	})
	return first(out, err)
}
func (f *fakeGPU) GivensScanBackward(theta, sigma, x, h0, h, dh scans.Tensor) (scans.Tensor, scans.Tensor, scans.Tensor, scans.Tensor, error) {
	out, err := f.wrap([]scans.Tensor{theta, sigma, x, h0, h, dh}, func(in []scans.Tensor) ([]scans.Tensor, error) {
		w, x, y, z, err := f.ref.GivensScanBackward(in[0], in[1], in[2], in[3], in[4], in[5])
		return []scans.Tensor{w, x, y, z}, err
	})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return out[0], out[1], out[2], out[3], nil
}
