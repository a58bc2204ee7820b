//go:build cgo

package vk

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
)

// Guard regions catch a kernel that writes past the end of a buffer where
// it happens. With MINGRU_VK_GUARD=1 every tensor's buffer is allocated
// with guardSize bytes after its contents, filled with guardPattern; after
// every run the guards of the buffers it bound are read back, and a
// changed word fails the run with an error naming the kernels. Outputs are
// bound without their guards, so a write there is out of bounds. It costs
// a readback per buffer per run: for tests, not for speed.

const (
	guardSize    = 4 << 10
	guardPattern = 0xdeadbeef
)

// guardFromEnv reads MINGRU_VK_GUARD.
func guardFromEnv() bool { return os.Getenv("MINGRU_VK_GUARD") == "1" }

// guardBytes is the guard region of a new tensor buffer: guardSize with
// guards on, else 0.
func (d *device) guardBytes() int64 {
	if d.guard {
		return guardSize
	}
	return 0
}

// setGuard makes the guardBytes of b after its first size bytes, which it
// has room for, the guard region, and fills it.
func (d *device) setGuard(b *buffer, size int64) error {
	g := d.guardBytes()
	if g == 0 {
		return nil
	}
	b.size, b.guard = size, g
	return d.transferAt(b, size, guardFill(g), true)
}

func guardFill(n int64) []byte {
	w := make([]byte, n)
	for i := 0; i < len(w); i += 4 {
		binary.LittleEndian.PutUint32(w[i:], guardPattern)
	}
	return w
}

// checkGuards reads back the guard of every buffer the kernels bound and
// reports the first that changed.
func (d *device) checkGuards(ks []kernel) error {
	if !d.guard {
		return nil
	}
	seen := map[*buffer]bool{}
	var mods []string
	for _, k := range ks {
		mods = append(mods, k.module)
	}
	for _, k := range ks {
		for i, o := range k.binds {
			if o.buf == nil || seen[o.buf] {
				continue
			}
			seen[o.buf] = true
			if err := d.checkGuard(o.buf); err != nil {
				return fmt.Errorf("vk: %s: binding %d: %w", strings.Join(mods, ", "), i, err)
			}
		}
	}
	return nil
}

// checkGuard reports whether b's guard region still holds guardPattern.
func (d *device) checkGuard(b *buffer) error {
	if b.guard == 0 {
		return nil
	}
	got := make([]byte, b.guard)
	if err := d.transferAt(b, b.size, got, false); err != nil {
		return err
	}
	for i := 0; i < len(got); i += 4 {
		if w := binary.LittleEndian.Uint32(got[i:]); w != guardPattern {
			return fmt.Errorf("a kernel wrote past the end of a buffer of %d bytes: guard word at byte %d is %#x", b.size, b.size+int64(i), w)
		}
	}
	return nil
}
