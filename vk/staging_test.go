//go:build cgo

package vk

import (
	"testing"

	"github.com/mingru/scans"
	"github.com/mingru/scans/conformance"
	"github.com/mingru/scans/eager"
)

// TestStagedTransfers runs the discrete-GPU path on any device: tensors in
// memory the host does not map, every Upload and Download through a
// staging buffer small enough that large tensors take several copies (and
// sizes that are not multiples of it, nor of 4 bytes).
func TestStagedTransfers(t *testing.T) {
	testBackend(t) // skips without a device
	b := New()
	b.cfg.noUnified = true
	b.cfg.stagingSize = 1000
	if st := b.Status(); !st.Available {
		t.Fatal(st.Reason)
	}
	t.Cleanup(func() { failOnValidation(t) })
	rng := seeded(t)
	for _, dt := range scans.DTypes {
		for _, n := range []int{1, 3, 250, 251, 777, 4099} {
			h := randomHost(rng, dt, 1, n)
			d, err := b.Upload(h)
			if err != nil {
				t.Fatal(err)
			}
			if d.(*Tensor).buf.host {
				t.Fatal("the tensor is host-visible; the staging path is not exercised")
			}
			back, err := b.Download(d)
			if err != nil {
				t.Fatal(err)
			}
			want, got := h.Float32s(), back.Float32s()
			for i := range want {
				if want[i] != got[i] {
					t.Fatalf("%v n=%d: element %d = %v after a round trip, want %v", dt, n, i, got[i], want[i])
				}
			}
			b.Release(d)
		}
	}
	ref := eager.New()
	for _, c := range smallCases([]int{65}) {
		if c.Op != scans.OpLinearScan && c.Op != scans.OpGivensScan {
			continue
		}
		if r := conformance.CheckCase(b, ref, c, rng.Uint64()); !r.Pass {
			t.Errorf("staged: %s", r.Summary())
		}
	}
}
