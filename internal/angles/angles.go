// Package angles classifies the values of a Givens theta by what the GPU
// kernels' reduction of an angle by its nearest multiple of 2 pi needs:
// nothing (every angle within pi), the fast reduction (every finite angle
// below 2^18), or the exact one. The backends classify a tensor as they
// upload it and specialize their kernels to the class.
package angles

import (
	"unsafe"

	"github.com/mingru/scans"
)

// Range is the class of a tensor's values. Its values are the Vulkan
// Givens kernels' ANGLES specialization (shaders/sincos.glsl).
type Range uint32

const (
	// Reduce: every finite value is below 2^18 in magnitude (Cody and
	// Waite's reduction is exact there), or some value is Inf or NaN.
	Reduce Range = 0
	// Turn: every value lies within pi rounded to f32, whose product with
	// 1/(2 pi) in f32 rounds to at most 0.5 in magnitude: the nearest
	// multiple of 2 pi is 0, and the reduction returns the angle itself.
	Turn Range = 1
	// Any: some finite value is 2^18 or more in magnitude (it needs an
	// exact reduction, Payne and Hanek's), or the values are unknown (a
	// tensor a kernel wrote).
	Any Range = 2
)

// The magnitudes' bit patterns (sign cleared) that bound each class, per
// element type: pi rounded down to the type (f32 pi itself, 0x40490fdb,
// whose product with 1/(2 pi) in f32 rounds to 0.5 and so to the multiple
// 0; TestTurnF32 checks every f32 from 2 up to it), and 2^18 (an f16 cannot hold
// it). A larger pattern is a larger magnitude, and Inf and NaN are larger
// than any finite value.
const (
	turnF32            = 0x40490fdb
	hugeF32, infF32    = 0x48800000, 0x7f800000
	turnBF16, hugeBF16 = 0x4049, 0x4880
	infBF16            = 0x7f80
	turnF16, infF16    = 0x4248, 0x7c00 // 3.140625, Inf
)

// Of is the class of a host tensor's values. Upload calls it on every
// tensor, so it makes one pass that keeps only the largest magnitude
// (maxBits: 4 to 5 GB/s on one core of a 2-core x86 machine, against 2.8
// for a test of each value against both bounds), and a second pass, for a
// finite value of 2^18 or more, only where that is 2^18 or more, Inf or
// NaN.
func Of(h *scans.Host) Range {
	switch h.DType() {
	case scans.F32:
		f := h.Float32Data()
		u := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(f))), len(f))
		return classify(u, 1<<31, turnF32, hugeF32, infF32)
	case scans.BF16:
		return classify(h.Bits(), 1<<15, turnBF16, hugeBF16, infBF16)
	}
	// Every finite f16 value is below 2^18: no magnitude is huge and
	// finite.
	return classify(h.Bits(), 1<<15, turnF16, infF16, infF16)
}

// classify is the class of the values whose bit patterns are u, given
// their sign bit and the patterns of pi rounded down, 2^18 and Inf.
func classify[W uint16 | uint32](u []W, sign, turn, huge, inf W) Range {
	switch m := maxBits(u, sign); {
	case m <= turn:
		return Turn
	case m < huge:
		return Reduce
	}
	for _, w := range u {
		if b := w &^ sign; b >= huge && b < inf {
			return Any
		}
	}
	return Reduce
}

// maxBits is the largest of the words of u with the sign bit cleared (0
// for none), in four independent running maxima.
func maxBits[W uint16 | uint32](u []W, sign W) W {
	var m0, m1, m2, m3 W
	for ; len(u) >= 4; u = u[4:] {
		w := u[:4:4]
		m0 = max(m0, w[0]&^sign)
		m1 = max(m1, w[1]&^sign)
		m2 = max(m2, w[2]&^sign)
		m3 = max(m3, w[3]&^sign)
	}
	for _, w := range u {
		m0 = max(m0, w&^sign)
	}
	return max(m0, m1, m2, m3)
}
