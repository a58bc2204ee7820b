package vk_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mingru/scans"
	"github.com/mingru/scans/dispatch"
	"github.com/mingru/scans/eager"
	"github.com/mingru/scans/vk"
)

// Devices lists the devices; two backends in one process each hold their
// own tensors; dispatch runs each call on the instance that holds its
// tensors, names a tensor of the other, and Copy moves a tensor between
// them; a device that does not exist is reported by Status.
func TestTwoBackends(t *testing.T) {
	first := vk.NewOn("0")
	if st := first.Status(); !st.Available {
		t.Skipf("no Vulkan device: %s", st.Reason)
	}
	defer first.Close()
	list, err := first.Devices()
	if err != nil || len(list) == 0 {
		t.Fatalf("Devices: %v, %v", list, err)
	}
	for i, d := range list {
		if d.Backend != "vulkan" || d.Index != i || d.Name == "" {
			t.Errorf("device %d: %+v", i, d)
		}
	}
	if got, want := first.Status().Device, list[0].Name; got != want {
		t.Errorf("NewOn(\"0\") runs on %q, want device 0, %q", got, want)
	}
	second := vk.NewOn(list[len(list)-1].Name)
	defer second.Close()
	if st := second.Status(); !st.Available {
		t.Fatalf("second backend: %s", st.Reason)
	}
	missing := vk.NewOn("99")
	if st := missing.Status(); st.Available || !strings.Contains(st.Reason, "out of range") {
		t.Errorf("NewOn(\"99\"): %v, want unavailable, out of range", st)
	}

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
	up := func(b *vk.Backend, h *scans.Host) scans.Tensor {
		d, err := b.Upload(h)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	a1, x1 := up(first, a), up(first, x)
	h1, err := s.LinearScan(a1, x1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o := h1.(scans.Owned).Owner(); o != first {
		t.Errorf("the result of a call on the first backend's tensors is held by %v", o)
	}
	a2, err := dispatch.Copy(a1, second)
	if err != nil {
		t.Fatal(err)
	}
	x2 := up(second, x)
	h2, err := s.LinearScan(a2, x2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o := h2.(scans.Owned).Owner(); o != second {
		t.Errorf("the result of a call on the second backend's tensors is held by %v", o)
	}
	g1, _ := first.Download(h1)
	g2, _ := second.Download(h2)
	want, _ := eager.New().LinearScan(a, x, nil)
	for i, w := range want.(*scans.Host).Float32Data() {
		if g1.At(i) != g2.At(i) {
			t.Fatalf("element %d: %v on the first backend, %v on the second", i, g1.At(i), g2.At(i))
		}
		if d := math.Abs(float64(g1.At(i) - w)); !(d <= 1e-5*(1+math.Abs(float64(w)))) {
			t.Fatalf("element %d: %v, want %v", i, g1.At(i), w)
		}
	}
	_, err = s.LinearScan(a1, x2, nil)
	var ae *scans.ArgError
	if !errors.As(err, &ae) || ae.Arg != "b" {
		t.Errorf("a tensor of the other backend as b: %v, want an ArgError naming b", err)
	}
	q, _ := s.NewQueue()
	res, err := q.Run(&scans.Call{Op: scans.OpLinearScan, Dir: scans.Forward, Args: []scans.Tensor{a2, x2, nil}})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Wait(); err != nil {
		t.Fatal(err)
	}
	if o := res[0].(scans.Owned).Owner(); o != second {
		t.Errorf("a queued call on the second backend's tensors ran on %v", o)
	}
	g3, _ := second.Download(res[0])
	for i := range g3.Len() {
		if g3.At(i) != g2.At(i) {
			t.Fatalf("element %d: %v queued, %v synchronous", i, g3.At(i), g2.At(i))
		}
	}
}
