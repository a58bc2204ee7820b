package vk

import (
	"sync/atomic"

	"github.com/mingru/scans"
	"github.com/mingru/scans/internal/angles"
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
	// Guarded by owner.tmu: how many unfinished queue batches use the
	// tensor, whether its buffer is to be freed when they are done (a
	// Release while they were pending), and the queue that writes it.
	uses      int32
	freeLater bool
	writer    *Queue
	// angles: the class of its values, as the Givens kernels' angle
	// reduction needs it (Upload finds it in the data; a tensor an
	// operation wrote may hold anything).
	angles angles.Range
}

// DType implements scans.Tensor.
func (t *Tensor) DType() scans.DType { return t.dtype }

// Shape implements scans.Tensor.
func (t *Tensor) Shape() []int { return t.shape }

// Location implements scans.Tensor; it is always "vulkan".
func (t *Tensor) Location() string { return "vulkan" }

// Len is the number of elements.
func (t *Tensor) Len() int { return scans.NumElements(t.shape) }

// Bytes is the size of the data in bytes (16-bit elements are packed two
// to a 32-bit word; the device buffer is rounded up to whole words).
func (t *Tensor) Bytes() int64 { return int64(t.Len()) * int64(t.dtype.Size()) }

// String describes the tensor, for example "vulkan f32(128,64,64)".
func (t *Tensor) String() string { return "vulkan " + scans.ShapeString(t.dtype, t.shape) }

// Owner implements scans.Owned: the backend that holds the tensor.
func (t *Tensor) Owner() scans.Backend { return t.owner }
