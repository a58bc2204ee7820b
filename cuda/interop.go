//go:build cuda

package cuda

/*
#include <cuda.h>
*/
import "C"

import (
	"fmt"
	"slices"
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
// Synchronization: the backend's synchronous calls and transfers run on
// the default stream, which orders with every stream of the context made
// without CU_STREAM_NON_BLOCKING: what the caller enqueued on such a
// stream before a call runs before it, and what it enqueues after runs
// after. A queue's stream orders the same way. For memory that the caller
// uses on a non-blocking stream, use WrapOn.
func (b *Backend) Wrap(p uint64, dt scans.DType, shape ...int) (*Tensor, error) {
	return b.WrapOn(p, 0, dt, shape...)
}

// WrapOn is Wrap for memory that the caller uses on its own stream (a
// CUstream as a value; 0 is Wrap), blocking or not. Every call, queued
// or not, and every Download that uses the tensor runs after the work
// that the caller enqueued on that stream before the call, and the work
// the caller enqueues there after the call runs after it: the backend
// orders the two streams with events, without waiting on the host. The
// stream must belong to the backend's context (an ArgError names it
// otherwise) and outlive the tensor.
func (b *Backend) WrapOn(p uint64, stream uintptr, dt scans.DType, shape ...int) (t *Tensor, err error) {
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
	s := *(*C.CUstream)(unsafe.Pointer(&stream))
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
		if s != nil {
			if sctx, err := streamContext(s); err != nil || unsafe.Pointer(sctx) != unsafe.Pointer(b.ctx) {
				return bad("stream", fmt.Sprintf("a stream of this backend's primary context (ordinal %d)", b.ordinal),
					fmt.Sprintf("%#x, of another context or not a stream", stream))
			}
		}
		t = &Tensor{dtype: dt, shape: append([]int(nil), shape...), owner: b, ptr: p, bytes: bytes, angles: angles.Any,
			external: true, order: unsafe.Pointer(s)}
		return nil
	})
	if err != nil {
		return nil, wrapUnavailable("wrap", err)
	}
	return t, nil
}

// orderStreams lists the distinct streams that the tensors order with
// (WrapOn), other than s.
func orderStreams(s C.CUstream, sets ...[]*Tensor) []C.CUstream {
	var out []C.CUstream
	for _, ts := range sets {
		for _, t := range ts {
			if t == nil || t.order == nil || C.CUstream(t.order) == s || slices.Contains(out, C.CUstream(t.order)) {
				continue
			}
			out = append(out, C.CUstream(t.order))
		}
	}
	return out
}

// orderBefore makes the work enqueued next on s wait for the work
// enqueued so far on each of streams. It runs under do.
func (b *Backend) orderBefore(s C.CUstream, streams []C.CUstream) error {
	if len(streams) == 0 {
		return nil
	}
	if err := b.orderEvent(); err != nil {
		return err
	}
	for _, o := range streams {
		if err := eventRecord(b.orderEv, o); err != nil {
			return err
		}
		if err := streamWait(s, b.orderEv); err != nil {
			return err
		}
	}
	return nil
}

// orderAfter makes the work enqueued next on each of streams wait for
// the work enqueued so far on s. It runs under do.
func (b *Backend) orderAfter(s C.CUstream, streams []C.CUstream) error {
	if len(streams) == 0 {
		return nil
	}
	if err := b.orderEvent(); err != nil {
		return err
	}
	if err := eventRecord(b.orderEv, s); err != nil {
		return err
	}
	for _, o := range streams {
		if err := streamWait(o, b.orderEv); err != nil {
			return err
		}
	}
	return nil
}

// orderEvent makes the event that orders streams, once. A stream's wait
// captures the event's last record when the wait is enqueued, so one
// event serves every ordering made under do.
func (b *Backend) orderEvent() error {
	if b.orderEv != nil {
		return nil
	}
	e, err := eventCreateOrdering()
	if err != nil {
		return err
	}
	b.orderEv = e
	return nil
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

// Stream returns the stream the tensor orders with (WrapOn), 0 for none.
func (t *Tensor) Stream() uintptr { return uintptr(t.order) }

// Stream returns the queue's CUstream as a value, for code that orders
// its own work with the queue's.
func (q *Queue) Stream() uintptr { return uintptr(unsafe.Pointer(q.stream)) }
