//go:build cuda

package cuda

import (
	"fmt"
	"unsafe"

	"github.com/mingru/scans"
	"github.com/mingru/scans/internal/angles"
)

// WrapAlignment is what a wrapped device address must be a multiple of:
// the kernels load their rows in 16-byte pieces where they can.
const WrapAlignment = 16

// Wrap makes a tensor of the caller's device memory at address p, of the
// given element type and shape, without a copy and without taking
// ownership: Release ends the tensor and leaves the memory to the caller.
// p must lie in an allocation of the backend's device made in its primary
// context (cuDevicePrimaryCtxRetain: the context other CUDA libraries
// share by default), with the shape's elements within the allocation, and
// be a multiple of WrapAlignment; anything else is a *scans.ArgError
// naming it. The tensor is an argument or an output (scans.Call.Out) of
// any operation, and Download reads it.
//
// Synchronization: the backend's calls run on the default stream, which
// orders with every stream of the context made without
// CU_STREAM_NON_BLOCKING: what the caller enqueued on such a stream before
// a call runs before it, and what it enqueues after runs after. Work on a
// non-blocking stream must be synchronized by the caller.
func (b *Backend) Wrap(p uint64, dt scans.DType, shape ...int) (t *Tensor, err error) {
	defer guard("wrap", &err)
	bad := func(arg, want, got string) error {
		return &scans.ArgError{Op: "wrap", Arg: arg, Want: want, Got: got}
	}
	bytes, err := scans.WrapBytes(dt, shape)
	if err != nil {
		return nil, err
	}
	if p == 0 || p%WrapAlignment != 0 {
		return nil, bad("ptr", fmt.Sprintf("a device address, a multiple of %d", WrapAlignment), fmt.Sprintf("%#x", p))
	}
	err = b.do(func() error {
		base, size, err := memRange(p)
		if err != nil {
			return bad("ptr", "an address in device memory of this backend's context", fmt.Sprintf("%#x (%v)", p, err))
		}
		ctx, err := pointerContext(p)
		if err != nil || unsafe.Pointer(ctx) != unsafe.Pointer(b.ctx) {
			return bad("ptr", fmt.Sprintf("memory of this backend's device (ordinal %d) in its primary context", b.ordinal),
				fmt.Sprintf("%#x, of another context or device", p))
		}
		if end := base + uint64(size); p+uint64(bytes) > end {
			return bad("ptr", fmt.Sprintf("%d bytes of %s within its allocation", bytes, scans.ShapeString(dt, shape)),
				fmt.Sprintf("%#x, %d bytes before the allocation's end", p, end-p))
		}
		t = &Tensor{dtype: dt, shape: append([]int(nil), shape...), owner: b, ptr: p, bytes: bytes, angles: angles.Any, external: true}
		return nil
	})
	if err != nil {
		return nil, wrapUnavailable("wrap", err)
	}
	return t, nil
}

// Ptr returns the tensor's device address, for code that shares the
// backend's context: the synchronization of Wrap applies. It is 0 once
// the tensor is released.
func (t *Tensor) Ptr() uint64 {
	var p uint64
	t.owner.do(func() error {
		if t.live() {
			p = t.ptr
		}
		return nil
	})
	return p
}

// Context returns the backend's primary context as a CUcontext value, for
// code that makes its own calls in it; 0 before the backend is opened
// (Status opens it) or where it could not be.
func (b *Backend) Context() uintptr {
	if b.ensure() != nil {
		return 0
	}
	return uintptr(unsafe.Pointer(b.ctx))
}

// Stream is the stream the backend's synchronous calls run on: 0, the
// default stream (a Queue's Stream is its own).
func (b *Backend) Stream() uintptr { return 0 }

// Stream returns the queue's CUstream as a value, for code that orders
// its own work with the queue's.
func (q *Queue) Stream() uintptr { return uintptr(unsafe.Pointer(q.stream)) }
