//go:build cgo

package vk

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mingru/scans"
)

// TestRepeatedCalls: a synchronous call repeated on the same tensors
// submits the command buffer recorded for the first again, and computes
// from what its inputs hold at the time, bit for bit as a call recorded
// anew on the same values, whatever transfers and other calls ran
// between. Calls alternating between two outputs each find their own
// recording. A new output tensor, or a destroyed buffer, makes the next
// call record anew.
func TestRepeatedCalls(t *testing.T) {
	b := testBackend(t)
	d, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	r := seeded(t)
	const B, T, D = 3, 65, 33
	random := func(lo, hi float32) *scans.Host {
		h, _ := scans.NewHost(scans.F32, B, T, D)
		for i := range h.Float32Data() {
			h.Float32Data()[i] = lo + (hi-lo)*r.Float32()
		}
		return h
	}
	upload := func(h *scans.Host) scans.Tensor {
		t.Helper()
		v, err := b.Upload(h)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// Start with no recording held: emptying the cache destroys buffers.
	b.EmptyCache()
	a, x, h := upload(random(0, 1)), upload(random(-1, 1)), upload(random(-1, 1))
	defer b.Release(a)
	defer b.Release(x)
	defer b.Release(h)

	write := func(v scans.Tensor, hv *scans.Host) {
		t.Helper()
		if err := d.write(v.(*Tensor).buf, hostBytes(hv)); err != nil {
			t.Fatal(err)
		}
	}
	call := func(out scans.Tensor) {
		t.Helper()
		if _, err := b.Run(&scans.Call{Op: scans.OpLinearScan, Dir: scans.Forward, Args: []scans.Tensor{a, x, nil}, Out: []scans.Tensor{out}}); err != nil {
			t.Fatal(err)
		}
	}
	// check compares out with the call recorded anew on fresh copies of
	// the inputs' values ha, hx.
	check := func(label string, out scans.Tensor, ha, hx *scans.Host) {
		t.Helper()
		func() {
			got, err := b.Download(out)
			if err != nil {
				t.Fatal(err)
			}
			fa, fx := upload(ha), upload(hx)
			res, err := b.Run(&scans.Call{Op: scans.OpLinearScan, Dir: scans.Forward, Args: []scans.Tensor{fa, fx, nil}})
			if err != nil {
				t.Fatal(err)
			}
			want, err := b.Download(res[0])
			if err != nil {
				t.Fatal(err)
			}
			b.Release(fa)
			b.Release(fx)
			b.Release(res[0])
			g, w := got.Float32Data(), want.Float32Data()
			for i := range w {
				if math.Float32bits(g[i]) != math.Float32bits(w[i]) || math.IsNaN(float64(g[i])) {
					t.Fatalf("%s: element %d is %v, want %v (the call recorded anew)", label, i, g[i], w[i])
				}
			}
		}()
	}
	nan := random(0, 0)
	for i := range nan.Float32Data() {
		nan.Float32Data()[i] = float32(math.NaN())
	}

	// step writes fresh inputs, and NaN into out, then calls into out and
	// checks the result; replay: the call must submit a held recording.
	step := func(out scans.Tensor, label string, replay bool) {
		t.Helper()
		ha, hx := random(0, 1), random(-1, 1)
		write(a, ha)
		write(x, hx)
		write(out, nan)
		before := d.replays.Load()
		call(out)
		if replay && d.replays.Load() != before+1 {
			t.Fatalf("%s: the call recorded anew", label)
		}
		check(label, out, ha, hx)
	}

	call(h) // records
	for range 4 {
		step(h, "repeat", true)
	}

	// Another output: recorded anew, then repeated.
	h2 := upload(random(-1, 1))
	defer b.Release(h2)
	before := d.replays.Load()
	call(h2)
	if d.replays.Load() != before {
		t.Fatal("a call with another output tensor submitted the old recording")
	}
	step(h2, "new output", true)

	// Outputs that alternate, as two outputs released in the order they
	// were made come back from the pool: each call finds its recording.
	for i := range 6 {
		step([]scans.Tensor{h, h2}[i%2], fmt.Sprintf("alternating outputs, call %d", i), i >= 2)
	}

	// A destroyed buffer (emptying the cache destroys the pooled ones):
	// its handle may come back naming another buffer, so the next call
	// records anew.
	ha, hx := random(0, 1), random(-1, 1)
	write(a, ha)
	write(x, hx)
	b.EmptyCache()
	before = d.replays.Load()
	call(h2)
	if d.replays.Load() != before {
		t.Fatal("a call after buffers were destroyed submitted the old recording")
	}
	check("after a destroyed buffer", h2, ha, hx)
}

// TestRecordingMatches: a held recording matches only the same
// dispatches, fills and buffer generation.
func TestRecordingMatches(t *testing.T) {
	r := rand.New(rand.NewPCG(rand.Uint64(), 1))
	var rec dispatchRec
	for i := range rec.push {
		rec.push[i] = r.Uint32()
	}
	rec.gx, rec.gy = 1+r.Uint32N(100), 1
	op := &batchOp{recs: []dispatchRec{rec, rec}}
	var held recording
	if held.matches(op, op.digest(), 0) {
		t.Fatal("an empty recording matches")
	}
	held.keep(op, op.digest(), 7, 1)
	if !held.matches(op, op.digest(), 7) {
		t.Fatal("the kept operation does not match")
	}
	if held.matches(op, op.digest()+1, 7) {
		t.Fatal("matches with another digest")
	}
	if held.matches(op, op.digest(), 8) {
		t.Fatal("matches after the buffer generation moved")
	}
	other := &batchOp{recs: slices.Clone(op.recs)}
	other.recs[1].push[2]++
	if held.matches(other, other.digest(), 7) {
		t.Fatal("matches with other push constants")
	}
	other = &batchOp{recs: slices.Clone(op.recs)}
	other.recs[0].gy++
	if held.matches(other, other.digest(), 7) {
		t.Fatal("matches with another grid")
	}
	fewer := &batchOp{recs: op.recs[:1]}
	if held.matches(fewer, fewer.digest(), 7) {
		t.Fatal("matches with fewer dispatches")
	}
	buf := &buffer{size: 64}
	op.fills = []operand{{buf: buf, poison: 0x7fc00000}}
	if held.matches(op, op.digest(), 7) {
		t.Fatal("matches with a poison fill added")
	}
	held.keep(op, op.digest(), 7, 1)
	buf.size = 128
	if held.matches(op, op.digest(), 7) {
		t.Fatal("matches a fill of another size")
	}
}

// TestStepReplays: the calls of a training step, made synchronously with
// pooled outputs that are released when the step ends, each submit a
// held recording from the third step on: 8 layers of linear_scan and
// parallel_scan_log forward, each layer's output the next one's input,
// then their backwards in reverse order.
func TestStepReplays(t *testing.T) {
	b := testBackend(t)
	d, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	r := seeded(t)
	const B, T, D, layers = 2, 17, 9, 8
	random := func(lo, hi float32, shape ...int) scans.Tensor {
		t.Helper()
		return uniform(t, b, r, lo, hi, shape...)
	}
	var ins []scans.Tensor
	for range layers {
		ins = append(ins, random(0.5, 1, B, T, D), random(-1, 0, B, T, D), random(-1, 0, B, T+1, D))
	}
	x, dh := random(-1, 1, B, T, D), random(-1, 1, B, T, D)
	defer func() {
		for _, v := range append(ins, x, dh) {
			b.Release(v)
		}
	}()
	run := func(op scans.Op, dir scans.Direction, args ...scans.Tensor) []scans.Tensor {
		t.Helper()
		out, err := b.Run(&scans.Call{Op: op, Dir: dir, Args: args})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	step := func() (calls int) {
		var held []scans.Tensor
		hs := []scans.Tensor{x} // hs[l] is layer l's input, hs[l+1] its output
		for l := range layers {
			a, lc, lv := ins[3*l], ins[3*l+1], ins[3*l+2]
			h := run(scans.OpLinearScan, scans.Forward, a, hs[l], nil)[0]
			hs = append(hs, h)
			p := run(scans.OpParallelScanLog, scans.Forward, lc, lv)[0]
			held = append(held, h, p)
		}
		g := dh
		for l := layers - 1; l >= 0; l-- {
			a, lc, lv := ins[3*l], ins[3*l+1], ins[3*l+2]
			held = append(held, run(scans.OpParallelScanLog, scans.Backward, lc, lv, hs[l+1], g)...)
			grads := run(scans.OpLinearScan, scans.Backward, a, hs[l], nil, hs[l+1], g)
			held = append(held, grads...)
			g = grads[1]
		}
		for _, v := range held {
			if v != nil {
				b.Release(v)
			}
		}
		return 4 * layers
	}
	for i := range 4 {
		before := d.replays.Load()
		n := step()
		got := d.replays.Load() - before
		t.Logf("step %d: %d of %d calls replayed", i, got, n)
		if i >= 2 && got != int64(n) {
			t.Errorf("step %d: %d of its %d calls submitted a held recording", i, got, n)
		}
	}
}

// TestDeferredTimestamps: a synchronous call leaves its timestamps on the
// device. Calls that alternate between two recordings read none;
// LastKernelTime reads the last call's, which a call that takes the same
// context again reads first. The time is the last call's: a call over
// thousands of times the elements takes longer than one over a handful.
func TestDeferredTimestamps(t *testing.T) {
	b, d := timedBackend(t)
	r := seeded(t)
	var held []scans.Tensor
	defer func() {
		for _, v := range held {
			b.Release(v)
		}
	}()
	tensor := func(lo, hi float32, shape ...int) scans.Tensor {
		t.Helper()
		v := uniform(t, b, r, lo, hi, shape...)
		held = append(held, v)
		return v
	}
	// big: 8M elements; small: 4.
	call := func(shape ...int) func() {
		a, x, h := tensor(0.5, 1, shape...), tensor(-1, 1, shape...), tensor(-1, 1, shape...)
		return func() {
			t.Helper()
			c := &scans.Call{Op: scans.OpLinearScan, Dir: scans.Forward, Args: []scans.Tensor{a, x, nil}, Out: []scans.Tensor{h}}
			if _, err := b.Run(c); err != nil {
				t.Fatal(err)
			}
		}
	}
	big, small := call(8, 4096, 256), call(1, 4, 1)
	reads := func(label string, want int64, f func()) {
		t.Helper()
		before := d.stampReads.Load()
		f()
		if got := d.stampReads.Load() - before; got != want {
			t.Fatalf("%s: %d timestamp reads, want %d", label, got, want)
		}
	}
	last := func() time.Duration {
		t.Helper()
		var dt time.Duration
		reads("LastKernelTime", 1, func() {
			var ok bool
			if dt, ok = b.LastKernelTime(); !ok || dt <= 0 {
				t.Fatalf("LastKernelTime = %v, %v after a call, want a positive time", dt, ok)
			}
		})
		return dt
	}
	big()
	small()
	reads("alternating calls", 0, func() {
		for range 3 {
			big()
			small()
		}
	})
	tSmall := last()
	reads("LastKernelTime again", 0, func() {
		if dt, ok := b.LastKernelTime(); !ok || dt != tSmall {
			t.Fatalf("LastKernelTime again = %v, %v, want %v", dt, ok, tSmall)
		}
	})
	big()
	reads("the same call twice", 1, big)
	tBig := last()
	t.Logf("big call %v, small call %v", tBig, tSmall)
	if tBig <= 2*tSmall {
		t.Fatalf("LastKernelTime after the big call %v, after the small one %v: not the last call's", tBig, tSmall)
	}
}

// TestLastKernelTimeAfterClose: the timestamps a call left on the device
// are read before Close destroys it, so LastKernelTime still gives them.
func TestLastKernelTimeAfterClose(t *testing.T) {
	testBackend(t) // skips without a device; checks the validation layer
	b := New()     // a device of its own, which Close destroys
	defer b.Close()
	d, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	if !d.hasTimestamps {
		t.Skip("the device's compute queue has no timestamps")
	}
	r := seeded(t)
	a, x := uniform(t, b, r, 0.5, 1, 2, 33, 5), uniform(t, b, r, -1, 1, 2, 33, 5)
	if _, err := b.Run(&scans.Call{Op: scans.OpLinearScan, Dir: scans.Forward, Args: []scans.Tensor{a, x, nil}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if dt, ok := b.LastKernelTime(); !ok || dt <= 0 {
		t.Fatalf("LastKernelTime after Close = %v, %v, want the last call's time", dt, ok)
	}
}

// TestConcurrentTimestamps: goroutines that share a backend make
// synchronous calls and ask for LastKernelTime after some of them; each
// answer is a time (run it with -race to check the locking).
func TestConcurrentTimestamps(t *testing.T) {
	b, _ := timedBackend(t)
	r := seeded(t)
	const workers, calls = 4, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		args := []scans.Tensor{uniform(t, b, r, 0.5, 1, 1, 8+w, 3), uniform(t, b, r, -1, 1, 1, 8+w, 3)}
		defer b.Release(args[0])
		defer b.Release(args[1])
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				out, err := b.Run(&scans.Call{Op: scans.OpLinearScan, Dir: scans.Forward, Args: []scans.Tensor{args[0], args[1], nil}})
				if err != nil {
					errs <- err
					return
				}
				b.Release(out[0])
				if i%2 == w%2 {
					if dt, ok := b.LastKernelTime(); !ok || dt <= 0 {
						errs <- fmt.Errorf("LastKernelTime = %v, %v after a call", dt, ok)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// timedBackend is testBackend and its device, skipping the test where
// the device's queue has no timestamps.
func timedBackend(t *testing.T) (*Backend, *device) {
	t.Helper()
	b := testBackend(t)
	d, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	if !d.hasTimestamps {
		t.Skip("the device's compute queue has no timestamps")
	}
	return b, d
}

// uniform uploads to b a new f32 tensor of the given shape with entries
// drawn uniformly from [lo, hi).
func uniform(t *testing.T, b scans.Backend, r *rand.Rand, lo, hi float32, shape ...int) scans.Tensor {
	t.Helper()
	h, _ := scans.NewHost(scans.F32, shape...)
	for i := range h.Float32Data() {
		h.Float32Data()[i] = lo + (hi-lo)*r.Float32()
	}
	v, err := b.Upload(h)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
