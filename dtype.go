package scans

import "fmt"

// DType is the element type of a tensor.
type DType uint8

// The element types every backend serves.
const (
	F32  DType = iota // IEEE 754 binary32
	F16               // IEEE 754 binary16 (half)
	BF16              // bfloat16: the top 16 bits of a binary32
)

// DTypes lists every element type, in a fixed order.
var DTypes = []DType{F32, F16, BF16}

// String returns "f32", "f16" or "bf16".
func (d DType) String() string {
	switch d {
	case F32:
		return "f32"
	case F16:
		return "f16"
	case BF16:
		return "bf16"
	}
	return fmt.Sprintf("DType(%d)", uint8(d))
}

// Size is the number of bytes one element occupies.
func (d DType) Size() int {
	if d == F32 {
		return 4
	}
	return 2
}

// Epsilon is the type's machine epsilon: the distance from 1 to the next
// representable number (2^-23, 2^-10, 2^-7).
func (d DType) Epsilon() float64 {
	switch d {
	case F16:
		return 1.0 / 1024
	case BF16:
		return 1.0 / 128
	}
	return 1.0 / (1 << 23)
}

// Valid reports whether d is one of F32, F16, BF16.
func (d DType) Valid() bool { return d <= BF16 }

// ParseDType turns "f32", "f16" or "bf16" into a DType.
func ParseDType(s string) (DType, error) {
	for _, d := range DTypes {
		if d.String() == s {
			return d, nil
		}
	}
	return 0, fmt.Errorf("scans: unknown element type %q (want f32, f16 or bf16)", s)
}
