//go:build cuda

package cuda

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/mingru/scans"
	"github.com/mingru/scans/eager"

	"github.com/mingru/scans/conformance/conformancetest"
)

// TestExecution runs the execution paths (caller-given outputs, a
// queue's stream, goroutines with queues of their own, and 100,000 calls,
// 500 with -short, whose device memory stays flat) with outputs poisoned
// before every kernel.
func TestExecution(t *testing.T) {
	calls := 100000
	if testing.Short() {
		calls = 500
	}
	conformancetest.TestExecution(t, gpu(t), calls)
}

// TestClose checks Close with work in flight and every call after it.
func TestClose(t *testing.T) {
	conformancetest.TestClose(t, gpu(t))
}

// TestDevices lists the devices and checks that a backend on an ordinal
// with no device says so.
func TestDevices(t *testing.T) {
	b := gpu(t)
	list, err := b.Devices()
	if err != nil || len(list) == 0 {
		t.Fatalf("Devices: %v, %v", list, err)
	}
	for i, d := range list {
		if d.Backend != "cuda" || d.Index != i || d.Name == "" || d.Memory <= 0 {
			t.Errorf("device %d: %+v", i, d)
		}
	}
	if got := b.Status().Device; got != list[0].Name {
		t.Errorf("the default backend runs on %q, want ordinal 0, %q", got, list[0].Name)
	}
	missing := NewOn(len(list))
	if st := missing.Status(); st.Available || !strings.Contains(st.Reason, "ordinal") {
		t.Errorf("NewOn(%d): %v, want unavailable naming the ordinal", len(list), st)
	}
}

