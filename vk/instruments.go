//go:build cgo

package vk

import (
	"errors"
	"fmt"
	"sort"
	"time"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"

	"github.com/mingru/scans"
)

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// timed records reps commands between timestamps and returns the median
// interval.
func (d *device) timed(reps int, record func(cmd vk.CommandBuffer)) (time.Duration, error) {
	if !d.hasTimestamps {
		return 0, errors.New("vk: the device's compute queue has no timestamps")
	}
	c, err := d.getCtx()
	if err != nil {
		return 0, err
	}
	defer d.putCtx(c)
	if reps+1 > int(c.qcap) {
		reps = int(c.qcap) - 1
	}
	if err := d.begin(c); err != nil {
		return 0, err
	}
	vk.CmdResetQueryPool(c.cmd, c.qpool, 0, uint32(reps+1))
	vk.CmdWriteTimestamp(c.cmd, vk.PipelineStageTopOfPipeBit, c.qpool, 0)
	for i := 0; i < reps; i++ {
		record(c.cmd)
		vk.CmdWriteTimestamp(c.cmd, vk.PipelineStageBottomOfPipeBit, c.qpool, uint32(i+1))
	}
	if err := d.submit(c); err != nil {
		return 0, err
	}
	ts, err := d.timestamps(c, uint32(reps+1))
	if err != nil {
		return 0, err
	}
	return median(ts), nil
}

// copyWG and copyUnroll match shaders/copy.comp: a workgroup copies
// copyWG*copyUnroll words of 16 bytes.
const (
	copyWG     = 256
	copyUnroll = 4
)

// copyKernel copies bytes (a multiple of 16) from src to dst with the copy
// compute shader, reps times, each dispatch (or group of dispatches, one
// per bindable piece of the buffers) between timestamps, and returns the
// reps intervals (nil without timestamps).
func (d *device) copyKernel(src, dst *buffer, bytes int64, reps int) ([]time.Duration, error) {
	if bytes%16 != 0 || bytes > src.size || bytes > dst.size {
		return nil, fmt.Errorf("vk: copy of %d bytes between buffers of %d and %d", bytes, src.size, dst.size)
	}
	var spec [numSpec]uint32
	spec[specWG] = copyWG
	p, err := d.pipeline("copy", spec)
	if err != nil {
		return nil, err
	}
	// Pieces no larger than the bindable range, starting at aligned offsets.
	piece := d.maxRange &^ 4095
	if piece > 1<<30 {
		piece = 1 << 30
	}
	type part struct {
		off, n int64 // bytes
		gx, gy uint32
	}
	var parts []part
	for off := int64(0); off < bytes; off += piece {
		n := bytes - off
		if n > piece {
			n = piece
		}
		g := (n/16 + copyWG*copyUnroll - 1) / (copyWG * copyUnroll)
		gx := int64(d.maxGroups[0])
		if g < gx {
			gx = g
		}
		gy := (g + gx - 1) / gx
		if gy > int64(d.maxGroups[1]) {
			return nil, fmt.Errorf("vk: copy of %d bytes needs %d workgroups, more than the device dispatches", n, g)
		}
		parts = append(parts, part{off, n, uint32(gx), uint32(gy)})
	}
	c, err := d.getCtx()
	if err != nil {
		return nil, err
	}
	defer d.putCtx(c)
	if err := d.ensureSets(c, len(parts)); err != nil {
		return nil, err
	}
	infos := make([]bufferBinding, 0, len(parts)*maxBindings)
	for _, pt := range parts {
		for i := 0; i < maxBindings; i++ {
			switch i {
			case 0:
				infos = append(infos, bufferBinding{buf: src.buf, offset: uint64(pt.off), rng: uint64(pt.n)})
			case 1:
				infos = append(infos, bufferBinding{buf: dst.buf, offset: uint64(pt.off), rng: uint64(pt.n)})
			default:
				infos = append(infos, bufferBinding{buf: d.placeholder.buf, rng: uint64(d.placeholder.size)})
			}
		}
	}
	sets, r := shimWriteSets(d.instance, d.dev, c.dpool, d.dsl, maxBindings, infos)
	if err := check(r, "allocate descriptor sets"); err != nil {
		return nil, err
	}
	if reps+1 > int(c.qcap) && c.hasQry {
		reps = int(c.qcap) - 1
	}
	if err := d.begin(c); err != nil {
		return nil, err
	}
	cmd := c.cmd
	if c.hasQry {
		vk.CmdResetQueryPool(cmd, c.qpool, 0, uint32(reps+1))
		vk.CmdWriteTimestamp(cmd, vk.PipelineStageTopOfPipeBit, c.qpool, 0)
	}
	vk.CmdBindPipeline(cmd, vk.PipelineBindPointCompute, p)
	for rep := 0; rep < reps; rep++ {
		if rep > 0 {
			d.barrier(cmd, vk.AccessShaderWriteBit, vk.AccessShaderReadBit|vk.AccessShaderWriteBit,
				vk.PipelineStageComputeShaderBit, vk.PipelineStageComputeShaderBit)
		}
		for i, pt := range parts {
			vk.CmdBindDescriptorSets(cmd, vk.PipelineBindPointCompute, d.layout, 0, 1, []vk.DescriptorSet{sets[i]}, 0, nil)
			push := new([4 + maxBindings]uint32)
			push[0] = uint32(pt.n / 16)
			vk.CmdPushConstants(cmd, d.layout, vk.ShaderStageFlags(vk.ShaderStageComputeBit), 0, pushBytes, unsafe.Pointer(&push[0]))
			vk.CmdDispatch(cmd, pt.gx, pt.gy, 1)
		}
		if c.hasQry {
			vk.CmdWriteTimestamp(cmd, vk.PipelineStageBottomOfPipeBit, c.qpool, uint32(rep+1))
		}
	}
	if err := d.submit(c); err != nil {
		return nil, err
	}
	if !c.hasQry {
		return nil, nil
	}
	return d.timestamps(c, uint32(reps+1))
}

