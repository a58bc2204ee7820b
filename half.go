package scans

import "math"

// F16FromFloat32 rounds f to the nearest IEEE binary16 value (ties to even)
// and returns its bits. Values beyond the half range become ±Inf; NaN stays
// NaN (quiet, sign kept).
func F16FromFloat32(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff

	if exp == 0xff { // Inf or NaN
		if man != 0 {
			return sign | 0x7e00 | uint16(man>>13)
		}
		return sign | 0x7c00
	}
	// Unbiased exponent, rebiased for half (bias 15).
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00 // overflow
	}
	if e <= 0 {
		// Subnormal half (or zero). The implicit bit joins the mantissa,
		// which is then shifted right by 14-e (13 for the width change,
		// 1-e for the subnormal exponent).
		if e < -10 {
			return sign // rounds to zero (below half the smallest subnormal)
		}
		m := man | 0x800000
		shift := uint32(14 - e)
		half := m >> shift
		rem := m & (1<<shift - 1)
		mid := uint32(1) << (shift - 1)
		if rem > mid || (rem == mid && half&1 == 1) {
			half++
		}
		return sign | uint16(half)
	}
	half := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && half&1 == 1) {
		half++ // may carry into the exponent, up to Inf: correct
	}
	return sign | uint16(half)
}

// F16ToFloat32 widens IEEE binary16 bits to a float32 (exact).
func F16ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0:
		if man == 0 {
			return math.Float32frombits(sign)
		}
		// Subnormal: value is man * 2^-24.
		f := float32(man) * (1.0 / (1 << 24))
		if sign != 0 {
			f = -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}

// BF16FromFloat32 rounds f to the nearest bfloat16 (ties to even) and
// returns its bits. NaN stays a quiet NaN with its sign.
func BF16FromFloat32(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep it NaN after truncation
		return uint16(b>>16) | 0x0040
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// BF16ToFloat32 widens bfloat16 bits to a float32 (exact).
func BF16ToFloat32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// RoundTo rounds f to the nearest value of type d (ties to even) and returns
// it as a float32; for F32 it returns f unchanged.
func RoundTo(d DType, f float32) float32 {
	switch d {
	case F16:
		return F16ToFloat32(F16FromFloat32(f))
	case BF16:
		return BF16ToFloat32(BF16FromFloat32(f))
	}
	return f
}
