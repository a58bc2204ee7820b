package eager

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"testing"

	"github.com/mingru/scans"
)

// TestDeterministicAndConcurrent checks that results do not depend on the
// number of worker goroutines (GOMAXPROCS 1 against the default and 8),
// and that concurrent calls on one Backend give the same results as
// sequential ones (run with -race).
func TestDeterministicAndConcurrent(t *testing.T) {
	be := New()
	r := newRand(t)
	type run struct {
		c  opCase
		in []scans.Tensor
		dh scans.Tensor
	}
	var runs []run
	for _, op := range scans.Ops {
		c := newCase(r, op, dims(op, 9, 70, 33, 4, 3), true, benchDist)
		runs = append(runs, run{c, c.tensors(t, scans.F32), host(t, normal(r, scans.NumElements(c.outShape())), c.outShape()...)})
	}
	results := func(x run) [][]float64 {
		h, err := forward(be, x.c.op, x.in)
		if err != nil {
			t.Error(err)
			return nil
		}
		g, err := backward(be, x.c.op, x.in, h, x.dh)
		if err != nil {
			t.Error(err)
			return nil
		}
		out := [][]float64{data(t, h)}
		for _, gi := range g {
			out = append(out, data(t, gi))
		}
		return out
	}
	same := func(what string, a, b [][]float64) {
		t.Helper()
		if len(a) != len(b) {
			t.Fatalf("%s: %d results, want %d", what, len(b), len(a))
		}
		for i := range a {
			for j := range a[i] {
				if math.Float64bits(a[i][j]) != math.Float64bits(b[i][j]) {
					t.Errorf("%s: result %d element %d: %v, want %v", what, i, j, b[i][j], a[i][j])
					return
				}
			}
		}
	}
	want := make([][][]float64, len(runs))
	for i, x := range runs {
		want[i] = results(x)
	}
	for _, procs := range []int{1, 8} {
		old := runtime.GOMAXPROCS(procs)
		for i, x := range runs {
			same(fmt.Sprintf("%s with GOMAXPROCS=%d", x.c.op, procs), want[i], results(x))
		}
		runtime.GOMAXPROCS(old)
	}
	var wg sync.WaitGroup
	got := make([][][][]float64, 3)
	for g := range got {
		got[g] = make([][][]float64, len(runs))
		for i, x := range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[g][i] = results(x)
			}()
		}
	}
	wg.Wait()
	for g := range got {
		for i, x := range runs {
			same(fmt.Sprintf("%s concurrent call %d", x.c.op, g), want[i], got[g][i])
		}
	}
}
