//go:build cgo

package vk

import (
	"fmt"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"

	"github.com/mingru/scans/internal/pool"
)

// buffer is one device buffer with its own memory.
type buffer struct {
	buf    vk.Buffer
	mem    vk.DeviceMemory
	size   int64 // bytes of the buffer's contents now (a multiple of 4)
	guard  int64 // bytes of guard region after the contents (see guard.go)
	class  int64 // the size class it was made for (0: not pooled)
	charge int64 // bytes of device memory counted against the peak
	host   bool  // host-visible (mapped directly for transfers)
	// A caller's buffer (WrapBuffer): the contents start at offset, and
	// the backend neither pools nor frees it.
	offset   int64
	external bool
}

// Subgroup features (VkSubgroupFeatureFlagBits) and the compute stage.
// memoryType finds a memory type allowed by bits with all of want.
func (d *device) memoryType(bits uint32, want vk.MemoryPropertyFlags) (uint32, bool) {
	for i := uint32(0); i < d.memProps.MemoryTypeCount; i++ {
		if bits&(1<<i) != 0 && d.memProps.MemoryTypes[i].PropertyFlags&want == want {
			return i, true
		}
	}
	return 0, false
}

// stagingType picks host memory for staging: host-visible and coherent,
// preferably cached (fast reads for Download) and not device-local (a
// resizable-BAR window is slow to read from the host).
func (d *device) stagingType(bits uint32) (uint32, bool) {
	want := vk.MemoryPropertyFlags(vk.MemoryPropertyHostVisibleBit | vk.MemoryPropertyHostCoherentBit)
	best, bestScore := uint32(0), -1
	for i := uint32(0); i < d.memProps.MemoryTypeCount; i++ {
		f := d.memProps.MemoryTypes[i].PropertyFlags
		if bits&(1<<i) == 0 || f&want != want {
			continue
		}
		score := 0
		if f&vk.MemoryPropertyFlags(vk.MemoryPropertyHostCachedBit) != 0 {
			score += 2
		}
		if f&vk.MemoryPropertyFlags(vk.MemoryPropertyDeviceLocalBit) == 0 {
			score++
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	return best, bestScore >= 0
}

// allocRaw creates a buffer with its own memory: host-visible when host is
// true or the device has unified memory, device-local otherwise.
func (d *device) allocRaw(size int64, host bool) (*buffer, error) {
	size = (size + 3) &^ 3
	if size < 4 {
		size = 4
	}
	info := &vk.BufferCreateInfo{
		SType:       vk.StructureTypeBufferCreateInfo,
		Size:        vk.DeviceSize(size),
		Usage:       vk.BufferUsageFlags(vk.BufferUsageStorageBufferBit | vk.BufferUsageTransferSrcBit | vk.BufferUsageTransferDstBit),
		SharingMode: vk.SharingModeExclusive,
	}
	b := &buffer{size: size}
	var vb vk.Buffer
	if err := check(vk.CreateBuffer(d.dev, info, nil, &vb), fmt.Sprintf("create buffer of %d bytes", size)); err != nil {
		return nil, err
	}
	b.buf = vb
	var req vk.MemoryRequirements
	vk.GetBufferMemoryRequirements(d.dev, b.buf, &req)
	req.Deref()
	hostFlags := vk.MemoryPropertyFlags(vk.MemoryPropertyHostVisibleBit | vk.MemoryPropertyHostCoherentBit)
	var idx uint32
	var ok bool
	switch {
	case host:
		idx, ok = d.stagingType(req.MemoryTypeBits)
		b.host = true
	case d.unified:
		idx, ok = d.memoryType(req.MemoryTypeBits, hostFlags|vk.MemoryPropertyFlags(vk.MemoryPropertyDeviceLocalBit))
		b.host = ok
	}
	if !ok && !host {
		idx, ok = d.memoryType(req.MemoryTypeBits, vk.MemoryPropertyFlags(vk.MemoryPropertyDeviceLocalBit))
		b.host = false
	}
	if !ok {
		vk.DestroyBuffer(d.dev, b.buf, nil)
		return nil, fmt.Errorf("vk: no suitable memory type for a buffer of %d bytes", size)
	}
	ainfo := &vk.MemoryAllocateInfo{
		SType:           vk.StructureTypeMemoryAllocateInfo,
		AllocationSize:  req.Size,
		MemoryTypeIndex: idx,
	}
	var mem vk.DeviceMemory
	if err := check(vk.AllocateMemory(d.dev, ainfo, nil, &mem), fmt.Sprintf("allocate %d bytes", req.Size)); err != nil {
		vk.DestroyBuffer(d.dev, b.buf, nil)
		return nil, err
	}
	b.mem = mem
	if err := check(vk.BindBufferMemory(d.dev, b.buf, b.mem, 0), "bind buffer memory"); err != nil {
		vk.FreeMemory(d.dev, b.mem, nil)
		vk.DestroyBuffer(d.dev, b.buf, nil)
		return nil, err
	}
	b.charge = int64(req.Size)
	return b, nil
}

func (d *device) freeRaw(b *buffer) {
	d.bufGen.Add(1)
	vk.DestroyBuffer(d.dev, b.buf, nil)
	vk.FreeMemory(d.dev, b.mem, nil)
}

// alloc returns a device buffer of at least size bytes and counts its
// size class for PeakBytes: a cached buffer of the class when the pool
// holds one, else a new one. With guards on, the buffer has a guard
// region after its contents (see guard.go).
func (d *device) alloc(size int64) (*buffer, error) {
	size = (size + 3) &^ 3
	class := pool.Class(size)
	d.memMu.Lock()
	b, _ := d.cache.Get(class)
	d.memMu.Unlock()
	if b == nil {
		var err error
		if b, err = d.allocRaw(class+d.guardBytes(), false); err != nil {
			// The cache may hold what the device needs: free it and
			// try once more.
			if d.emptyCache() == 0 {
				return nil, err
			}
			if b, err = d.allocRaw(class+d.guardBytes(), false); err != nil {
				return nil, err
			}
		}
		b.class, b.charge = class, class
	}
	b.size = size
	if err := d.setGuard(b, size); err != nil {
		d.freeRaw(b)
		return nil, err
	}
	d.memMu.Lock()
	d.held += b.charge
	if d.held > d.peak {
		d.peak = d.held
	}
	if d.live == nil {
		d.live = map[*buffer]struct{}{}
	}
	d.live[b] = struct{}{}
	d.memMu.Unlock()
	return b, nil
}

// free returns b to the pool. The caller guarantees that no submitted
// work still uses it.
func (d *device) free(b *buffer) {
	if b == nil || b.external {
		return
	}
	d.memMu.Lock()
	d.held -= b.charge
	delete(d.live, b)
	if b.class == 0 || d.closed {
		d.memMu.Unlock()
		d.freeRaw(b)
		return
	}
	d.cache.Put(b.class, b)
	d.memMu.Unlock()
}

// freeAll frees every buffer alloc handed out and the cache, for close:
// from then on free returns buffers to the driver.
func (d *device) freeAll() {
	d.memMu.Lock()
	d.closed = true
	live := d.live
	d.live = nil
	d.memMu.Unlock()
	for b := range live {
		d.freeRaw(b)
	}
	d.emptyCache()
}

// isClosed reports whether freeAll has run.
func (d *device) isClosed() bool {
	d.memMu.Lock()
	defer d.memMu.Unlock()
	return d.closed
}

// emptyCache frees every cached buffer and returns the bytes freed.
func (d *device) emptyCache() int64 {
	d.memMu.Lock()
	n := d.cache.Bytes()
	bufs := d.cache.Drain()
	d.memMu.Unlock()
	for _, b := range bufs {
		d.freeRaw(b)
	}
	return n
}

// memory reports the bytes held by tensors and scratch, and by the cache.
func (d *device) memory() (held, cached int64) {
	d.memMu.Lock()
	defer d.memMu.Unlock()
	return d.held, d.cache.Bytes()
}

func (d *device) peakBytes() int64 {
	d.memMu.Lock()
	defer d.memMu.Unlock()
	return d.peak
}

func (d *device) resetPeak() {
	d.memMu.Lock()
	d.peak = d.held
	d.memMu.Unlock()
}

// transfer copies between a device buffer's contents and host memory,
// through the staging buffer when the device buffer is not host-visible.
func (d *device) transfer(b *buffer, data []byte, toDevice bool) error {
	if int64(len(data)) > b.size {
		return fmt.Errorf("vk: transfer of %d bytes into a buffer of %d", len(data), b.size)
	}
	return d.transferAt(b, 0, data, toDevice)
}

// transferAt copies between bytes [at, at+len(data)) of a device buffer,
// its guard region included, and host memory; at is a multiple of 4.
func (d *device) transferAt(b *buffer, at int64, data []byte, toDevice bool) error {
	if at+int64(len(data)) > b.size+b.guard {
		return fmt.Errorf("vk: transfer of %d bytes at %d into a buffer of %d", len(data), at, b.size+b.guard)
	}
	if len(data) == 0 {
		return nil
	}
	if b.host {
		var p unsafe.Pointer
		if err := check(vk.MapMemory(d.dev, b.mem, 0, vk.DeviceSize(vk.WholeSize), 0, &p), "map memory"); err != nil {
			return err
		}
		mem := unsafe.Slice((*byte)(unsafe.Add(p, at)), len(data))
		if toDevice {
			copy(mem, data)
		} else {
			copy(data, mem)
		}
		vk.UnmapMemory(d.dev, b.mem)
		return nil
	}
	d.stageMu.Lock()
	defer d.stageMu.Unlock()
	if d.staging == nil {
		s, err := d.allocRaw(int64(d.stagingSize), true)
		if err != nil {
			return fmt.Errorf("vk: staging buffer: %w", err)
		}
		var sp unsafe.Pointer
		if err := check(vk.MapMemory(d.dev, s.mem, 0, vk.DeviceSize(vk.WholeSize), 0, &sp), "map staging memory"); err != nil {
			d.freeRaw(s)
			return err
		}
		d.stagePtr = sp
		d.staging = s
	}
	c, err := d.getCtx()
	if err != nil {
		return err
	}
	defer d.putCtx(c)
	stage := unsafe.Slice((*byte)(d.stagePtr), d.stagingSize)
	for off := 0; off < len(data); off += d.stagingSize {
		n := len(data) - off
		if n > d.stagingSize {
			n = d.stagingSize
		}
		words := (n + 3) &^ 3
		if end := b.size + b.guard - at; int64(off+words) > end {
			words = int(end) - off
		}
		if toDevice {
			copy(stage, data[off:off+n])
		}
		if err := d.begin(c); err != nil {
			return err
		}
		if toDevice {
			shimCopy(d.instance, c.cmd, d.staging.buf, b.buf, 0, uint64(b.offset+at)+uint64(off), uint64(words))
		} else {
			shimCopy(d.instance, c.cmd, b.buf, d.staging.buf, uint64(b.offset+at)+uint64(off), 0, uint64(words))
		}
		if err := d.submit(c); err != nil {
			return err
		}
		if !toDevice {
			copy(data[off:off+n], stage)
		}
	}
	return nil
}

func (d *device) write(b *buffer, data []byte) error { return d.transfer(b, data, true) }

func (d *device) read(b *buffer, data []byte) error { return d.transfer(b, data, false) }
