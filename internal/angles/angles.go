// Package angles classifies the values of a Givens theta by what the GPU
// kernels' reduction of an angle by its nearest multiple of 2 pi needs:
// nothing (every angle within pi), the fast reduction (every finite angle
// below 2^18), or the exact one. The backends classify a tensor as they
// upload it and specialize their kernels to the class.
package angles

import (
	"math"

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
// 0; TestTurnF32 checks every f32 up to it), and 2^18 (an f16 cannot hold
// it). A larger pattern is a larger magnitude, and Inf and NaN are larger
// than any finite value.
const (
	TurnF32            = 0x40490fdb
	hugeF32, infF32    = 0x48800000, 0x7f800000
	turnBF16, hugeBF16 = 0x4049, 0x4880
	infBF16            = 0x7f80
	turnF16            = 0x4248 // 3.140625
)

// Of is the class of a host tensor's values.
func Of(h *scans.Host) Range {
	turn, reduce := true, true // every value within pi; every finite value below 2^18
	switch h.DType() {
	case scans.F32:
		for _, v := range h.Float32Data() {
			m := math.Float32bits(v) &^ (1 << 31)
			turn = turn && m <= TurnF32
			reduce = reduce && (m < hugeF32 || m >= infF32)
		}
	case scans.BF16:
		for _, w := range h.Bits() {
			m := w &^ (1 << 15)
			turn = turn && m <= turnBF16
			reduce = reduce && (m < hugeBF16 || m >= infBF16)
		}
	case scans.F16:
		for _, w := range h.Bits() {
			turn = turn && w&^(1<<15) <= turnF16
		}
	}
	switch {
	case turn:
		return Turn
	case reduce:
		return Reduce
	}
	return Any
}
