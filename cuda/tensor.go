package cuda

import (
	"unsafe"

	"github.com/mingru/scans"
	"github.com/mingru/scans/internal/angles"
)

// Tensor is a tensor in the GPU's memory, made by Backend.Upload or
// returned by an operation. Its data is read back with Backend.Download and
// freed with Backend.Release.
type Tensor struct {
	dtype scans.DType
	shape []int
	owner *Backend
	ptr   uint64 // device address; 0 once released (guarded by owner.devMu)
	bytes int64
	// Guarded by owner.devMu: how many unfinished queue batches use the
	// tensor, and whether a Release came while they were pending (their
	// queue frees it when done).
	uses      int32
	freeLater bool
	// external: the caller's memory (Wrap), which Release does not free.
	external bool
	// order: the caller's CUstream that calls using the tensor order
	// with (WrapOn); nil for none.
	order unsafe.Pointer
	// angles: the class of its values, as the Givens kernels' choice
	// needs it (Upload finds it in the data; a tensor an operation wrote
	// may hold anything).
	angles angles.Range
}

// DType implements scans.Tensor.
func (t *Tensor) DType() scans.DType { return t.dtype }

// Shape implements scans.Tensor.
func (t *Tensor) Shape() []int { return t.shape }

// Location implements scans.Tensor; it is always "cuda".
func (t *Tensor) Location() string { return "cuda" }

// Len is the number of elements.
func (t *Tensor) Len() int { return scans.NumElements(t.shape) }

// Bytes is the size of the tensor's device allocation in bytes.
func (t *Tensor) Bytes() int64 { return t.bytes }

// String describes the tensor, for example "cuda f32(128,64,64)".
func (t *Tensor) String() string { return "cuda " + scans.ShapeString(t.dtype, t.shape) }

// live reports whether the tensor has not been released. It runs under
// its owner's do.
func (t *Tensor) live() bool { return t.ptr != 0 && !t.freeLater }

// Owner implements scans.Owned: the backend that holds the tensor.
func (t *Tensor) Owner() scans.Backend { return t.owner }
