//go:build cgo

package vk

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"

	"github.com/mingru/scans"
)

// f16Paths says which f16 widening and narrowing the device's kernels use.
func (d *device) f16Paths() string {
	w := "f16 widening: software for zeros, subnormals, Inf and NaN"
	if d.hwF16&hwWiden != 0 {
		w = "f16 widening: unpackHalf2x16 (exact on all 65536 values)"
	}
	return w + "; f16 narrowing: " + d.narrowing
}

// probeF16 widens all 65536 f16 values with the device's unpackHalf2x16
// (shaders/f16probe.comp) and reports whether every result is the exact
// widening: the same f32 bits, or a NaN for a NaN (the kernels only do
// arithmetic with a widened value, which gives the device's NaN either
// way). Vulkan allows 16-bit subnormals to be flushed to zero, so this is
// a property of the device and driver, checked on every one.
func (d *device) probeF16() (bool, error) {
	const words = 1 << 15
	in, err := d.alloc(4 * words)
	if err != nil {
		return false, err
	}
	defer d.free(in)
	out, err := d.alloc(8 * words)
	if err != nil {
		return false, err
	}
	defer d.free(out)
	src := make([]byte, 4*words)
	for h := 0; h < 2*words; h++ {
		binary.LittleEndian.PutUint16(src[2*h:], uint16(h))
	}
	if err := d.write(in, src); err != nil {
		return false, err
	}
	const wg = 64
	var spec [numSpec]uint32
	spec[specWG] = wg
	p, err := d.pipeline("f16probe", spec)
	if err != nil {
		return false, err
	}
	c, err := d.getCtx()
	if err != nil {
		return false, err
	}
	defer d.putCtx(c)
	if err := d.beginBound(c, p, bufferBinding{buf: in.buf, rng: uint64(4 * words)},
		bufferBinding{buf: out.buf, rng: uint64(8 * words)}); err != nil {
		return false, err
	}
	push := new([4 + maxBindings]uint32)
	push[0] = words
	vk.CmdPushConstants(c.cmd, d.layout, vk.ShaderStageFlags(vk.ShaderStageComputeBit), 0, pushBytes, unsafe.Pointer(&push[0]))
	vk.CmdDispatch(c.cmd, words/wg, 1, 1)
	d.barrier(c.cmd, vk.AccessShaderWriteBit, vk.AccessTransferReadBit|vk.AccessHostReadBit,
		vk.PipelineStageComputeShaderBit, vk.PipelineStageTransferBit|vk.PipelineStageHostBit)
	if err := d.submit(c); err != nil {
		return false, err
	}
	got := make([]byte, 8*words)
	if err := d.read(out, got); err != nil {
		return false, err
	}
	for h := 0; h < 2*words; h++ {
		want := scans.F16ToFloat32(uint16(h))
		bits := binary.LittleEndian.Uint32(got[4*h:])
		if want != want {
			if f := math.Float32frombits(bits); f == f {
				return false, nil
			}
			continue
		}
		if bits != math.Float32bits(want) {
			return false, nil
		}
	}
	return true, nil
}

// The narrowing probe's dispatches: each checks at most narrowPerDispatch
// patterns (its mismatch count fits in 32 bits, and it stays short on a
// slow GPU), narrowRun patterns per invocation, narrowWG invocations per
// workgroup.
const (
	narrowPerDispatch = 1 << 28
	narrowRun         = 64
	narrowWG          = 64
)

// narrowResult is what a run of the narrowing probe found.
type narrowResult struct {
	patterns   uint64        // bit patterns checked
	mismatches uint64        // patterns whose packHalf2x16 differs from the reference
	first      uint32        // the smallest of them, where there are any
	wall       time.Duration // the whole probe: pipeline, dispatches, readback
	device     time.Duration // between timestamps around the dispatches; 0 without
}

// took says how long the probe ran.
func (r narrowResult) took() string {
	s := fmt.Sprintf("%.1f ms", float64(r.wall.Microseconds())/1e3)
	if r.device > 0 {
		s += fmt.Sprintf(", %.1f ms of it on the device", float64(r.device.Microseconds())/1e3)
	}
	return s
}

// chooseNarrowing decides whether the f16 kernels narrow with packHalf2x16
// (hwNarrow) or with the integer rounding. On a GPU it probes every one of
// the 2^32 f32 bit patterns first and uses packHalf2x16 only where all of
// them round to nearest even. A CPU device (lavapipe) keeps the integer
// rounding unprobed: the probe would take minutes there. force, a test
// knob, sets hwNarrow without a probe.
func (d *device) chooseNarrowing(force bool) error {
	switch {
	case force:
		d.hwF16 |= hwNarrow
		d.narrowing = "packHalf2x16 (forced, not probed)"
	case d.software:
		d.narrowing = "integer rounding (packHalf2x16 not probed on a CPU device)"
	default:
		r, err := d.probeNarrow(0, 1, 1<<32, false)
		if err != nil {
			return err
		}
		if r.mismatches == 0 {
			d.hwF16 |= hwNarrow
			d.narrowing = fmt.Sprintf("packHalf2x16 (round to nearest even on all 2^32 f32 values, probed in %s)", r.took())
		} else {
			d.narrowing = fmt.Sprintf("integer rounding (packHalf2x16 differs on %d of the 2^32 f32 values, the first 0x%08x; probed in %s)",
				r.mismatches, r.first, r.took())
		}
	}
	return nil
}