// copyBandwidth times the copy compute shader between two device buffers
// of bytes (rounded up to 16) and returns (bytes read + bytes written) per
// second of the median copy. It is the ceiling a compute kernel can reach
// (vkCmdCopyBuffer may run on a slower DMA path).
func (d *device) copyBandwidth(bytes int64) (float64, error) {
	if !d.hasTimestamps {
		return 0, errors.New("vk: the device's compute queue has no timestamps")
	}
	bytes = (bytes + 15) &^ 15
	src, err := d.allocRaw(bytes, false)
	if err != nil {
		return 0, err
	}
	defer d.freeRaw(src)
	dst, err := d.allocRaw(bytes, false)
	if err != nil {
		return 0, err
	}
	defer d.freeRaw(dst)
	// The first copies touch fresh pages; the median of the rest counts.
	ts, err := d.copyKernel(src, dst, bytes, 11)
	if err != nil {
		return 0, err
	}
	dt := median(ts[1:])
	if dt <= 0 {
		return 0, errors.New("vk: copy took no measurable time")
	}
	return 2 * float64(bytes) / dt.Seconds(), nil
}

// flushCache fills a buffer of scans.FlushBytes (kept from the first
// call, not counted in PeakBytes) and waits for it.
func (d *device) flushCache() error {
	d.flushMu.Lock()
	defer d.flushMu.Unlock()
	if d.flushBuf == nil {
		b, err := d.allocRaw(scans.FlushBytes, false)
		if err != nil {
			return fmt.Errorf("vk: cache-flush buffer: %w", err)
		}
		d.flushBuf = b
	}
	c, err := d.getCtx()
	if err != nil {
		return err
	}
	defer d.putCtx(c)
	if err := d.begin(c); err != nil {
		return err
	}
	vk.CmdFillBuffer(c.cmd, d.flushBuf.buf, 0, vk.DeviceSize(d.flushBuf.size), 0x5eed5eed)
	return d.submit(c)
}

func (d *device) dispatchLatency() (time.Duration, error) {
	var spec [numSpec]uint32
	spec[specWG] = 1
	p, err := d.pipeline("empty", spec)
	if err != nil {
		return 0, err
	}
	// Several submissions of queryCap-1 timed dispatches each, the first
	// one untimed: the median of their medians moves much less from one
	// run to the next than that of one submission.
	meds := make([]time.Duration, 0, latencyRounds)
	for i := 0; i <= latencyRounds; i++ {
		m, err := d.timed(queryCap-1, func(cmd vk.CommandBuffer) {
			vk.CmdBindPipeline(cmd, vk.PipelineBindPointCompute, p)
			vk.CmdDispatch(cmd, 1, 1, 1)
		})
		if err != nil {
			return 0, err
		}
		if i > 0 {
			meds = append(meds, m)
		}
	}
	return median(meds), nil
}

// latencyRounds is the number of timed submissions dispatchLatency takes
// the median of.
const latencyRounds = 9
