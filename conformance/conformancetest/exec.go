package conformancetest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/mingru/scans"
	"github.com/mingru/scans/conformance"
)

// TestExecution checks the execution paths of b beyond the synchronous
// call: conformance.ExecCases (in f32 only with -short) through
// caller-given outputs and through a queue; a training step's chain of calls on one queue (outputs given and
// reused, intermediates released while enqueued work still reads them, a
// Download before Wait) against the same calls made synchronously, bit
// for bit; goroutines sharing b, each with its own queue; and, for a
// backend with a memory pool, calls loops of a call and its release,
// through which the device memory held stays flat. It skips, with the
// backend's reason, when b is not available.
func TestExecution(t *testing.T, b scans.Backend, calls int) {
	t.Helper()
	st := b.Status()
	if !st.Available {
		t.Skipf("%s not available: %s", b.Name(), st.Reason)
	}
	ref := conformance.ReferenceFor(b)
	seed := TestSeed()
	t.Logf("execution: %s, seed %d", st, seed)
	for _, mode := range []struct {
		name string
		wrap func(scans.Backend) scans.Backend
	}{{"out", conformance.IntoOutputs}, {"queue", conformance.ThroughQueue}} {
		wb := mode.wrap(b)
		for _, c := range conformance.ExecCases() {
			if testing.Short() && c.DType != scans.F32 {
				continue // the short tier: f32 only
			}
			t.Run(mode.name+"/"+c.Name(), func(t *testing.T) {
				if r := conformance.CheckCase(wb, ref, c, seed); !r.Pass {
					t.Errorf("%s (seed %d)", r.Summary(), r.Seed)
				}
			})
		}
	}
	t.Run("chain", func(t *testing.T) {
		seed2 := rand.New(rand.NewPCG(seed, 7)).Uint64()
		want, err := chain(b, nil, seed2)
		if err != nil {
			t.Fatalf("synchronous: %v", err)
		}
		q, err := b.(scans.Queuer).NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		got, err := chain(b, q, seed2)
		if err != nil {
			t.Fatalf("queued: %v", err)
		}
		compareBits(t, got, want)
	})
	t.Run("goroutines", func(t *testing.T) {
		const workers = 4
		seeds := make([]uint64, workers)
		wants := make([][]*scans.Host, workers)
		r := rand.New(rand.NewPCG(seed, 11))
		for i := range seeds {
			seeds[i] = r.Uint64()
			var err error
			if wants[i], err = chain(b, nil, seeds[i]); err != nil {
				t.Fatalf("synchronous: %v", err)
			}
		}
		var wg sync.WaitGroup
		gots := make([][]*scans.Host, workers)
		errs := make([]error, workers)
		for i := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				q, err := b.(scans.Queuer).NewQueue()
				if err != nil {
					errs[i] = err
					return
				}
				for range 3 {
					if gots[i], err = chain(b, q, seeds[i]); err != nil {
						errs[i] = err
						return
					}
				}
			}()
		}
		wg.Wait()
		for i := range workers {
			if errs[i] != nil {
				t.Fatalf("goroutine %d: %v", i, errs[i])
			}
			compareBits(t, gots[i], wants[i])
		}
	})
	t.Run("memory", func(t *testing.T) {
		ins, ok := b.(scans.Instrumented)
		mp, ok2 := b.(scans.MemoryPool)
		if !ok || !ok2 {
			t.Skipf("%s keeps no device memory", b.Name())
		}
		r := rand.New(rand.NewPCG(seed, 13))
		a, x := randHost(r, 1, 16, 64), randHost(r, 1, 16, 64)
		da, err := b.Upload(a)
		if err != nil {
			t.Fatal(err)
		}
		dx, err := b.Upload(x)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Release(da)
		defer b.Release(dx)
		call := func() error {
			out, err := b.Run(&scans.Call{Op: scans.OpLinearScan, Dir: scans.Forward, Args: []scans.Tensor{da, dx, nil}})
			if err != nil {
				return err
			}
			return b.Release(out[0])
		}
		ins.ResetPeakBytes()
		for range 10 {
			if err := call(); err != nil {
				t.Fatal(err)
			}
		}
		peak, cached := ins.PeakBytes(), mp.CachedBytes()
		for i := range calls {
			if err := call(); err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
		}
		if p, c := ins.PeakBytes(), mp.CachedBytes(); p > peak || c > cached {
			t.Errorf("after %d calls with release: peak %d bytes, cached %d; after the first 10: %d and %d", calls, p, c, peak, cached)
		}
		t.Logf("%d calls with release: peak %d bytes, cached %d", calls, ins.PeakBytes(), mp.CachedBytes())
	})
}

