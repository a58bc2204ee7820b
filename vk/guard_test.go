//go:build cgo

package vk

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/conformance/conformancetest"
)

// TestGuardCatchesOverrun: with guards on, a dispatch that writes 16 bytes
// past a buffer's contents is reported by the guard check, and one that
// stays inside is not.
func TestGuardCatchesOverrun(t *testing.T) {
	b := New()
	b.cfg.guard = true
	if st := b.Status(); !st.Available {
		t.Skipf("no Vulkan device: %s", st.Reason)
	}
	validationMessages()
	t.Cleanup(func() { failOnValidation(t) })
	d, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	const size = 256
	src, err := d.alloc(size + 64)
	if err != nil {
		t.Fatal(err)
	}
	defer d.free(src)
	for _, over := range []int64{0, 16} {
		dst, err := d.alloc(size)
		if err != nil {
			t.Fatal(err)
		}
		if dst.guard != guardSize || dst.size != size {
			t.Fatalf("guarded buffer: size %d guard %d", dst.size, dst.guard)
		}
		var spec [numSpec]uint32
		spec[specWG] = 64
		p, err := d.pipeline("copy", spec)
		if err != nil {
			t.Fatal(err)
		}
		c, err := d.getCtx()
		if err != nil {
			t.Fatal(err)
		}
		// The destination is bound with its guard, as a kernel that
		// computed its range wrongly would reach it.
		n := size + over
		if err := d.beginBound(c, p, bufferBinding{buf: src.buf, rng: uint64(src.size)},
			bufferBinding{buf: dst.buf, rng: uint64(dst.size + dst.guard)}); err != nil {
			t.Fatal(err)
		}
		push := new([4 + maxBindings]uint32)
		push[0] = uint32(n / 16)
		vk.CmdPushConstants(c.cmd, d.layout, vk.ShaderStageFlags(vk.ShaderStageComputeBit), 0, pushBytes, unsafe.Pointer(&push[0]))
		vk.CmdDispatch(c.cmd, 1, 1, 1)
		if err := d.submit(c); err != nil {
			t.Fatal(err)
		}
		d.putCtx(c)
		err = d.checkGuard(dst)
		switch {
		case over == 0 && err != nil:
			t.Errorf("a copy within the buffer: %v", err)
		case over > 0 && (err == nil || !strings.Contains(err.Error(), "past the end")):
			t.Errorf("a copy %d bytes past the end: guard check says %v", over, err)
		}
		d.free(dst)
	}
}

// TestQueueErrorNamesOp checks that a queued operation that fails is
// reported by the queue's Wait as a *scans.QueueError naming it: the
// guard region after its output is overwritten between Run and Wait, as
// a kernel writing past the end would.
func TestQueueErrorNamesOp(t *testing.T) {
	b := New()
	b.cfg.guard = true
	if st := b.Status(); !st.Available {
		t.Skipf("no Vulkan device: %s", st.Reason)
	}
	defer b.Close()
	validationMessages()
	t.Cleanup(func() { failOnValidation(t) })
	rng := rand.New(rand.NewPCG(conformancetest.TestSeed(), 9))
	in, err := bench.InputsInit(scans.OpLinearScan, scans.Dims{B: 2, T: 9, N: 5, K: 1, V: 1}, scans.F32, bench.Typical, false, rng)
	if err != nil {
		t.Fatal(err)
	}
	args := make([]scans.Tensor, len(in.Args))
	for i, h := range in.Args {
		if h != nil {
			if args[i], err = b.Upload(h); err != nil {
				t.Fatal(err)
			}
		}
	}
	q, err := b.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	res, err := q.Run(&scans.Call{Op: scans.OpLinearScan, Dir: scans.Forward, Args: args})
	if err != nil {
		t.Fatal(err)
	}
	buf := res[0].(*Tensor).buf
	if err := b.dev.transferAt(buf, buf.size, make([]byte, 4), true); err != nil {
		t.Fatal(err)
	}
	err = q.Wait()
	var qe *scans.QueueError
	if !errors.As(err, &qe) || !slices.Contains(qe.Ops, "linear_scan forward") || !strings.Contains(err.Error(), "past the end") {
		t.Fatalf("Wait after an overrun: %v, want a *scans.QueueError naming linear_scan forward", err)
	}
	if err := q.Wait(); err != nil {
		t.Errorf("a second Wait: %v, want nil (the error was reported)", err)
	}
}