// TestWrap runs linear_scan on memory the test allocated itself in the
// primary context, input and output wrapped (Wrap), and checks that Wrap
// names a misaligned address, one outside any allocation and an
// allocation too small, and that Release leaves the memory to its owner.
func TestWrap(t *testing.T) {
	b := gpu(t)
	const B, T, D = 2, 33, 7
	n := int64(B * T * D * 4)
	var bufs [3]uint64
	if err := b.do(func() error {
		for i := range bufs {
			p, err := memAlloc(n + 64)
			if err != nil {
				return err
			}
			bufs[i] = p
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	defer b.do(func() error {
		for _, p := range bufs {
			if err := memFree(p); err != nil {
				return err
			}
		}
		return nil
	})
	r := rand.New(rand.NewPCG(rand.Uint64(), 9))
	a, _ := scans.NewHost(scans.F32, B, T, D)
	x, _ := scans.NewHost(scans.F32, B, T, D)
	for i := range a.Len() {
		a.Set(i, 0.5+0.4*float32(r.Float64()))
		x.Set(i, float32(r.NormFloat64()))
	}
	if err := b.do(func() error {
		if err := memcpyHtoD(bufs[0], hostData(a), n); err != nil {
			return err
		}
		return memcpyHtoD(bufs[1], hostData(x), n)
	}); err != nil {
		t.Fatal(err)
	}
	wrap := func(p uint64) *Tensor {
		w, err := b.Wrap(p, scans.F32, B, T, D)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	wa, wx, wh := wrap(bufs[0]), wrap(bufs[1]), wrap(bufs[2])
	if wa.Ptr() != bufs[0] {
		t.Errorf("Ptr() = %#x, want %#x", wa.Ptr(), bufs[0])
	}
	res, err := b.Run(&scans.Call{Op: scans.OpLinearScan, Dir: scans.Forward, Args: []scans.Tensor{wa, wx, nil}, Out: []scans.Tensor{wh}})
	if err != nil {
		t.Fatal(err)
	}
	if res[0] != scans.Tensor(wh) {
		t.Error("the result is not the wrapped output")
	}
	got, err := b.Download(wh)
	if err != nil {
		t.Fatal(err)
	}
	checkLinear(t, got, a, x, "")
	releaseAll(t, b, wa, wx, wh)
	for _, tc := range []struct {
		what  string
		p     uint64
		shape []int
	}{
		{"a misaligned address", bufs[0] + 4, []int{4}},
		{"an allocation too small", bufs[0], []int{int(n), 2}},
		{"an address in no allocation", bufs[0] + 1<<40, []int{4}},
	} {
		_, err := b.Wrap(tc.p, scans.F32, tc.shape...)
		var ae *scans.ArgError
		if !errors.As(err, &ae) || ae.Arg != "ptr" {
			t.Errorf("Wrap of %s: %v, want an ArgError naming ptr", tc.what, err)
		}
	}
}

// checkLinear checks got against eager's linear_scan of a and x (no h0),
// element by element; why ends the failure's message.
func checkLinear(t *testing.T, got, a, x *scans.Host, why string) {
	t.Helper()
	want, _ := eager.New().LinearScan(a, x, nil)
	for i, w := range want.(*scans.Host).Float32Data() {
		if d := float64(got.At(i) - w); !(d <= 1e-5*(1+float64(abs32(w))) && d >= -1e-5*(1+float64(abs32(w)))) {
			t.Fatalf("element %d: %v, want %v%s", i, got.At(i), w, why)
		}
	}
}

// releaseAll releases the tensors.
func releaseAll(t *testing.T, b *Backend, ts ...*Tensor) {
	t.Helper()
	for _, w := range ts {
		if err := b.Release(w); err != nil {
			t.Fatal(err)
		}
	}
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}

// TestWrapOn wraps memory the test uses on a non-blocking stream of its
// own, which does not order with the default stream: the input is
// written on that stream behind a long queue of other work, and
// overwritten with NaN on it right after the call. The result must be the
// scan of the first values: the call waited for the stream's work before
// it, and the stream's later work waited for the call.
func TestWrapOn(t *testing.T) {
	b := gpu(t)
	const B, T, D = 4, 65, 33
	n := int64(B * T * D)
	const bigWords = 16 << 20 // 64 MiB the stream fills first, several times
	var a, x, h, big uint64
	s, err := func() (s streamHandle, err error) {
		err = b.do(func() error {
			for _, p := range []*uint64{&a, &x, &h} {
				if *p, err = memAlloc(4 * n); err != nil {
					return err
				}
			}
			if big, err = memAlloc(4 * bigWords); err != nil {
				return err
			}
			if err := memsetD32(a, 0x7fc00000, n); err != nil { // NaN until the stream writes it
				return err
			}
			s, err = streamCreateNonBlocking()
			return err
		})
		return s, err
	}()
	if err != nil {
		t.Fatal(err)
	}
	defer b.do(func() error {
		streamDestroy(s)
		for _, p := range []uint64{a, x, h, big} {
			memFree(p)
		}
		return nil
	})
	r := rand.New(rand.NewPCG(rand.Uint64(), 11))
	xs, _ := scans.NewHost(scans.F32, B, T, D)
	as, _ := scans.NewHost(scans.F32, B, T, D)
	av := 0.5 + 0.4*float32(r.Float64())
	for i := range xs.Len() {
		xs.Set(i, float32(r.NormFloat64()))
		as.Set(i, av)
	}
	if err := b.do(func() error {
		if err := memcpyHtoD(x, hostData(xs), 4*n); err != nil {
			return err
		}
		for range 8 {
			if err := memsetD32Async(big, 0, bigWords, s); err != nil {
				return err
			}
		}
		return memsetD32Async(a, math.Float32bits(av), n, s)
	}); err != nil {
		t.Fatal(err)
	}
	stream := uintptr(unsafe.Pointer(s))
	wa, err := b.WrapOn(a, stream, scans.F32, B, T, D)
	if err != nil {
		t.Fatal(err)
	}
	if wa.Stream() != stream {
		t.Errorf("Stream() = %#x, want %#x", wa.Stream(), stream)
	}
	wx, _ := b.Wrap(x, scans.F32, B, T, D)
	wh, _ := b.WrapOn(h, stream, scans.F32, B, T, D)
	if _, err := b.Run(&scans.Call{Op: scans.OpLinearScan, Dir: scans.Forward, Args: []scans.Tensor{wa, wx, nil}, Out: []scans.Tensor{wh}}); err != nil {
		t.Fatal(err)
	}
	if err := b.do(func() error { return memsetD32Async(a, 0x7fc00000, n, s) }); err != nil {
		t.Fatal(err)
	}
	got, err := b.Download(wh)
	if err != nil {
		t.Fatal(err)
	}
	checkLinear(t, got, as, xs, ": the call did not order with the stream")
	releaseAll(t, b, wa, wx, wh)
}
