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

// TestGivensAngles: givens_scan with angles up to 3000 in magnitude, and
// with a few up to 400000 among angles within pi, agrees with eager
// (bench.TestGivensAngles): the kernels reduce each angle by its nearest
// multiple of 2 pi before sin and cos. Larger angles, beyond
// GivensAngleLimit, are a skipped subtest.
func TestGivensAngles(t *testing.T) {
	bench.TestGivensAngles(t, testBackend(t), true, GivensAngleLimit)
}

// TestHalfValues: every f16 and bf16 bit pattern widens and narrows
// exactly (bench.TestHalfValues), on the device's own f16 conversions
// where its probes found them exact, and on the software path.
func TestHalfValues(t *testing.T) {
	b := testBackend(t)
	dev, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s", dev.name, b.Status().Notes)
	t.Run("device", func(t *testing.T) { bench.TestHalfValues(t, b) })
	soft := New()
	soft.cfg.softF16 = true
	t.Run("software", func(t *testing.T) { bench.TestHalfValues(t, soft) })
	// The status says which path each backend's kernels take.
	notes := b.Status().Notes
	widen, narrow, ok := strings.Cut(notes, "; ")
	if !ok {
		t.Fatalf("status notes %q: want the widening and the narrowing", notes)
	}
	if got, want := strings.Contains(widen, "unpackHalf2x16"), dev.hwF16&hwWiden != 0; got != want {
		t.Errorf("status %q: widening names unpackHalf2x16 %v, want %v", notes, got, want)
	}
	if got, want := strings.HasPrefix(narrow, "f16 narrowing: packHalf2x16 (round to nearest even"), dev.hwF16&hwNarrow != 0; got != want {
		t.Errorf("status %q: narrowing names packHalf2x16 %v, want %v", notes, got, want)
	}
	if dev.software && (dev.hwF16&hwNarrow != 0 || !strings.Contains(narrow, "not probed on a CPU device")) {
		t.Errorf("status %q: a CPU device narrows with the integer rounding, unprobed", notes)
	}
	st := soft.Status()
	sdev, _ := soft.device()
	if !strings.Contains(st.Notes, "widening: software") || !strings.Contains(st.Notes, "narrowing: integer rounding") || sdev.hwF16 != 0 {
		t.Errorf("status with the software conversions: %q (bits %#x)", st, sdev.hwF16)
	}
}

// TestLogRange: parallel_scan_log far outside the benchmark's inputs
// (strong decays, states far below their inputs, overflow) agrees with
// eager (bench.TestLogRange).
func TestLogRange(t *testing.T) {
	bench.TestLogRange(t, testBackend(t))
}
