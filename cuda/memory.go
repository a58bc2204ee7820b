//go:build cuda

package cuda

import (
	"fmt"

	"github.com/mingru/scans"
	"github.com/mingru/scans/internal/angles"
	"github.com/mingru/scans/internal/pool"
)

// alloc returns device memory of at least n bytes, from the cache when
// it holds an allocation of n's size class, and counts the class for
// PeakBytes. It runs under do.
func (b *Backend) alloc(n int64) (uint64, error) {
	class := pool.Class(n)
	p, ok := b.cache.Get(class)
	if !ok {
		var err error
		if p, err = memAlloc(class); err != nil {
			// What the cache holds may be what the device lacks.
			if b.emptyCache() == 0 {
				return 0, fmt.Errorf("allocate %d bytes: %w", class, err)
			}
			if p, err = memAlloc(class); err != nil {
				return 0, fmt.Errorf("allocate %d bytes: %w", class, err)
			}
		}
	}
	b.live[p] = class
	b.mu.Lock()
	b.held += class
	if b.held > b.peak {
		b.peak = b.held
	}
	b.mu.Unlock()
	return p, nil
}

// free returns device memory to the cache. It runs under do, and only
// once no enqueued work uses the memory.
func (b *Backend) free(p uint64) error {
	class, ok := b.live[p]
	if !ok {
		return fmt.Errorf("free of %#x, which this backend did not allocate", p)
	}
	delete(b.live, p)
	b.cache.Put(class, p)
	b.mu.Lock()
	b.held -= class
	b.mu.Unlock()
	return nil
}

// emptyCache returns the cached allocations to the driver and the bytes
// freed. It runs under do.
func (b *Backend) emptyCache() int64 {
	n := b.cache.Bytes()
	for _, p := range b.cache.Drain() {
		memFree(p)
	}
	return n
}

// newTensor allocates a device tensor. It runs under do.
func (b *Backend) newTensor(dt scans.DType, shape []int) (*Tensor, error) {
	n := int64(scans.NumElements(shape)) * int64(dt.Size())
	p, err := b.alloc(n)
	if err != nil {
		return nil, err
	}
	return &Tensor{dtype: dt, shape: append([]int(nil), shape...), owner: b, ptr: p, bytes: n, angles: angles.Any}, nil
}

// fillNaN writes NaN into every element of t. It runs on the device
// goroutine.
func fillNaN(t *Tensor) error {
	n := int64(t.Len())
	switch t.dtype {
	case scans.F16:
		return memsetD16(t.ptr, 0x7e00, n)
	case scans.BF16:
		return memsetD16(t.ptr, 0x7fc0, n)
	}
	return memsetD32(t.ptr, 0x7fc00000, n)
}

// Upload copies a host tensor into a new device tensor, and notes the
// class of its values (as a Givens theta: see withTheta).
func (b *Backend) Upload(h *scans.Host) (t scans.Tensor, err error) {
	defer guard("upload", &err)
	if h == nil {
		return nil, fmt.Errorf("cuda: upload: nil host tensor")
	}
	var out *Tensor
	err = b.do(func() error {
		d, err := b.newTensor(h.DType(), h.Shape())
		if err != nil {
			return err
		}
		if err := memcpyHtoD(d.ptr, hostData(h), d.bytes); err != nil {
			b.free(d.ptr)
			return err
		}
		d.angles = angles.Of(h)
		out = d
		return nil
	})
	if err != nil {
		return nil, wrapUnavailable("upload", err)
	}
	return out, nil
}

// Download copies a device tensor into a new host tensor.
func (b *Backend) Download(t scans.Tensor) (h *scans.Host, err error) {
	defer guard("download", &err)
	d, err := b.mine("download", "t", t)
	if err != nil {
		return nil, err
	}
	err = b.do(func() error {
		if !d.live() {
			return releasedError("download", "t", d)
		}
		if err := b.orderBefore(nil, orderStreams(nil, []*Tensor{d})); err != nil {
			return err
		}
		out, err := scans.NewHost(d.dtype, d.shape...)
		if err != nil {
			return err
		}
		if err := memcpyDtoH(hostData(out), d.ptr, d.bytes); err != nil {
			return err
		}
		h = out
		return nil
	})
	if err != nil {
		return nil, wrapUnavailable("download", err)
	}
	return h, nil
}

// Release frees a device tensor. Releasing it again, or using it
// afterwards, is an error.
func (b *Backend) Release(t scans.Tensor) (err error) {
	defer guard("release", &err)
	d, err := b.mine("release", "t", t)
	if err != nil {
		return err
	}
	return wrapUnavailable("release", b.do(func() error {
		if !d.live() {
			return releasedError("release", "t", d)
		}
		if d.uses > 0 {
			// Enqueued work still uses it: its queue frees it when done.
			d.freeLater = true
			return nil
		}
		p := d.ptr
		d.ptr = 0
		if d.external {
			return nil // the caller's memory
		}
		return b.free(p)
	}))
}

// CachedBytes implements scans.MemoryPool.
func (b *Backend) CachedBytes() int64 {
	var n int64
	b.do(func() error { n = b.cache.Bytes(); return nil })
	return n
}

// EmptyCache implements scans.MemoryPool.
func (b *Backend) EmptyCache() {
	b.do(func() error { b.emptyCache(); return nil })
}

// PeakBytes is the largest number of device bytes this backend held at
// once (tensors and scratch buffers) since the last ResetPeakBytes.
func (b *Backend) PeakBytes() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak
}

// ResetPeakBytes sets the peak to the bytes held now.
func (b *Backend) ResetPeakBytes() {
	b.mu.Lock()
	b.peak = b.held
	b.mu.Unlock()
}
