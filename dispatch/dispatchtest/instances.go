// Package dispatchtest holds the tests that every GPU backend runs
// through dispatch, written once: a backend's test calls them in a few
// lines, as its conformance test calls conformancetest.
package dispatchtest

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mingru/scans"
	"github.com/mingru/scans/dispatch"
	"github.com/mingru/scans/eager"
)

// TestInstances checks two available backend instances of one kind in
// one process, on one device or two: each holds its own tensors;
// dispatch runs each call, synchronous or queued, on the instance that
// holds its tensors and names an argument of the other; Copy moves a
// tensor between them; both compute what eager computes.
func TestInstances(t *testing.T, first, second scans.Backend) {
	t.Helper()
	// The Scanner lists neither backend: it runs each call where its
	// tensors are.
	s, err := dispatch.New(dispatch.Auto, dispatch.WithBackends(eager.New()))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(rand.Uint64(), 1))
	host := func() *scans.Host {
		h, _ := scans.NewHost(scans.F32, 3, 17, 9)
		for i := range h.Len() {
			h.Set(i, float32(r.NormFloat64()))
		}
		return h
	}
	a, x := host(), host()
	for i := range a.Len() {
		a.Set(i, 0.5+0.45*float32(math.Tanh(float64(a.At(i))))) // in (0.05, 0.95)
	}
	up := func(b scans.Backend, h *scans.Host) scans.Tensor {
		d, err := b.Upload(h)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	owner := func(what string, res scans.Tensor, want scans.Backend) {
		t.Helper()
		o, ok := res.(scans.Owned)
		if !ok || o.Owner() != want {
			t.Errorf("%s: the result is held by %v, want %s instance %p", what, res, want.Name(), want)
		}
	}
	a1, x1 := up(first, a), up(first, x)
	h1, err := s.LinearScan(a1, x1, nil)
	if err != nil {
		t.Fatal(err)
	}
	owner("a call on the first instance's tensors", h1, first)
	a2, err := dispatch.Copy(a1, second)
	if err != nil {
		t.Fatal(err)
	}
	owner("Copy to the second instance", a2, second)
	x2 := up(second, x)
	h2, err := s.LinearScan(a2, x2, nil)
	if err != nil {
		t.Fatal(err)
	}
	owner("a call on the second instance's tensors", h2, second)
	g1, err := first.Download(h1)
	if err != nil {
		t.Fatal(err)
	}
	g2, err := second.Download(h2)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := eager.New().LinearScan(a, x, nil)
	for i, w := range want.(*scans.Host).Float32Data() {
		if g1.At(i) != g2.At(i) {
			t.Fatalf("element %d: %v on the first instance, %v on the second", i, g1.At(i), g2.At(i))
		}
		if d := math.Abs(float64(g1.At(i) - w)); !(d <= 1e-5*(1+math.Abs(float64(w)))) {
			t.Fatalf("element %d: %v, want %v", i, g1.At(i), w)
		}
	}
	_, err = s.LinearScan(a1, x2, nil)
	var ae *scans.ArgError
	if !errors.As(err, &ae) || ae.Arg != "b" {
		t.Errorf("a tensor of the other instance as b: %v, want an ArgError naming b", err)
	}
	q, err := s.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	res, err := q.Run(&scans.Call{Op: scans.OpLinearScan, Dir: scans.Forward, Args: []scans.Tensor{a2, x2, nil}})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Wait(); err != nil {
		t.Fatal(err)
	}
	owner("a queued call on the second instance's tensors", res[0], second)
	g3, err := second.Download(res[0])
	if err != nil {
		t.Fatal(err)
	}
	for i := range g3.Len() {
		if g3.At(i) != g2.At(i) {
			t.Fatalf("element %d: %v queued, %v synchronous", i, g3.At(i), g2.At(i))
		}
	}
	for _, p := range []struct {
		b  scans.Backend
		ts []scans.Tensor
	}{{first, []scans.Tensor{a1, x1, h1}}, {second, []scans.Tensor{a2, x2, h2, res[0]}}} {
		for _, d := range p.ts {
			if err := p.b.Release(d); err != nil {
				t.Error(err)
			}
		}
	}
}
