package scans

import (
	"fmt"
	"reflect"
	"unsafe"
)

// Tensor is a dense row-major tensor held by some backend: host memory for
// the eager backend (*Host), device memory for a GPU backend. A backend's
// operations accept only its own tensors; package dispatch moves host
// tensors to the chosen backend and back.
type Tensor interface {
	// DType is the element type.
	DType() DType
	// Shape is the size of each dimension, outermost first. Callers must
	// not modify the returned slice.
	Shape() []int
	// Location names where the data lives: "host", or a GPU backend's name
	// ("vulkan", "cuda").
	Location() string
}

// IsNil reports whether t is absent: a nil interface or a nil pointer in a
// non-nil interface. Optional inputs (h0, H0) are absent when IsNil is true.
func IsNil(t Tensor) bool {
	if t == nil {
		return true
	}
	v := reflect.ValueOf(t)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// NumElements is the product of shape's dimensions (1 for a scalar shape).
func NumElements(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// Host is a tensor in host memory; it is the eager backend's tensor and the
// form in which data enters and leaves a GPU backend. F32 elements are held
// as float32, F16 and BF16 elements as their 16-bit patterns.
type Host struct {
	dtype DType
	shape []int
	f32   []float32
	u16   []uint16
}

// NewHost allocates a zero-filled host tensor.
func NewHost(dtype DType, shape ...int) (*Host, error) {
	if !dtype.Valid() {
		return nil, fmt.Errorf("scans: NewHost: invalid element type %v", dtype)
	}
	if err := checkDims("NewHost", shape); err != nil {
		return nil, err
	}
	h := &Host{dtype: dtype, shape: append([]int(nil), shape...)}
	n := NumElements(shape)
	if dtype == F32 {
		h.f32 = make([]float32, n)
	} else {
		h.u16 = make([]uint16, n)
	}
	return h, nil
}

// FromFloat32 makes an F32 host tensor of the given shape that holds data
// (not a copy). len(data) must equal the product of shape.
func FromFloat32(data []float32, shape ...int) (*Host, error) {
	if err := checkDims("FromFloat32", shape); err != nil {
		return nil, err
	}
	if n := NumElements(shape); len(data) != n {
		return nil, fmt.Errorf("scans: FromFloat32: data has %d elements, shape %v needs %d", len(data), shape, n)
	}
	return &Host{dtype: F32, shape: append([]int(nil), shape...), f32: data}, nil
}

// FromBits makes an F16 or BF16 host tensor that holds the 16-bit patterns
// in bits (not a copy). len(bits) must equal the product of shape.
func FromBits(dtype DType, bits []uint16, shape ...int) (*Host, error) {
	if dtype != F16 && dtype != BF16 {
		return nil, fmt.Errorf("scans: FromBits: element type %v is not a 16-bit type", dtype)
	}
	if err := checkDims("FromBits", shape); err != nil {
		return nil, err
	}
	if n := NumElements(shape); len(bits) != n {
		return nil, fmt.Errorf("scans: FromBits: bits has %d elements, shape %v needs %d", len(bits), shape, n)
	}
	return &Host{dtype: dtype, shape: append([]int(nil), shape...), u16: bits}, nil
}

// Convert returns a host tensor of type dtype whose elements are vals
// rounded to that type (nearest, ties to even).
func Convert(dtype DType, vals []float32, shape ...int) (*Host, error) {
	h, err := NewHost(dtype, shape...)
	if err != nil {
		return nil, err
	}
	if len(vals) != h.Len() {
		return nil, fmt.Errorf("scans: Convert: vals has %d elements, shape %v needs %d", len(vals), shape, h.Len())
	}
	h.SetFloat32s(vals)
	return h, nil
}

func checkDims(fn string, shape []int) error {
	for i, d := range shape {
		if d < 1 {
			return fmt.Errorf("scans: %s: dimension %d of shape %v is %d, want >= 1", fn, i, shape, d)
		}
	}
	return nil
}

// DType implements Tensor.
func (h *Host) DType() DType { return h.dtype }

// Shape implements Tensor.
func (h *Host) Shape() []int { return h.shape }

// Location implements Tensor; it is always "host".
func (h *Host) Location() string { return "host" }

// Len is the number of elements.
func (h *Host) Len() int { return NumElements(h.shape) }

// Bytes is the size of the data in bytes.
func (h *Host) Bytes() int { return h.Len() * h.dtype.Size() }

// Float32Data returns the backing slice of an F32 tensor (nil otherwise).
func (h *Host) Float32Data() []float32 { return h.f32 }

// Bits returns the backing slice of an F16 or BF16 tensor (nil otherwise).
func (h *Host) Bits() []uint16 { return h.u16 }

// At returns element i (in row-major order) widened to float32.
func (h *Host) At(i int) float32 {
	switch h.dtype {
	case F16:
		return F16ToFloat32(h.u16[i])
	case BF16:
		return BF16ToFloat32(h.u16[i])
	}
	return h.f32[i]
}

// Set stores v at element i, rounded to the tensor's type.
func (h *Host) Set(i int, v float32) {
	switch h.dtype {
	case F16:
		h.u16[i] = F16FromFloat32(v)
	case BF16:
		h.u16[i] = BF16FromFloat32(v)
	default:
		h.f32[i] = v
	}
}

// Float32s returns a new slice holding every element widened to float32.
func (h *Host) Float32s() []float32 {
	out := make([]float32, h.Len())
	h.ReadFloat32s(out)
	return out
}

// ReadFloat32s widens every element into dst, which must hold Len elements.
func (h *Host) ReadFloat32s(dst []float32) {
	switch h.dtype {
	case F32:
		copy(dst, h.f32)
	case F16:
		for i, b := range h.u16 {
			dst[i] = F16ToFloat32(b)
		}
	case BF16:
		for i, b := range h.u16 {
			dst[i] = BF16ToFloat32(b)
		}
	}
}

// SetFloat32s stores src (Len elements) rounded to the tensor's type.
func (h *Host) SetFloat32s(src []float32) {
	switch h.dtype {
	case F32:
		copy(h.f32, src)
	case F16:
		for i, v := range src {
			h.u16[i] = F16FromFloat32(v)
		}
	case BF16:
		for i, v := range src {
			h.u16[i] = BF16FromFloat32(v)
		}
	}
}

// CopyFrom copies src's elements into h, which must have src's element
// type and shape.
func (h *Host) CopyFrom(src *Host) error {
	if src == nil || src.dtype != h.dtype || !equalShape(src.shape, h.shape) {
		return fmt.Errorf("scans: CopyFrom: want %v, got %v", h, src)
	}
	copy(h.f32, src.f32)
	copy(h.u16, src.u16)
	return nil
}

// Aliases implements Aliaser: whether other is a host tensor whose
// elements share memory with h's.
func (h *Host) Aliases(other Tensor) bool {
	o, ok := other.(*Host)
	if !ok || o == nil {
		return false
	}
	return overlaps(h.f32, o.f32) || overlaps(h.u16, o.u16)
}

func overlaps[E any](a, b []E) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	var e E
	size := uintptr(unsafe.Sizeof(e))
	a0, b0 := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return a0 < b0+uintptr(len(b))*size && b0 < a0+uintptr(len(a))*size
}

// Float64s returns every element widened to float64.
func (h *Host) Float64s() []float64 {
	out := make([]float64, h.Len())
	for i := range out {
		out[i] = float64(h.At(i))
	}
	return out
}

// Clone returns a deep copy.
func (h *Host) Clone() *Host {
	c := &Host{dtype: h.dtype, shape: append([]int(nil), h.shape...)}
	if h.f32 != nil {
		c.f32 = append([]float32(nil), h.f32...)
	}
	if h.u16 != nil {
		c.u16 = append([]uint16(nil), h.u16...)
	}
	return c
}

// String describes the tensor, for example "f32(128,64,64)".
func (h *Host) String() string { return ShapeString(h.dtype, h.shape) }

// ShapeString formats a type and shape as "f32(128,64,64)".
func ShapeString(d DType, shape []int) string {
	s := d.String() + "("
	for i, n := range shape {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprint(n)
	}
	return s + ")"
}