// probeNarrow narrows the count f32 bit patterns base + j*stride (mod
// 2^32, 0 <= j < count) with the device's packHalf2x16
// (shaders/f16narrowprobe.comp) and counts those whose result differs from
// the kernels' integer rounding to nearest even (f32_to_f16 in
// shaders/f16.glsl; a NaN may become any NaN), or with towardZero (tests)
// from the rounding toward zero. count must be even and at most 2^32.
func (d *device) probeNarrow(base, stride uint32, count uint64, towardZero bool) (narrowResult, error) {
	start := time.Now()
	res := narrowResult{patterns: count}
	if count%2 != 0 || count > 1<<32 {
		return res, fmt.Errorf("vk: narrowing probe of %d patterns: want an even count up to 2^32", count)
	}
	per := uint64(narrowPerDispatch)
	if d.narrowPer >= 2 {
		per = d.narrowPer &^ 1
	}
	slots := int((count + per - 1) / per)
	if slots == 0 {
		return res, nil
	}
	var spec [numSpec]uint32
	spec[specWG] = narrowWG
	if towardZero {
		spec[1] = 1 // constant 1 of f16narrowprobe.comp: the truncation reference
	}
	p, err := d.pipeline("f16narrowprobe", spec)
	if err != nil {
		return res, err
	}
	out, err := d.allocRaw(int64(8*slots), false)
	if err != nil {
		return res, err
	}
	defer d.freeRaw(out)
	// Per slot: the mismatch count, then the smallest mismatching pattern.
	words := make([]byte, 8*slots)
	for i := 0; i < slots; i++ {
		binary.LittleEndian.PutUint32(words[8*i+4:], math.MaxUint32)
	}
	if err := d.write(out, words); err != nil {
		return res, err
	}
	c, err := d.getCtx()
	if err != nil {
		return res, err
	}
	defer d.putCtx(c)
	if err := d.beginBound(c, p, bufferBinding{buf: out.buf, rng: uint64(8 * slots)}); err != nil {
		return res, err
	}
	cmd := c.cmd
	if c.hasQry {
		vk.CmdResetQueryPool(cmd, c.qpool, 0, 2)
		vk.CmdWriteTimestamp(cmd, vk.PipelineStageTopOfPipeBit, c.qpool, 0)
	}
	for k := 0; k < slots; k++ {
		n := min(count-uint64(k)*per, per)
		push := new([4 + maxBindings]uint32)
		push[0] = base + uint32(uint64(k)*per)*stride
		push[1] = uint32(n)
		push[2] = stride
		push[3] = narrowRun
		push[4] = uint32(k)
		vk.CmdPushConstants(cmd, d.layout, vk.ShaderStageFlags(vk.ShaderStageComputeBit), 0, pushBytes, unsafe.Pointer(&push[0]))
		g := (n + narrowRun*narrowWG - 1) / (narrowRun * narrowWG)
		gx := min(g, uint64(d.maxGroups[0]))
		gy := (g + gx - 1) / gx
		if gy > uint64(d.maxGroups[1]) {
			return res, fmt.Errorf("vk: narrowing probe: %d workgroups exceed the device's dispatch limits", g)
		}
		vk.CmdDispatch(cmd, uint32(gx), uint32(gy), 1)
	}
	if c.hasQry {
		vk.CmdWriteTimestamp(cmd, vk.PipelineStageBottomOfPipeBit, c.qpool, 1)
	}
	d.barrier(cmd, vk.AccessShaderWriteBit, vk.AccessTransferReadBit|vk.AccessHostReadBit,
		vk.PipelineStageComputeShaderBit, vk.PipelineStageTransferBit|vk.PipelineStageHostBit)
	if err := d.submit(c); err != nil {
		return res, err
	}
	if c.hasQry {
		ts, err := d.timestamps(c, 2)
		if err != nil {
			return res, err
		}
		res.device = ts[0]
	}
	if err := d.read(out, words); err != nil {
		return res, err
	}
	res.first = math.MaxUint32
	for i := 0; i < slots; i++ {
		if n := binary.LittleEndian.Uint32(words[8*i:]); n > 0 {
			res.mismatches += uint64(n)
			res.first = min(res.first, binary.LittleEndian.Uint32(words[8*i+4:]))
		}
	}
	res.wall = time.Since(start)
	return res, nil
}
