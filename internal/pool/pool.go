// Package pool holds the size classes and free lists of the GPU backends'
// caching allocators: a released buffer is kept under its size class and
// handed to the next request of that class, so that a loop of calls does
// not allocate device memory per call.
package pool

import "math/bits"

// Class rounds a request of n bytes up to its size class: 256 bytes at
// least, then four classes per power of two (p, 1.25p, 1.5p, 1.75p), so
// that a buffer wastes under a quarter of what it holds.
func Class(n int64) int64 {
	if n <= 256 {
		return 256
	}
	p := int64(1) << (bits.Len64(uint64(n)) - 1) // the power of two <= n
	step := p / 4
	return (n + step - 1) / step * step
}

// Cache holds released buffers of type B by size class. It is not safe
// for concurrent use: the allocator holds its lock around each call.
type Cache[B any] struct {
	free  map[int64][]B
	bytes int64
}

// Get takes a buffer of the class, if the cache holds one.
func (c *Cache[B]) Get(class int64) (b B, ok bool) {
	l := c.free[class]
	if len(l) == 0 {
		return b, false
	}
	b = l[len(l)-1]
	c.free[class] = l[:len(l)-1]
	c.bytes -= class
	return b, true
}

// Put keeps a buffer of the class.
func (c *Cache[B]) Put(class int64, b B) {
	if c.free == nil {
		c.free = map[int64][]B{}
	}
	c.free[class] = append(c.free[class], b)
	c.bytes += class
}

// Bytes is the total of the classes of the buffers held.
func (c *Cache[B]) Bytes() int64 { return c.bytes }

// Drain empties the cache and returns what it held.
func (c *Cache[B]) Drain() []B {
	var out []B
	for _, l := range c.free {
		out = append(out, l...)
	}
	c.free, c.bytes = nil, 0
	return out
}
