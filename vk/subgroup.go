//go:build cgo

package vk

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// The subgroup Givens kernels (shaders/givens_sg.glsl) number the
// invocations of a workgroup gl_SubgroupID * gl_SubgroupSize +
// gl_SubgroupInvocationID and exchange values between neighbours with
// subgroupShuffle. They run only on a device where that numbering is a
// bijection onto the workgroup and shuffles reach the invocation they
// name, which the device is checked for when it opens (probeSubgroups):
// a device that reports one subgroup size and runs another (Mesa 22's
// lavapipe with LP_NATIVE_VECTOR_WIDTH of 1024 or 2048 reports subgroups
// of 32 or 64 and runs them 16 wide) gets the Givens kernels without
// shuffles, which compute the same numbers.

const (
	subgroupBasic   = 0x1
	subgroupShuffle = 0x10
	stageCompute    = 0x20

	// Shader stage create flags of VK_EXT_subgroup_size_control.
	stageAllowVaryingSubgroups = 0x1
	stageRequireFullSubgroups  = 0x2
)

// subgroupSize is the smallest subgroup size the device runs compute
// shaders with when they have the basic and shuffle subgroup operations
// (Vulkan 1.1 on both the instance and the device), else 0: the kernels
// that exchange values through shuffles run only where it is at least the
// invocations that exchange. (Some compilers choose a size below the
// reported subgroupSize; VK_EXT_subgroup_size_control reports the least
// and the greatest.) It also records the greatest size, and whether the
// subgroup pipelines can require full subgroups.
func (d *device) subgroupSize(deviceAPI uint32) int {
	if d.api < vk.MakeVersion(1, 1, 0) || deviceAPI < vk.MakeVersion(1, 1, 0) {
		return 0
	}
	p, ok := shimSubgroup(d.instance, d.phys)
	if !ok || p.stages&stageCompute == 0 || p.ops&(subgroupBasic|subgroupShuffle) != subgroupBasic|subgroupShuffle {
		return 0
	}
	pow2 := func(n uint32) bool { return n != 0 && n&(n-1) == 0 }
	if !pow2(p.minSize) || !pow2(p.size) || !pow2(p.maxSize) {
		return 0
	}
	d.subgroupMax = int(p.maxSize)
	d.fullSubgroups = p.full
	return int(p.minSize)
}

// shuffleWidth is the number of invocations the kernels may exchange
// values within (the device's smallest subgroup size), 0 when they may
// not; subgroupAlign a multiple of every subgroup size the device uses,
// which a workgroup of those kernels is a multiple of.
func (d *device) shuffleWidth() int  { return d.subgroup }
func (d *device) subgroupAlign() int { return d.subgroupMax }

// usesSubgroups says whether a module uses subgroup operations.
func usesSubgroups(module string) bool {
	return strings.HasPrefix(module, "givens_scan_sg") || module == "shuffleprobe"
}

// stageFlags are the shader stage create flags of a module's pipelines:
// where the device can, the subgroup kernels require full subgroups of
// any size the device may choose (their workgroups are multiples of the
// greatest), so that the numbering above holds on every device whose
// subgroup size varies between pipelines.
func (d *device) stageFlags(module string) uint32 {
	if d.fullSubgroups && usesSubgroups(module) {
		return stageAllowVaryingSubgroups | stageRequireFullSubgroups
	}
	return 0
}

// probeSubgroups runs shaders/shuffleprobe.comp in workgroups of the
// sizes the subgroup kernels use and turns those kernels off (shuffleWidth
// 0) unless, in every workgroup, the invocations' numbers are a bijection
// onto the workgroup, gl_SubgroupSize is within the device's reported
// sizes, and every shuffle returns the value of the invocation it names.
// subgroupNote records the outcome.
func (d *device) probeSubgroups() error {
	if d.subgroup == 0 {
		d.subgroupNote = "subgroup kernels: off (no subgroup shuffles in compute)"
		return nil
	}
	if why := varyingWithoutControl(d.subgroup, d.subgroupMax, d.fullSubgroups); why != "" {
		d.subgroupNote = "subgroup kernels: off (" + why + ")"
		d.subgroup = 0
		return nil
	}
	var sizes []int
	for wg := d.subgroupMax; wg <= min(d.maxWG, maxElementwiseWG); wg *= 2 {
		sizes = append(sizes, wg)
	}
	if len(sizes) == 0 {
		d.subgroupNote = fmt.Sprintf("subgroup kernels: off (subgroups of %s are wider than their workgroups)", d.subgroupSizes())
		d.subgroup = 0
		return nil
	}
	for _, wg := range sizes {
		why, err := d.runShuffleProbe(wg)
		if err != nil {
			return fmt.Errorf("vk: subgroup probe: %w", err)
		}
		if why != "" {
			d.subgroupNote = fmt.Sprintf("subgroup kernels: off (the device reports subgroups of %s, but in a workgroup of %d %s)",
				d.subgroupSizes(), wg, why)
			d.subgroup = 0
			return nil
		}
	}
	d.subgroupNote = fmt.Sprintf("subgroup kernels: on (subgroups of %s, checked in workgroups of %d to %d)", d.subgroupSizes(), sizes[0], sizes[len(sizes)-1])
	return nil
}

