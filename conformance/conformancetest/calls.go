package conformancetest

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
)

// BenchmarkCalls times what one call costs the host on b, with inputs
// already on the device: a sub-benchmark per shape (SPEC's lab shape and
// bench.StepSmall), operation and direction, each in three forms:
//
//   - sync: the synchronous call, its outputs released after it;
//   - out: the synchronous call into outputs allocated once (Call.Out);
//   - queue: calls enqueued on one queue into those outputs, with a Wait
//     after every 32.
//
// ns/op is host wall time per call. On a scans.Instrumented backend the
// sync and out forms also report kernel-ns/op, the device time of the
// call's kernels, so that the difference is what the host adds. A
// backend's test calls it in one line:
//
//	func BenchmarkCalls(b *testing.B) { conformancetest.BenchmarkCalls(b, vk.New()) }
//
// Run it with go test -run '^$' -bench Calls, and add -cpuprofile to see
// where the host's time goes.
func BenchmarkCalls(b *testing.B, be scans.Backend) {
	if st := be.Status(); !st.Available {
		b.Skipf("%s not available: %s", be.Name(), st.Reason)
	}
	rng := rand.New(rand.NewPCG(TestSeed(), 11))
	shapes := []bench.Shape{bench.Shapes[0], bench.StepSmall}
	for _, s := range shapes {
		for _, op := range []scans.Op{scans.OpLinearScan, scans.OpMatrixScan, scans.OpParallelScanLog} {
			for _, dir := range []scans.Direction{scans.Forward, scans.Backward} {
				for _, form := range []string{"sync", "out", "queue"} {
					b.Run(s.Name+"/"+string(op)+"/"+string(dir)+"/"+form, func(b *testing.B) {
						benchCall(b, be, op, dir, s, form, rng)
					})
				}
			}
		}
	}
}

// benchCall times one form of one call (see BenchmarkCalls).
func benchCall(b *testing.B, be scans.Backend, op scans.Op, dir scans.Direction, s bench.Shape, form string, rng *rand.Rand) {
	d, err := bench.NormalizeDims(op, s.Dims(op))
	if err != nil {
		b.Fatal(err)
	}
	in, err := bench.InputsInit(op, d, scans.F32, bench.Typical, false, rng)
	if err != nil {
		b.Fatal(err)
	}
	var held []scans.Tensor
	defer func() {
		for _, t := range held {
			be.Release(t)
		}
	}()
	upload := func(h *scans.Host) scans.Tensor {
		if h == nil {
			return nil
		}
		t, err := be.Upload(h)
		if err != nil {
			b.Fatal(err)
		}
		held = append(held, t)
		return t
	}
	args := make([]scans.Tensor, len(in.Args))
	for i, h := range in.Args {
		args[i] = upload(h)
	}
	if dir == scans.Backward {
		h, err := bench.Forward(be, op, args)
		if err != nil {
			b.Fatal(err)
		}
		held = append(held, h)
		args = append(args, h, upload(in.Grad))
	}
	call := func(out []scans.Tensor) *scans.Call {
		return &scans.Call{Op: op, Dir: dir, Args: args, Out: out}
	}
	// One untimed call builds what the first call of a shape builds
	// (pipelines, kernels); its outputs are those of the out and queue
	// forms.
	outs, err := be.Run(call(nil))
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range outs {
		if !scans.IsNil(t) {
			held = append(held, t)
		}
	}
	inst, _ := be.(scans.Instrumented)
	var kernels time.Duration
	switch form {
	case "sync", "out":
		for b.Loop() {
			var o []scans.Tensor
			if form == "out" {
				o = outs
			}
			res, err := be.Run(call(o))
			if err != nil {
				b.Fatal(err)
			}
			if inst != nil {
				if t, ok := inst.LastKernelTime(); ok {
					kernels += t
				}
			}
			if form == "sync" {
				for _, t := range res {
					if !scans.IsNil(t) {
						be.Release(t)
					}
				}
			}
		}
		if inst != nil {
			b.ReportMetric(float64(kernels.Nanoseconds())/float64(b.N), "kernel-ns/op")
		}
	case "queue":
		qr, ok := be.(scans.Queuer)
		if !ok {
			b.Skipf("%s has no queues", be.Name())
		}
		q, err := qr.NewQueue()
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for b.Loop() {
			if _, err := q.Run(call(outs)); err != nil {
				b.Fatal(err)
			}
			if n++; n%32 == 0 {
				if err := q.Wait(); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := q.Wait(); err != nil {
			b.Fatal(err)
		}
	}
}
