//go:build cgo

package vk

import (
	"bytes"
	"math"
	"testing"
)

// TestCopyKernel checks the copy shader behind CopyBandwidth byte for byte,
// in one piece and in several (a small bindable range forces pieces), at
// sizes that leave partial workgroups.
func TestCopyKernel(t *testing.T) {
	testBackend(t) // skips without a device
	b := New()
	b.cfg.maxRange = 64 << 10
	if st := b.Status(); !st.Available {
		t.Fatal(st.Reason)
	}
	t.Cleanup(func() { failOnValidation(t) })
	d, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	rng := seeded(t)
	for _, n := range []int64{16, 4096 + 48, 64 << 10, 200<<10 + 32} {
		src, err := d.allocRaw(n, false)
		if err != nil {
			t.Fatal(err)
		}
		dst, err := d.allocRaw(n, false)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]byte, n)
		for i := range want {
			want[i] = byte(rng.Uint32())
		}
		poison := bytes.Repeat([]byte{0xa5}, int(n))
		if err := d.write(src, want); err != nil {
			t.Fatal(err)
		}
		if err := d.write(dst, poison); err != nil {
			t.Fatal(err)
		}
		if _, err := d.copyKernel(src, dst, n, 2); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, n)
		if err := d.read(dst, got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("%d bytes: first difference at byte %d: %#x, want %#x", n, i, got[i], want[i])
					break
				}
			}
		}
		d.freeRaw(src)
		d.freeRaw(dst)
	}
	bw, err := b.CopyBandwidth(3<<20 + 4)
	if err != nil || !(bw > 0) || math.IsInf(bw, 0) {
		t.Errorf("CopyBandwidth = %v, %v; want a positive finite rate", bw, err)
	}
	t.Logf("copy shader: %.2f GB/s", bw/1e9)
}