// subgroupSizes says which subgroup sizes the device reports.
func (d *device) subgroupSizes() string {
	if d.subgroup == d.subgroupMax {
		return fmt.Sprint(d.subgroup)
	}
	return fmt.Sprintf("%d to %d", d.subgroup, d.subgroupMax)
}

// varyingWithoutControl says why a device whose compiler may choose
// subgroups of minSize to maxSize invocations cannot run the subgroup
// kernels when its pipelines cannot require full subgroups (a partial
// subgroup would break their numbering), or "" when it can.
func varyingWithoutControl(minSize, maxSize int, full bool) string {
	if minSize < maxSize && !full {
		return fmt.Sprintf("subgroups of %d to %d invocations, and pipelines cannot require them full", minSize, maxSize)
	}
	return ""
}

// probeGroups is the number of workgroups each probe dispatch runs.
const probeGroups = 2

// runShuffleProbe runs the probe in workgroups of wg invocations and
// returns "" where every check holds, else what the first failing
// invocation saw.
func (d *device) runShuffleProbe(wg int) (string, error) {
	n := wg * probeGroups
	bytes := 4 * probeWords * n
	out, err := d.alloc(int64(bytes))
	if err != nil {
		return "", err
	}
	defer d.free(out)
	var spec [numSpec]uint32
	spec[specWG] = uint32(wg)
	p, err := d.pipeline("shuffleprobe", spec)
	if err != nil {
		return "", err
	}
	c, err := d.getCtx()
	if err != nil {
		return "", err
	}
	defer d.putCtx(c)
	if err := d.beginBound(c, p, bufferBinding{buf: out.buf, rng: uint64(bytes)}); err != nil {
		return "", err
	}
	push := new([4 + maxBindings]uint32)
	push[0] = uint32(n)
	vk.CmdPushConstants(c.cmd, d.layout, vk.ShaderStageFlags(vk.ShaderStageComputeBit), 0, pushBytes, unsafe.Pointer(&push[0]))
	vk.CmdDispatch(c.cmd, probeGroups, 1, 1)
	d.barrier(c.cmd, vk.AccessShaderWriteBit, vk.AccessTransferReadBit|vk.AccessHostReadBit,
		vk.PipelineStageComputeShaderBit, vk.PipelineStageTransferBit|vk.PipelineStageHostBit)
	if err := d.submit(c); err != nil {
		return "", err
	}
	got := make([]byte, bytes)
	if err := d.read(out, got); err != nil {
		return "", err
	}
	words := make([]uint32, probeWords*n)
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(got[4*i:])
	}
	return checkShuffleProbe(words, wg, d.subgroup, d.subgroupMax), nil
}

// probeWords is the number of words each probe invocation writes (see
// shaders/shuffleprobe.comp): its subgroup size, subgroup id, number of
// subgroups, index in its subgroup, the values it received from the
// invocations i+1, i-1 and i^1 of its subgroup (each invocation offers
// its own number, gl_SubgroupID * gl_SubgroupSize + index), and a word
// written last.
const probeWords = 8

// probeDone is the last word of every probe invocation: an invocation
// whose record lacks it never ran.
const probeDone = 0x5eed

// checkShuffleProbe checks the probe's output for workgroups of wg
// invocations on a device whose subgroups are minSize to maxSize wide.
func checkShuffleProbe(w []uint32, wg, minSize, maxSize int) string {
	for g := 0; g*wg < len(w)/probeWords; g++ {
		seen := make([]bool, wg)
		for l := 0; l < wg; l++ {
			r := w[(g*wg+l)*probeWords:][:probeWords]
			size, id, num, i := int(r[0]), int(r[1]), int(r[2]), int(r[3])
			if r[7] != probeDone {
				return fmt.Sprintf("invocation %d did not run", l)
			}
			switch {
			case size < minSize || size > maxSize || size&(size-1) != 0:
				return fmt.Sprintf("gl_SubgroupSize is %d", size)
			case num*size != wg:
				return fmt.Sprintf("gl_NumSubgroups is %d with gl_SubgroupSize %d", num, size)
			case i >= size || id >= num:
				return fmt.Sprintf("an invocation has gl_SubgroupID %d and gl_SubgroupInvocationID %d with gl_SubgroupSize %d", id, i, size)
			}
			slot := id*size + i
			if seen[slot] {
				return fmt.Sprintf("two invocations are number %d (gl_SubgroupID %d, gl_SubgroupSize %d, gl_SubgroupInvocationID %d)", slot, id, size, i)
			}
			seen[slot] = true
			base := id * size
			for k, from := range []int{(i + 1) % size, (i + size - 1) % size, (i ^ 1) % size} {
				if want := base + from; int(r[4+k]) != want {
					return fmt.Sprintf("invocation %d's shuffle from index %d returned %d, not %d", slot, from, r[4+k], want)
				}
			}
		}
	}
	return ""
}
