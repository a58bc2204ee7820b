//go:build cgo

package vk

import (
	"errors"
	"fmt"
	"testing"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"

	"github.com/mingru/scans"
	"github.com/mingru/scans/conformance"
	"github.com/mingru/scans/conformance/conformancetest"
)

// extBuffer is a buffer the test makes through vulkan-go, in host-visible
// memory it maps: the caller's own buffer, as a training stack has.
type extBuffer struct {
	buf  vk.Buffer
	mem  vk.DeviceMemory
	size int64
	ptr  unsafe.Pointer
}

func newExtBuffer(h Handles, size int64) (*extBuffer, error) {
	info := &vk.BufferCreateInfo{
		SType:       vk.StructureTypeBufferCreateInfo,
		Size:        vk.DeviceSize(size),
		Usage:       vk.BufferUsageFlags(vk.BufferUsageStorageBufferBit | vk.BufferUsageTransferSrcBit | vk.BufferUsageTransferDstBit),
		SharingMode: vk.SharingModeExclusive,
	}
	e := &extBuffer{size: size}
	if r := vk.CreateBuffer(h.Device, info, nil, &e.buf); r != vk.Success {
		return nil, fmt.Errorf("vkCreateBuffer: %d", r)
	}
	var req vk.MemoryRequirements
	vk.GetBufferMemoryRequirements(h.Device, e.buf, &req)
	req.Deref()
	var mp vk.PhysicalDeviceMemoryProperties
	vk.GetPhysicalDeviceMemoryProperties(h.PhysicalDevice, &mp)
	mp.Deref()
	want := vk.MemoryPropertyFlags(vk.MemoryPropertyHostVisibleBit | vk.MemoryPropertyHostCoherentBit)
	idx := -1
	for i := uint32(0); i < mp.MemoryTypeCount; i++ {
		mt := mp.MemoryTypes[i]
		mt.Deref()
		if req.MemoryTypeBits&(1<<i) != 0 && mt.PropertyFlags&want == want {
			idx = int(i)
			break
		}
	}
	if idx < 0 {
		vk.DestroyBuffer(h.Device, e.buf, nil)
		return nil, errors.New("no host-visible memory type")
	}
	ainfo := &vk.MemoryAllocateInfo{SType: vk.StructureTypeMemoryAllocateInfo, AllocationSize: req.Size, MemoryTypeIndex: uint32(idx)}
	if r := vk.AllocateMemory(h.Device, ainfo, nil, &e.mem); r != vk.Success {
		vk.DestroyBuffer(h.Device, e.buf, nil)
		return nil, fmt.Errorf("vkAllocateMemory: %d", r)
	}
	if r := vk.BindBufferMemory(h.Device, e.buf, e.mem, 0); r != vk.Success {
		e.free(h)
		return nil, fmt.Errorf("vkBindBufferMemory: %d", r)
	}
	if r := vk.MapMemory(h.Device, e.mem, 0, vk.DeviceSize(vk.WholeSize), 0, &e.ptr); r != vk.Success {
		e.free(h)
		return nil, fmt.Errorf("vkMapMemory: %d", r)
	}
	return e, nil
}

func (e *extBuffer) free(h Handles) {
	if e.ptr != nil {
		vk.UnmapMemory(h.Device, e.mem)
	}
	vk.DestroyBuffer(h.Device, e.buf, nil)
	vk.FreeMemory(h.Device, e.mem, nil)
}

// wrapping is a backend whose Upload puts the data in a buffer of the
// test's own, at an offset, and wraps it (WrapBuffer); its Release
// destroys the buffer after the tensor's release.
type wrapping struct {
	*Backend
	h    Handles
	bufs map[*Tensor]*extBuffer
}

func (w *wrapping) Upload(hst *scans.Host) (scans.Tensor, error) {
	off := w.h.OffsetAlignment * 3
	bytes := int64((hst.Bytes() + 3) &^ 3)
	e, err := newExtBuffer(w.h, off+bytes+64)
	if err != nil {
		return nil, err
	}
	copy(unsafe.Slice((*byte)(unsafe.Add(e.ptr, off)), hst.Bytes()), hostBytes(hst))
	t, err := w.WrapBuffer(e.buf, e.size, off, hst.DType(), hst.Shape()...)
	if err != nil {
		e.free(w.h)
		return nil, err
	}
	w.bufs[t] = e
	return t, nil
}

func (w *wrapping) Release(t scans.Tensor) error {
	err := w.Backend.Release(t)
	if vt, ok := t.(*Tensor); ok && w.bufs[vt] != nil {
		w.bufs[vt].free(w.h)
		delete(w.bufs, vt)
	}
	return err
}

// checkWrapped runs the execution cases on b (f32 only with -short), on
// tensors wrapped around the test's own buffers made on h.Device, at an
// offset, outputs included (given as Out), and checks that every wrapped
// tensor was released.
func checkWrapped(t *testing.T, b *Backend, h Handles) {
	t.Helper()
	w := &wrapping{Backend: b, h: h, bufs: map[*Tensor]*extBuffer{}}
	ref := conformance.ReferenceFor(b)
	into := conformance.IntoOutputs(w)
	seed := conformancetest.TestSeed()
	t.Logf("seed %d", seed)
	for _, c := range conformance.ExecCases() {
		if testing.Short() && c.DType != scans.F32 {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			if r := conformance.CheckCase(into, ref, c, seed); !r.Pass {
				t.Errorf("%s (seed %d)", r.Summary(), r.Seed)
			}
		})
	}
	if len(w.bufs) != 0 {
		t.Errorf("%d wrapped tensors were not released", len(w.bufs))
	}
}

// TestWrapBuffer runs the execution cases on tensors wrapped around the
// test's own buffers, at an offset, outputs included (given as Out), and
// checks the bad inputs WrapBuffer names.
func TestWrapBuffer(t *testing.T) {
	b := testBackend(t)
	b.poison = true
	h, err := b.Handles()
	if err != nil {
		t.Fatal(err)
	}
	checkWrapped(t, b, h)

	e, err := newExtBuffer(h, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer e.free(h)
	for _, tc := range []struct {
		arg          string
		buf          vk.Buffer
		size, offset int64
		shape        []int
	}{
		{"buf", vk.NullBuffer, 4096, 0, []int{2, 3}},
		{"offset", e.buf, 4096, 2, []int{2, 3}},
		{"offset", e.buf, 4096, -h.OffsetAlignment, []int{2, 3}},
		{"size", e.buf, 4096, 0, []int{1025}},
		{"size", e.buf, 4096, 4096 - h.OffsetAlignment, []int{int(h.OffsetAlignment/4 + 1)}},
		{"shape", e.buf, 4096, 0, []int{2, 0}},
	} {
		_, err := b.WrapBuffer(tc.buf, tc.size, tc.offset, scans.F32, tc.shape...)
		var ae *scans.ArgError
		if !errors.As(err, &ae) || ae.Arg != tc.arg {
			t.Errorf("WrapBuffer(size %d, offset %d, %v): %v, want an ArgError naming %s", tc.size, tc.offset, tc.shape, err, tc.arg)
		}
	}
	wt, err := b.WrapBuffer(e.buf, 4096, h.OffsetAlignment, scans.F16, 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	if buf, off := wt.Buffer(); buf != e.buf || off != h.OffsetAlignment {
		t.Errorf("Buffer() = %v, %d; want the wrapped buffer at %d", buf, off, h.OffsetAlignment)
	}
	if err := b.Release(wt); err != nil {
		t.Fatal(err)
	}
}
