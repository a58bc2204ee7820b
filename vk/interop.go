//go:build cgo

package vk

import (
	"fmt"

	vk "github.com/vulkan-go/vulkan"

	"github.com/mingru/scans"
	"github.com/mingru/scans/internal/angles"
)

// Handles are the Vulkan objects a backend runs on, for code that shares
// its device: buffers made on Device can be wrapped as tensors
// (WrapBuffer).
type Handles struct {
	Instance       vk.Instance
	PhysicalDevice vk.PhysicalDevice
	Device         vk.Device
	Queue          vk.Queue
	QueueFamily    uint32
	// OffsetAlignment is what WrapBuffer's offsets are multiples of: the
	// device's minStorageBufferOffsetAlignment, and at least 4.
	OffsetAlignment int64
}

// Handles opens the device if need be and returns its objects. They
// belong to the backend: the caller must not destroy them, and they are
// invalid after Close.
func (b *Backend) Handles() (Handles, error) {
	leave, err := b.life.Enter()
	if err != nil {
		return Handles{}, fmt.Errorf("vk: Handles: %w", err)
	}
	defer leave()
	d, err := b.device()
	if err != nil {
		return Handles{}, b.unavailable()
	}
	return Handles{Instance: d.instance, PhysicalDevice: d.phys, Device: d.dev, Queue: d.queue, QueueFamily: d.qfam,
		OffsetAlignment: d.align}, nil
}

// WrapBuffer makes a tensor of the given element type and shape whose
// elements are the caller's buffer from offset on, without a copy. buf
// must have been made on the backend's Device (Handles) with the usages
// STORAGE_BUFFER, TRANSFER_SRC and TRANSFER_DST and be bound to memory;
// size is its size in bytes. The elements take the shape's count times the
// type's size, rounded up to a multiple of 4 bytes, and must lie within
// size; offset is a multiple of Handles().OffsetAlignment. The tensor is
// an argument or an output (scans.Call.Out) of any operation, and
// Download reads it. Release ends the tensor and leaves the buffer to the
// caller.
//
// Synchronization: the backend waits for nothing the caller submitted.
// Before passing the tensor to a call, the caller's own work on the
// buffer must have finished (a fence or vkQueueWaitIdle); while a call
// runs, or a queue holds work that uses the tensor (until its Wait
// returns), the caller must not use the buffer. A synchronous call has
// finished with it when it returns.
func (b *Backend) WrapBuffer(buf vk.Buffer, size, offset int64, dt scans.DType, shape ...int) (t *Tensor, err error) {
	defer recoverTo("wrap", &err)
	leave, err := b.life.Enter()
	if err != nil {
		return nil, fmt.Errorf("vk: WrapBuffer: %w", err)
	}
	defer leave()
	d, err := b.device()
	if err != nil {
		return nil, b.unavailable()
	}
	bad := func(arg, want, got string) error {
		return &scans.ArgError{Op: "wrap", Arg: arg, Want: want, Got: got}
	}
	if buf == vk.NullBuffer {
		return nil, bad("buf", "a VkBuffer", "VK_NULL_HANDLE")
	}
	bytes, err := scans.WrapBytes(dt, shape)
	if err != nil {
		return nil, err
	}
	bytes = (bytes + 3) &^ 3
	if offset < 0 || offset%d.align != 0 {
		return nil, bad("offset", fmt.Sprintf("a multiple of %d (the device's offset alignment)", d.align), fmt.Sprint(offset))
	}
	if size < offset+bytes {
		return nil, bad("size", fmt.Sprintf("at least %d bytes (offset %d + %d bytes of %s)", offset+bytes, offset, bytes, scans.ShapeString(dt, shape)),
			fmt.Sprintf("%d bytes", size))
	}
	d.bufGen.Add(1) // the handle may be one a held recording bound before
	return &Tensor{dtype: dt, shape: append([]int(nil), shape...), owner: b, angles: angles.Any,
		buf: &buffer{buf: buf, size: bytes, offset: offset, external: true}}, nil
}

// Buffer returns the tensor's buffer and the offset of its elements
// there, for code that shares the backend's device. The synchronization
// of WrapBuffer applies. Both are invalid once the tensor is released.
func (t *Tensor) Buffer() (vk.Buffer, int64) {
	if t.buf == nil {
		return vk.NullBuffer, 0
	}
	return t.buf.buf, t.buf.offset
}
