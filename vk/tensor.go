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
	// hugeAngles: the tensor may hold a finite value of magnitude 2^18 or
	// more, which as a Givens theta needs the kernels' exact reduction.
	// Upload finds it in the data; a tensor an operation wrote may hold
	// anything.
	hugeAngles bool
}

// DType implements scans.Tensor.
func (t *Tensor) DType() scans.DType { return t.dtype }

// Shape implements scans.Tensor.
func (t *Tensor) Shape() []int { return t.shape }

// Location implements scans.Tensor; it is always "vulkan".
func (t *Tensor) Location() string { return "vulkan" }

// hugeAngle is the least magnitude of an angle that the Givens kernels
// reduce exactly only when asked to (HUGE_ANGLE in shaders/sincos.glsl).
const hugeAngle = 1 << 18

// hasHugeAngle says whether raw, the data of a tensor of type dt as the
// kernels read it, holds a finite value of magnitude hugeAngle (2^18) or
// more: a biased exponent of 127 + 18 or more, other than all ones.
// Every finite f16 value is below it.
func hasHugeAngle(dt scans.DType, raw []byte) bool {
	const minExp, infExp = 127 + 18, 0xff
	switch dt {
	case scans.F32:
		for i := 0; i+4 <= len(raw); i += 4 {
			e := (binary.LittleEndian.Uint32(raw[i:]) >> 23) & 0xff
			if e >= minExp && e != infExp {
				return true
			}
		}
	case scans.BF16:
		for i := 0; i+2 <= len(raw); i += 2 {
			e := (binary.LittleEndian.Uint16(raw[i:]) >> 7) & 0xff
			if e >= minExp && e != infExp {
				return true
			}
		}
	}
	return false
}

// Len is the number of elements.
func (t *Tensor) Len() int { return scans.NumElements(t.shape) }

// Bytes is the size of the data in bytes (16-bit elements are packed two
// to a 32-bit word; the device buffer is rounded up to whole words).
func (t *Tensor) Bytes() int64 { return int64(t.Len()) * int64(t.dtype.Size()) }

// String describes the tensor, for example "vulkan f32(128,64,64)".
func (t *Tensor) String() string { return "vulkan " + scans.ShapeString(t.dtype, t.shape) }
