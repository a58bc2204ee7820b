//go:build cgo

package vk

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/conformance/conformancetest"
)

// TestBarrierElision checks that a command buffer holds a barrier only
// between dispatches that share a buffer's bytes. queueChunk independent
// forwards, enqueued, are recorded with none; a forward and the backward
// that reads its output, with one. Both give the synchronous calls'
// results bit for bit, and the validation layer (with synchronization
// validation) reports no hazard. With the barriers left out it reports
// one, so the check can fail.
func TestBarrierElision(t *testing.T) {
	b := testBackend(t)
	rng := rand.New(rand.NewPCG(conformancetest.TestSeed(), 5))
	d := scans.Dims{B: 3, T: 37, N: 21, K: 1, V: 1}
	upload := func(hs ...*scans.Host) []scans.Tensor {
		t.Helper()
		out := make([]scans.Tensor, len(hs))
		for i, h := range hs {
			if h == nil {
				continue
			}
			var err error
			if out[i], err = b.Upload(h); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Release(out[i]) })
		}
		return out
	}
	run := func(r scans.Runner, op scans.Op, dir scans.Direction, args ...scans.Tensor) []scans.Tensor {
		t.Helper()
		res, err := r.Run(&scans.Call{Op: op, Dir: dir, Args: args})
		if err != nil {
			t.Fatalf("%s %s: %v", op, dir, err)
		}
		for _, o := range res {
			if !scans.IsNil(o) {
				t.Cleanup(func() { b.Release(o) })
			}
		}
		return res
	}
	same := func(what string, got, want scans.Tensor) {
		t.Helper()
		g, err := b.Download(got)
		if err != nil {
			t.Fatal(err)
		}
		w, err := b.Download(want)
		if err != nil {
			t.Fatal(err)
		}
		for i := range g.Len() {
			x, y := g.At(i), w.At(i)
			if math.Float32bits(x) != math.Float32bits(y) || x != x {
				t.Fatalf("%s: element %d is %v, the synchronous call gave %v", what, i, x, y)
			}
		}
	}
	queue := func() scans.Queue {
		t.Helper()
		q, err := b.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	wait := func(q scans.Queue) {
		t.Helper()
		if err := q.Wait(); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("independent", func(t *testing.T) {
		q := queue()
		var got, want []scans.Tensor
		for range queueChunk {
			in, err := bench.InputsInit(scans.OpLinearScan, d, scans.F32, bench.Typical, true, rng)
			if err != nil {
				t.Fatal(err)
			}
			args := upload(in.Args...)
			want = append(want, run(b, scans.OpLinearScan, scans.Forward, args...)[0])
			got = append(got, run(q, scans.OpLinearScan, scans.Forward, args...)[0])
		}
		wait(q)
		if n := b.dev.lastBarriers.Load(); n != 0 {
			t.Errorf("%d independent forwards were recorded with %d barriers between them, want 0", queueChunk, n)
		}
		for i := range got {
			same("forward", got[i], want[i])
		}
	})

	// A forward and the backward that reads its output.
	in, err := bench.InputsInit(scans.OpLinearScan, d, scans.F32, bench.Typical, true, rng)
	if err != nil {
		t.Fatal(err)
	}
	args := upload(in.Args...)
	g := upload(in.Grad)[0]
	pair := func(r scans.Runner) []scans.Tensor {
		h := run(r, scans.OpLinearScan, scans.Forward, args...)[0]
		return append([]scans.Tensor{h}, run(r, scans.OpLinearScan, scans.Backward, args[0], args[1], args[2], h, g)...)
	}
	t.Run("dependent", func(t *testing.T) {
		want := pair(b)
		q := queue()
		got := pair(q)
		wait(q)
		if n := b.dev.lastBarriers.Load(); n < 1 {
			t.Errorf("a forward and the backward reading its output were recorded with %d barriers, want at least 1", n)
		}
		for i := range got {
			same("forward and backward", got[i], want[i])
		}
	})

	t.Run("hazard reported", func(t *testing.T) {
		if os.Getenv("MINGRU_VK_VALIDATION") != "1" {
			t.Skip("needs the validation layer")
		}
		b.dev.skipBarriers = true
		defer func() { b.dev.skipBarriers = false }()
		q := queue()
		pair(q)
		wait(q)
		msgs := validationMessages()
		for _, m := range msgs {
			if strings.Contains(m, "SYNC-HAZARD") {
				return
			}
		}
		t.Errorf("without barriers the validation layer reported no hazard (%d messages)", len(msgs))
	})
}