// chainLayers is the depth of chain's stack of linear_scan layers.
const chainLayers = 8

// chain runs a training step's pattern of calls on b, on q (nil: each
// call synchronously) and returns what it downloads: every layer's
// output and the gradients of the first layer's inputs. Forward, layer i
// computes h_i = linear_scan(a_i, h_{i-1}) from h_0 = x (odd B, T and D),
// into an output given once and reused by the next step; backward walks
// the layers in reverse, releasing each gradient it is done with while
// enqueued work may still read it. The third layer's output is
// downloaded before Wait.
func chain(b scans.Backend, q scans.Queue, seed uint64) ([]*scans.Host, error) {
	r := rand.New(rand.NewPCG(seed, 3))
	const B, T, D = 3, 37, 21
	var run scans.Runner = b
	if q != nil {
		run = q
	}
	var held []scans.Tensor
	defer func() {
		for _, t := range held {
			b.Release(t)
		}
	}()
	up := func(h *scans.Host) (scans.Tensor, error) {
		t, err := b.Upload(h)
		if err == nil {
			held = append(held, t)
		}
		return t, err
	}
	x, err := up(randHost(r, B, T, D))
	if err != nil {
		return nil, err
	}
	as := make([]scans.Tensor, chainLayers)
	hs := make([]scans.Tensor, chainLayers+1)
	hs[0] = x
	for i := range as {
		a := randHost(r, B, T, D)
		for j := range a.Len() {
			a.Set(j, 0.5+0.45*a.At(j)) // in (0.05, 0.95): a stable recurrence
		}
		if as[i], err = up(a); err != nil {
			return nil, err
		}
		// Every other layer writes into an output given by the caller.
		var out []scans.Tensor
		if i%2 == 1 {
			o, err := up(randHost(r, B, T, D))
			if err != nil {
				return nil, err
			}
			out = []scans.Tensor{o}
		}
		res, err := run.Run(&scans.Call{Op: scans.OpLinearScan, Dir: scans.Forward, Args: []scans.Tensor{as[i], hs[i], nil}, Out: out})
		if err != nil {
			return nil, fmt.Errorf("layer %d forward: %w", i, err)
		}
		if out == nil {
			held = append(held, res[0])
		}
		hs[i+1] = res[0]
	}
	early, err := b.Download(hs[3])
	if err != nil {
		return nil, fmt.Errorf("download before wait: %w", err)
	}
	g, err := up(randHost(r, B, T, D))
	if err != nil {
		return nil, err
	}
	var da scans.Tensor
	for i := chainLayers - 1; i >= 0; i-- {
		res, err := run.Run(&scans.Call{Op: scans.OpLinearScan, Dir: scans.Backward,
			Args: []scans.Tensor{as[i], hs[i], nil, hs[i+1], g}})
		if err != nil {
			return nil, fmt.Errorf("layer %d backward: %w", i, err)
		}
		if i < chainLayers-1 {
			// g is the previous layer's db, read by the call just
			// enqueued: released now, freed once that has run.
			if err := b.Release(g); err != nil {
				return nil, err
			}
			held = slices.DeleteFunc(held, func(t scans.Tensor) bool { return t == g })
		}
		g = res[1]
		held = append(held, res[1])
		if i > 0 {
			if err := b.Release(res[0]); err != nil {
				return nil, err
			}
		} else {
			da = res[0]
			held = append(held, da)
		}
	}
	if q != nil {
		if err := q.Wait(); err != nil {
			return nil, err
		}
	}
	out := []*scans.Host{early}
	for _, t := range append(hs[1:], g, da) {
		h, err := b.Download(t)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

func randHost(r *rand.Rand, shape ...int) *scans.Host {
	h, _ := scans.NewHost(scans.F32, shape...)
	for i := range h.Len() {
		h.Set(i, float32(r.NormFloat64()))
	}
	return h
}

// compareBits fails t unless got and want hold the same bits (NaN never
// passes).
func compareBits(t *testing.T, got, want []*scans.Host) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d tensors, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i].Float32Data(), want[i].Float32Data()
		for j := range w {
			if math.IsNaN(float64(g[j])) || math.Float32bits(g[j]) != math.Float32bits(w[j]) {
				t.Fatalf("tensor %d element %d: got %v, want %v (the synchronous calls' result)", i, j, g[j], w[j])
			}
		}
	}
}

