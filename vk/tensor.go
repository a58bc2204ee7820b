package vk

import (
	"encoding/binary"
	"sync/atomic"

	"github.com/mingru/scans"
)

// Tensor is a tensor in Vulkan device memory, made by Backend.Upload or
// returned by an operation. It implements scans.Tensor. Its data is reached
// only through Download; Release frees the device memory.
type Tensor struct {
	dtype    scans.DType
	shape    []int
	buf      *buffer
	owner    *Backend
	released atomic.Bool
	// angles: the range of its values, as the Givens kernels' angle
	// reduction needs it (Upload finds it in the data; a tensor an
	// operation wrote may hold anything).
	angles angleRange
}

// DType implements scans.Tensor.
func (t *Tensor) DType() scans.DType { return t.dtype }

// Shape implements scans.Tensor.
func (t *Tensor) Shape() []int { return t.shape }

// Location implements scans.Tensor; it is always "vulkan".
func (t *Tensor) Location() string { return "vulkan" }

// angleRange is what a tensor's values need of the Givens kernels'
// reduction of angles by their nearest multiple of 2 pi (the ANGLES
// specialization of shaders/sincos.glsl, whose values these are).
type angleRange uint32

const (
	// anglesReduce: every finite value is below 2^18 in magnitude
	// (Cody and Waite's reduction is exact), or some value is Inf or NaN.
	anglesReduce angleRange = 0
	// anglesTurn: every value lies within pi rounded to f32, whose
	// nearest multiple of 2 pi is 0: no reduction.
	anglesTurn angleRange = 1
	// anglesAny: some finite value is 2^18 or more in magnitude (Payne
	// and Hanek's reduction), or the values are unknown.
	anglesAny angleRange = 2
)

// The magnitudes' bit patterns (sign cleared) that bound each range, per
// element type: pi rounded down to it (f32 pi itself, 0x40490fdb, whose
// product with 1/(2 pi) in f32 rounds to 0.5 and so to the multiple 0),
// and 2^18 (an f16 cannot hold it). A larger pattern is a larger
// magnitude, and Inf and NaN are larger than any finite one.
const (
	turnF32, hugeF32   = 0x40490fdb, 0x48800000
	turnBF16, hugeBF16 = 0x4049, 0x4880
	turnF16            = 0x4248 // 3.140625
	infF32, infBF16    = 0x7f800000, 0x7f80
)

// angleRangeOf is the range of raw, the data of a tensor of type dt as the
// kernels read it (little-endian).
func angleRangeOf(dt scans.DType, raw []byte) angleRange {
	turn, reduce := true, true // every value within pi; every finite value below 2^18
	switch dt {
	case scans.F32:
		for i := 0; i+4 <= len(raw); i += 4 {
			m := binary.LittleEndian.Uint32(raw[i:]) &^ (1 << 31)
			turn = turn && m <= turnF32
			reduce = reduce && (m < hugeF32 || m >= infF32)
		}
	case scans.BF16:
		for i := 0; i+2 <= len(raw); i += 2 {
			m := binary.LittleEndian.Uint16(raw[i:]) &^ (1 << 15)
			turn = turn && m <= turnBF16
			reduce = reduce && (m < hugeBF16 || m >= infBF16)
		}
	case scans.F16:
		for i := 0; i+2 <= len(raw); i += 2 {
			turn = turn && binary.LittleEndian.Uint16(raw[i:])&^(1<<15) <= turnF16
		}
	}
	switch {
	case turn:
		return anglesTurn
	case reduce:
		return anglesReduce
	}
	return anglesAny
}

// Len is the number of elements.
func (t *Tensor) Len() int { return scans.NumElements(t.shape) }

// Bytes is the size of the data in bytes (16-bit elements are packed two
// to a 32-bit word; the device buffer is rounded up to whole words).
func (t *Tensor) Bytes() int64 { return int64(t.Len()) * int64(t.dtype.Size()) }

// String describes the tensor, for example "vulkan f32(128,64,64)".
func (t *Tensor) String() string { return "vulkan " + scans.ShapeString(t.dtype, t.shape) }
