//go:build cgo

package vk

import (
	"strings"
	"testing"

	"github.com/mingru/scans/bench"
)

// TestSpecialValues: NaN, +Inf and -Inf in any input propagate as in
// eager, and touch no other batch entry (bench.TestSpecialValues).
func TestSpecialValues(t *testing.T) {
	bench.TestSpecialValues(t, testBackend(t))
}

// TestHalfValues: every f16 and bf16 bit pattern widens and narrows
// exactly (bench.TestHalfValues), on the device's own f16 widening where
// its probe found it exact, and on the software path.
func TestHalfValues(t *testing.T) {
	b := testBackend(t)
	dev, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: unpackHalf2x16 exact on every f16 value: %v", dev.name, dev.hwF16)
	t.Run("device", func(t *testing.T) { bench.TestHalfValues(t, b) })
	soft := New()
	soft.cfg.softF16 = true
	t.Run("software", func(t *testing.T) { bench.TestHalfValues(t, soft) })
	// The status says which path each backend's kernels take.
	if got, want := strings.Contains(b.Status().Notes, "unpackHalf2x16"), dev.hwF16; got != want {
		t.Errorf("status %q: names unpackHalf2x16 %v, want %v", b.Status(), got, want)
	}
	if st := soft.Status(); !strings.Contains(st.Notes, "software") {
		t.Errorf("status with the software widening: %q", st)
	}
}