// TestClose checks Close on b, which the test owns: Close while a
// goroutine enqueues and another waits returns, and afterwards every call
// (Run, a queue's Run and Wait, Upload, Download, Release) returns an
// error wrapping scans.ErrClosed; none panics, and neither does
// LastKernelTime. It skips when b is not available.
func TestClose(t *testing.T, b scans.Backend) {
	t.Helper()
	if st := b.Status(); !st.Available {
		t.Skipf("%s not available: %s", b.Name(), st.Reason)
	}
	closer, ok := b.(interface{ Close() error })
	if !ok {
		t.Fatalf("%s has no Close", b.Name())
	}
	r := rand.New(rand.NewPCG(TestSeed(), 5))
	a, err := b.Upload(randHost(r, 2, 64, 32))
	if err != nil {
		t.Fatal(err)
	}
	x, err := b.Upload(randHost(r, 2, 64, 32))
	if err != nil {
		t.Fatal(err)
	}
	q, err := b.(scans.Queuer).NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	fwd := &scans.Call{Op: scans.OpLinearScan, Dir: scans.Forward, Args: []scans.Tensor{a, x, nil}}
	for range 8 {
		if _, err := q.Run(fwd.WithArgs(fwd.Args)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var runErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 10000; i++ {
			if _, err := b.Run(fwd.WithArgs(fwd.Args)); err != nil {
				runErr = err
				return
			}
		}
	}()
	if err := closer.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wg.Wait()
	if runErr != nil && !errors.Is(runErr, scans.ErrClosed) {
		t.Errorf("Run during Close: %v, want nil or an error wrapping ErrClosed", runErr)
	}
	if err := q.Wait(); err != nil && !errors.Is(err, scans.ErrClosed) {
		t.Errorf("Wait after Close: %v, want nil or an error wrapping ErrClosed", err)
	}
	checks := map[string]error{}
	_, checks["Run"] = b.Run(fwd.WithArgs(fwd.Args))
	_, checks["queue Run"] = q.Run(fwd.WithArgs(fwd.Args))
	_, checks["Upload"] = b.Upload(randHost(r, 1, 2, 3))
	_, checks["Download"] = b.Download(x)
	checks["Release"] = b.Release(a)
	if _, err := b.(scans.Queuer).NewQueue(); !errors.Is(err, scans.ErrClosed) {
		t.Errorf("NewQueue after Close: %v, want an error wrapping ErrClosed", err)
	}
	for name, err := range checks {
		if !errors.Is(err, scans.ErrClosed) {
			t.Errorf("%s after Close: %v, want an error wrapping ErrClosed", name, err)
		}
	}
	if inst, ok := b.(scans.Instrumented); ok {
		// It may read what the last call left on the device: that must
		// have been read before the device went.
		inst.LastKernelTime()
	}
	if err := closer.Close(); err != nil {
		t.Errorf("second Close: %v, want nil", err)
	}
}
