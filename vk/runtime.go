//go:build cgo

package vk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"

	"github.com/mingru/scans"
	"github.com/mingru/scans/shaders"
)

// resultError is a failed VkResult.
type resultError struct{ r vk.Result }

func (e resultError) Error() string {
	if err := vk.Error(e.r); err != nil {
		return fmt.Sprintf("%v (VkResult %d)", err, int32(e.r))
	}
	return fmt.Sprintf("VkResult %d", int32(e.r))
}

// check wraps a failed VkResult with what was being done.
func check(r vk.Result, what string) error {
	if r == vk.Success {
		return nil
	}
	return fmt.Errorf("vk: %s: %w", what, resultError{r})
}

// buffer is one device buffer with its own memory.
type buffer struct {
	buf    vk.Buffer
	mem    vk.DeviceMemory
	size   int64 // bytes allocated for the buffer's contents (a multiple of 4)
	guard  int64 // bytes of guard region after the contents (see guard.go)
	charge int64 // bytes of device memory counted against the peak
	host   bool  // host-visible (mapped directly for transfers)
}

// pipeKey names one specialization of a module.
type pipeKey struct {
	module string
	spec   [numSpec]uint32
}

// execCtx is what one operation records into: reused across calls, one per
// concurrent caller.
type execCtx struct {
	pool   vk.CommandPool
	cmd    vk.CommandBuffer
	fence  vk.Fence
	dpool  vk.DescriptorPool
	dcap   int
	qpool  vk.QueryPool
	qcap   uint32
	hasQry bool
}

const (
	queryCap       = 16
	stagingDefault = 64 << 20
	fenceTimeoutNs = 300 * uint64(time.Second)
	pushBytes      = 4 * (4 + maxBindings)
)

// device is an opened Vulkan device with everything the kernels need.
type device struct {
	instance vk.Instance
	debugCB  vk.DebugReportCallback
	hasDebug bool
	phys     vk.PhysicalDevice
	dev      vk.Device
	queue    vk.Queue
	qfam     uint32

	name, driver  string
	software      bool // a CPU implementation (lavapipe): see softwareMaxT
	devType       vk.PhysicalDeviceType
	maxRange      int64
	align         int64
	maxGroups     [3]uint32
	maxWG         int
	maxShared     int
	sharedLimit   int    // the device's own limit, which maxShared caps
	api           uint32 // the instance's API version
	subgroup      int    // smallest subgroup size for shuffles in compute, 0 without (see subgroup.go)
	subgroupMax   int    // the greatest subgroup size the device may use
	fullSubgroups bool   // subgroup pipelines are created requiring full subgroups
	subgroupNote  string // how the subgroup kernels stand, for the status notes
	guard         bool   // tensor buffers carry guard regions (guard.go)
	flushMu       sync.Mutex
	flushBuf      *buffer // flushCache's buffer, nil until the first flush
	tsPeriod      float64
	tsMask        uint64
	hasTimestamps bool
	unified       bool
	stagingSize   int
	memProps      vk.PhysicalDeviceMemoryProperties
	dsl           vk.DescriptorSetLayout
	layout        vk.PipelineLayout
	placeholder   *buffer
	queueMu       sync.Mutex
	pipeMu        sync.Mutex
	pipes         map[pipeKey]vk.Pipeline
	pipeLog       string // file receiving one line per pipeline built ("" for none)
	pipeStats     bool   // pipelines are built with the driver's statistics (for pipeLog)
	modules       map[string]vk.ShaderModule
	ctxMu         sync.Mutex
	ctxFree       []*execCtx
	stageMu       sync.Mutex
	staging       *buffer
	stagePtr      unsafe.Pointer
	memMu         sync.Mutex
	held, peak    int64

	lastDispatches atomic.Int64 // dispatches recorded by the last run (tests)

	// hwF16: the bits of specHWF16 that every f16 kernel is specialized
	// with. hwWiden: unpackHalf2x16 widened every f16 value exactly in the
	// probe run when the device was opened (probeF16). hwNarrow:
	// packHalf2x16 rounded every f32 bit pattern to nearest even
	// (probeNarrow, never run on a CPU device). narrowing says how the
	// narrowing was chosen, for the status notes.
	hwF16     uint32
	narrowing string
	// narrowPer, where 2 or more, replaces narrowPerDispatch (tests: a
	// probe of a few dispatches that a test can check in Go).
	narrowPer uint64
}

func typeRank(t vk.PhysicalDeviceType) int {
	switch t {
	case vk.PhysicalDeviceTypeDiscreteGpu:
		return 0
	case vk.PhysicalDeviceTypeIntegratedGpu:
		return 1
	case vk.PhysicalDeviceTypeVirtualGpu:
		return 2
	case vk.PhysicalDeviceTypeCpu:
		return 3
	}
	return 4
}

func cstr(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		return string(b[:i])
	}
	return string(b)
}

func versionString(v uint32) string {
	return fmt.Sprintf("%d.%d.%d", v>>22, (v>>12)&0x3ff, v&0xfff)
}

func driverString(vendor, v uint32) string {
	if vendor == 0x10de { // NVIDIA: 10.8.8.6
		return fmt.Sprintf("%d.%d.%d.%d", v>>22, (v>>14)&0xff, (v>>6)&0xff, v&0x3f)
	}
	return versionString(v)
}

type candidate struct {
	phys  vk.PhysicalDevice
	props vk.PhysicalDeviceProperties
	index int
	name  string
}

// openDevice loads the loader, creates an instance (with the validation
// layer when asked), chooses a physical device and creates the device.
func openDevice(cfg config) (_ *device, err error) {
	if err := loadLoader(cfg.loader); err != nil {
		return nil, err
	}
	d := &device{pipes: map[pipeKey]vk.Pipeline{}, modules: map[string]vk.ShaderModule{}, pipeLog: cfg.pipeLog, guard: cfg.guard}
	defer func() {
		if err != nil {
			d.destroy()
		}
	}()
	if err := d.createInstance(cfg.validation); err != nil {
		return nil, err
	}
	if err := d.choose(cfg.device); err != nil {
		return nil, err
	}
	if cfg.maxRange > 0 && cfg.maxRange < d.maxRange {
		d.maxRange = cfg.maxRange
	}
	d.stagingSize = stagingDefault
	if cfg.stagingSize > 0 {
		d.stagingSize = (cfg.stagingSize + 3) &^ 3
	}
	if cfg.noUnified {
		d.unified = false
	}
	if err := d.createDevice(); err != nil {
		return nil, err
	}
	if d.placeholder, err = d.allocRaw(256, false); err != nil {
		return nil, fmt.Errorf("vk: placeholder buffer: %w", err)
	}
	if err := d.probeSubgroups(); err != nil {
		return nil, err
	}
	if cfg.softF16 {
		d.narrowing = "integer rounding (software conversions asked for)"
		return d, nil
	}
	exact, err := d.probeF16()
	if err != nil {
		return nil, err
	}
	if exact {
		d.hwF16 |= hwWiden
	}
	if err := d.chooseNarrowing(cfg.hwNarrow); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *device) createInstance(validation bool) error {
	if validation {
		if err := haveLayer("VK_LAYER_KHRONOS_validation"); err != nil {
			return err
		}
	}
	// Vulkan 1.1 where the loader has it, for the subgroup properties and
	// the SPIR-V 1.3 modules of the subgroup kernels; they are used only
	// on a device that is 1.1 too (see subgroupSize).
	d.api = vk.MakeVersion(1, 0, 0)
	if shimInstanceVersion() >= vk.MakeVersion(1, 1, 0) {
		d.api = vk.MakeVersion(1, 1, 0)
	}
	inst, r := shimCreateInstance(d.api, validation)
	if r == vk.ErrorIncompatibleDriver {
		return errors.New("no Vulkan driver found (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER)")
	}
	if err := check(r, "create instance"); err != nil {
		return err
	}
	d.instance = inst
	if err := vk.InitInstance(inst); err != nil {
		return fmt.Errorf("vk: load instance functions: %w", err)
	}
	if validation {
		cb := &vk.DebugReportCallbackCreateInfo{
			SType:       vk.StructureTypeDebugReportCallbackCreateInfo,
			Flags:       vk.DebugReportFlags(vk.DebugReportErrorBit | vk.DebugReportWarningBit | vk.DebugReportPerformanceWarningBit),
			PfnCallback: debugReport,
		}
		var h vk.DebugReportCallback
		if err := check(vk.CreateDebugReportCallback(inst, cb, nil, &h), "create debug report callback"); err != nil {
			return err
		}
		d.debugCB = h
		d.hasDebug = true
	}
	return nil
}

func haveLayer(name string) error {
	found, r := shimHasLayer(name)
	if err := check(r, "enumerate layers"); err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("MINGRU_VK_VALIDATION=1 but the layer %s is not installed", name)
	}
	return nil
}

// choose picks the physical device: MINGRU_VK_DEVICE (an index into the
// enumeration, or a case-insensitive substring of the name) when set, else
// discrete > integrated > virtual > CPU, first enumerated on ties.
func (d *device) choose(want string) error {
	var n uint32
	if err := check(vk.EnumeratePhysicalDevices(d.instance, &n, nil), "enumerate physical devices"); err != nil {
		return err
	}
	if n == 0 {
		return errors.New("no Vulkan device found")
	}
	physs := make([]vk.PhysicalDevice, n)
	if err := check(vk.EnumeratePhysicalDevices(d.instance, &n, physs), "enumerate physical devices"); err != nil {
		return err
	}
	var cands []candidate
	for i, p := range physs[:n] {
		var props vk.PhysicalDeviceProperties
		vk.GetPhysicalDeviceProperties(p, &props)
		props.Deref()
		cands = append(cands, candidate{phys: p, props: props, index: i, name: cstr(props.DeviceName[:])})
	}
	var names []string
	for _, c := range cands {
		names = append(names, fmt.Sprintf("%d: %s", c.index, c.name))
	}
	var pick *candidate
	if want != "" {
		if idx, err := strconv.Atoi(want); err == nil {
			if idx < 0 || idx >= len(cands) {
				return fmt.Errorf("MINGRU_VK_DEVICE=%s is out of range (devices: %s)", want, strings.Join(names, "; "))
			}
			pick = &cands[idx]
		} else {
			sorted := append([]candidate(nil), cands...)
			sort.SliceStable(sorted, func(i, j int) bool {
				return typeRank(sorted[i].props.DeviceType) < typeRank(sorted[j].props.DeviceType)
			})
			for i := range sorted {
				if strings.Contains(strings.ToLower(sorted[i].name), strings.ToLower(want)) {
					pick = &sorted[i]
					break
				}
			}
			if pick == nil {
				return fmt.Errorf("MINGRU_VK_DEVICE=%q matches no device (devices: %s)", want, strings.Join(names, "; "))
			}
		}
		if _, ok := computeFamily(d.instance, pick.phys); !ok {
			return fmt.Errorf("device %s has no compute queue", pick.name)
		}
	} else {
		for i := range cands {
			if _, ok := computeFamily(d.instance, cands[i].phys); !ok {
				continue
			}
			if pick == nil || typeRank(cands[i].props.DeviceType) < typeRank(pick.props.DeviceType) {
				pick = &cands[i]
			}
		}
		if pick == nil {
			return fmt.Errorf("no Vulkan device with a compute queue (devices: %s)", strings.Join(names, "; "))
		}
	}
	d.phys = pick.phys
	d.name = pick.name
	d.devType = pick.props.DeviceType
	d.software = d.devType == vk.PhysicalDeviceTypeCpu
	d.driver = fmt.Sprintf("driver %s, Vulkan %s", driverString(pick.props.VendorID, pick.props.DriverVersion), versionString(pick.props.ApiVersion))
	lim := pick.props.Limits
	lim.Deref()
	d.maxRange = int64(lim.MaxStorageBufferRange)
	d.align = int64(lim.MinStorageBufferOffsetAlignment)
	if d.align < 4 {
		d.align = 4
	}
	d.maxGroups = lim.MaxComputeWorkGroupCount
	d.maxWG = int(lim.MaxComputeWorkGroupSize[0])
	if inv := int(lim.MaxComputeWorkGroupInvocations); inv < d.maxWG {
		d.maxWG = inv
	}
	d.maxShared = int(lim.MaxComputeSharedMemorySize)
	d.sharedLimit = d.maxShared
	if d.maxShared > 32<<10 {
		d.maxShared = 32 << 10 // leave room for several workgroups per core
	}
	d.subgroup = d.subgroupSize(pick.props.ApiVersion)
	d.tsPeriod = float64(lim.TimestampPeriod)
	fam, _ := computeFamily(d.instance, d.phys)
	d.qfam = fam.index
	if fam.tsBits > 0 {
		d.hasTimestamps = true
		if fam.tsBits >= 64 {
			d.tsMask = math.MaxUint64
		} else {
			d.tsMask = 1<<fam.tsBits - 1
		}
	}
	var mp vk.PhysicalDeviceMemoryProperties
	vk.GetPhysicalDeviceMemoryProperties(d.phys, &mp)
	mp.Deref()
	d.memProps = mp
	for i := uint32(0); i < d.memProps.MemoryTypeCount; i++ {
		d.memProps.MemoryTypes[i].Deref()
	}
	if d.devType == vk.PhysicalDeviceTypeIntegratedGpu || d.devType == vk.PhysicalDeviceTypeCpu {
		want := vk.MemoryPropertyFlags(vk.MemoryPropertyDeviceLocalBit | vk.MemoryPropertyHostVisibleBit | vk.MemoryPropertyHostCoherentBit)
		for i := uint32(0); i < d.memProps.MemoryTypeCount; i++ {
			if d.memProps.MemoryTypes[i].PropertyFlags&want == want {
				d.unified = true
			}
		}
	}
	return nil
}

type family struct {
	index  uint32
	tsBits uint32
}

// computeFamily returns a queue family with compute, preferring one with
// timestamps.
func computeFamily(inst vk.Instance, p vk.PhysicalDevice) (family, bool) {
	var best family
	found := false
	for i, q := range shimQueueFamilies(inst, p) {
		if q.flags&uint32(vk.QueueComputeBit) == 0 || q.count == 0 {
			continue
		}
		f := family{index: uint32(i), tsBits: q.tsBits}
		if !found || (best.tsBits == 0 && f.tsBits > 0) {
			best, found = f, true
		}
	}
	return best, found
}

func (d *device) createDevice() error {
	dev, stats, r := shimCreateDevice(d.instance, d.phys, d.qfam, d.pipeLog != "", d.fullSubgroups)
	if err := check(r, "create device"); err != nil {
		return err
	}
	d.pipeStats = stats
	d.dev = dev
	var q vk.Queue
	vk.GetDeviceQueue(dev, d.qfam, 0, &q)
	d.queue = q
	dsl, pl, r := shimCreateLayouts(d.instance, dev, maxBindings, pushBytes)
	if err := check(r, "create descriptor set and pipeline layouts"); err != nil {
		return err
	}
	d.dsl, d.layout = dsl, pl
	return nil
}

// destroy frees everything the device holds (used when opening fails).
func (d *device) destroy() {
	if d.dev != nil {
		vk.DeviceWaitIdle(d.dev)
		for _, c := range d.ctxFree {
			vk.DestroyQueryPool(d.dev, c.qpool, nil)
			vk.DestroyDescriptorPool(d.dev, c.dpool, nil)
			vk.DestroyFence(d.dev, c.fence, nil)
			vk.DestroyCommandPool(d.dev, c.pool, nil)
		}
		for _, p := range d.pipes {
			vk.DestroyPipeline(d.dev, p, nil)
		}
		for _, m := range d.modules {
			vk.DestroyShaderModule(d.dev, m, nil)
		}
		if d.placeholder != nil {
			d.free(d.placeholder)
		}
		if d.staging != nil {
			vk.UnmapMemory(d.dev, d.staging.mem)
			d.freeRaw(d.staging)
		}
		if d.flushBuf != nil {
			d.freeRaw(d.flushBuf)
		}
		if d.layout != vk.NullPipelineLayout {
			vk.DestroyPipelineLayout(d.dev, d.layout, nil)
		}
		if d.dsl != vk.NullDescriptorSetLayout {
			vk.DestroyDescriptorSetLayout(d.dev, d.dsl, nil)
		}
		vk.DestroyDevice(d.dev, nil)
	}
	if d.instance != nil {
		if d.hasDebug {
			vk.DestroyDebugReportCallback(d.instance, d.debugCB, nil)
		}
		vk.DestroyInstance(d.instance, nil)
	}
}

func (d *device) maxWorkgroup() int { return d.maxWG }

func (d *device) maxSharedMemory() int { return d.maxShared }

// sharedMemoryLimit is the device's own limit on a workgroup's shared
// memory (maxSharedMemory caps it at 32 KiB for kernels that should leave
// room for several workgroups per core).
func (d *device) sharedMemoryLimit() int { return d.sharedLimit }

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
	vk.DestroyBuffer(d.dev, b.buf, nil)
	vk.FreeMemory(d.dev, b.mem, nil)
}

// alloc creates a device buffer and counts it for PeakBytes. With guards
// on, the buffer has a guard region after its contents (see guard.go).
func (d *device) alloc(size int64) (*buffer, error) {
	size = (size + 3) &^ 3
	b, err := d.allocRaw(size+d.guardBytes(), false)
	if err != nil {
		return nil, err
	}
	if err := d.setGuard(b, size); err != nil {
		d.freeRaw(b)
		return nil, err
	}
	d.memMu.Lock()
	d.held += b.charge
	if d.held > d.peak {
		d.peak = d.held
	}
	d.memMu.Unlock()
	return b, nil
}

func (d *device) free(b *buffer) {
	if b == nil {
		return
	}
	d.freeRaw(b)
	d.memMu.Lock()
	d.held -= b.charge
	d.memMu.Unlock()
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

// getCtx takes a recording context from the free list or makes one.
func (d *device) getCtx() (*execCtx, error) {
	d.ctxMu.Lock()
	if n := len(d.ctxFree); n > 0 {
		c := d.ctxFree[n-1]
		d.ctxFree = d.ctxFree[:n-1]
		d.ctxMu.Unlock()
		return c, nil
	}
	d.ctxMu.Unlock()
	c := &execCtx{}
	pinfo := &vk.CommandPoolCreateInfo{SType: vk.StructureTypeCommandPoolCreateInfo, QueueFamilyIndex: d.qfam}
	var pool vk.CommandPool
	if err := check(vk.CreateCommandPool(d.dev, pinfo, nil, &pool), "create command pool"); err != nil {
		return nil, err
	}
	c.pool = pool
	cmds := make([]vk.CommandBuffer, 1)
	ainfo := &vk.CommandBufferAllocateInfo{
		SType:              vk.StructureTypeCommandBufferAllocateInfo,
		CommandPool:        c.pool,
		Level:              vk.CommandBufferLevelPrimary,
		CommandBufferCount: 1,
	}
	if err := check(vk.AllocateCommandBuffers(d.dev, ainfo, cmds), "allocate command buffer"); err != nil {
		vk.DestroyCommandPool(d.dev, c.pool, nil)
		return nil, err
	}
	c.cmd = cmds[0]
	var fence vk.Fence
	if err := check(vk.CreateFence(d.dev, &vk.FenceCreateInfo{SType: vk.StructureTypeFenceCreateInfo}, nil, &fence), "create fence"); err != nil {
		vk.DestroyCommandPool(d.dev, c.pool, nil)
		return nil, err
	}
	c.fence = fence
	if d.hasTimestamps {
		qinfo := &vk.QueryPoolCreateInfo{
			SType:      vk.StructureTypeQueryPoolCreateInfo,
			QueryType:  vk.QueryTypeTimestamp,
			QueryCount: queryCap,
		}
		var qp vk.QueryPool
		if err := check(vk.CreateQueryPool(d.dev, qinfo, nil, &qp), "create query pool"); err != nil {
			vk.DestroyFence(d.dev, c.fence, nil)
			vk.DestroyCommandPool(d.dev, c.pool, nil)
			return nil, err
		}
		c.qpool = qp
		c.qcap = queryCap
		c.hasQry = true
	}
	return c, nil
}

func (d *device) putCtx(c *execCtx) {
	d.ctxMu.Lock()
	d.ctxFree = append(d.ctxFree, c)
	d.ctxMu.Unlock()
}

// ensureSets makes the context's descriptor pool hold n sets and resets it.
func (d *device) ensureSets(c *execCtx, n int) error {
	if n > c.dcap {
		if c.dpool != vk.NullDescriptorPool {
			vk.DestroyDescriptorPool(d.dev, c.dpool, nil)
			c.dpool, c.dcap = vk.NullDescriptorPool, 0
		}
		capacity := 8
		for capacity < n {
			capacity *= 2
		}
		dp, r := shimCreatePool(d.instance, d.dev, uint32(capacity), uint32(capacity*maxBindings))
		if err := check(r, "create descriptor pool"); err != nil {
			return err
		}
		c.dpool = dp
		c.dcap = capacity
		return nil
	}
	return check(vk.ResetDescriptorPool(d.dev, c.dpool, 0), "reset descriptor pool")
}

// begin resets the context and starts recording.
func (d *device) begin(c *execCtx) error {
	if err := check(vk.ResetCommandPool(d.dev, c.pool, 0), "reset command pool"); err != nil {
		return err
	}
	info := &vk.CommandBufferBeginInfo{
		SType: vk.StructureTypeCommandBufferBeginInfo,
		Flags: vk.CommandBufferUsageFlags(vk.CommandBufferUsageOneTimeSubmitBit),
	}
	return check(vk.BeginCommandBuffer(c.cmd, info), "begin command buffer")
}

// submit ends recording, submits (the queue is shared, so under a mutex)
// and waits for the fence.
func (d *device) submit(c *execCtx) error {
	if err := check(vk.EndCommandBuffer(c.cmd), "end command buffer"); err != nil {
		return err
	}
	d.queueMu.Lock()
	r := shimSubmit(d.instance, d.queue, c.cmd, c.fence)
	d.queueMu.Unlock()
	if err := check(r, "queue submit"); err != nil {
		return err
	}
	r = vk.WaitForFences(d.dev, 1, []vk.Fence{c.fence}, vk.True, fenceTimeoutNs)
	if r == vk.Timeout {
		return fmt.Errorf("vk: wait for fence: timed out after %v", time.Duration(fenceTimeoutNs))
	}
	if err := check(r, "wait for fence"); err != nil {
		return err
	}
	return check(vk.ResetFences(d.dev, 1, []vk.Fence{c.fence}), "reset fence")
}

// timestamps reads n timestamps written by the last submission and returns
// the n-1 intervals.
func (d *device) timestamps(c *execCtx, n uint32) ([]time.Duration, error) {
	raw := make([]uint64, n)
	r := vk.GetQueryPoolResults(d.dev, c.qpool, 0, n, uint(8*n), unsafe.Pointer(&raw[0]), 8,
		vk.QueryResultFlags(vk.QueryResult64Bit|vk.QueryResultWaitBit))
	if err := check(r, "read timestamps"); err != nil {
		return nil, err
	}
	out := make([]time.Duration, n-1)
	for i := range out {
		dt := (raw[i+1] - raw[i]) & d.tsMask
		out[i] = time.Duration(float64(dt) * d.tsPeriod)
	}
	return out, nil
}

func (d *device) barrier(cmd vk.CommandBuffer, src, dst vk.AccessFlagBits, srcStage, dstStage vk.PipelineStageFlagBits) {
	shimBarrier(d.instance, cmd, srcStage, dstStage, src, dst)
}

// pipeline returns the compute pipeline of a module specialized with spec,
// building and caching it on first use.
func (d *device) pipeline(module string, spec [numSpec]uint32) (vk.Pipeline, error) {
	d.pipeMu.Lock()
	defer d.pipeMu.Unlock()
	key := pipeKey{module, spec}
	if p, ok := d.pipes[key]; ok {
		return p, nil
	}
	sm, ok := d.modules[module]
	if !ok {
		code, err := shaders.SPIRV(module)
		if err != nil {
			return nil, fmt.Errorf("vk: %w", err)
		}
		words := make([]uint32, len(code)/4)
		for i := range words {
			words[i] = binary.LittleEndian.Uint32(code[4*i:])
		}
		info := &vk.ShaderModuleCreateInfo{
			SType:    vk.StructureTypeShaderModuleCreateInfo,
			CodeSize: uint(len(code)),
			PCode:    words,
		}
		r := vk.CreateShaderModule(d.dev, info, nil, &sm)
		runtime.KeepAlive(words) // the binding passes the code by pointer
		if err := check(r, "create shader module "+module); err != nil {
			return nil, err
		}
		d.modules[module] = sm
	}
	start := time.Now()
	var flags uint32
	if d.pipeStats {
		flags = pipelineCaptureStatistics
	}
	p, r := shimCreatePipeline(d.instance, d.dev, sm, d.layout, spec[:], flags, d.stageFlags(module))
	if err := check(r, fmt.Sprintf("create pipeline %s %v", module, spec)); err != nil {
		return nil, err
	}
	d.logPipeline(module, spec, time.Since(start), p)
	d.pipes[key] = p
	return p, nil
}

// logPipeline appends one line for a pipeline just built to the file named
// by MINGRU_VK_PIPELINE_LOG: module, specialization constants, build time
// and, where the driver gives them (VK_KHR_pipeline_executable_properties),
// its statistics of the compiled code (registers, spills, instruction
// counts: whatever it reports, under its own names). A diagnostic: failing
// to write it is ignored.
func (d *device) logPipeline(module string, spec [numSpec]uint32, took time.Duration, p vk.Pipeline) {
	if d.pipeLog == "" {
		return
	}
	line := fmt.Sprintf("%s\t%v\t%.3f ms", module, spec, float64(took.Microseconds())/1e3)
	if d.pipeStats {
		line += "\t" + shimPipelineStats(d.instance, d.dev, p)
	}
	f, err := os.OpenFile(d.pipeLog, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintln(f, line)
	f.Close()
}

// sliceSize is the number of batch entries whose bindings all fit in the
// bindable range at once.
func (d *device) sliceSize(ks []kernel, B int64) (int64, error) {
	bs := B
	for _, k := range ks {
		for _, o := range k.binds {
			if o.buf == nil {
				continue
			}
			per := o.stride * o.esize
			room := d.maxRange - d.align - 4
			if per > room {
				return 0, &scans.ScanFallback{Backend: "vulkan", Reason: fmt.Sprintf(
					"one batch entry of a tensor needs %d bytes, more than the device can bind (maxStorageBufferRange %d)", per, d.maxRange)}
			}
			if n := room / per; n < bs {
				bs = n
			}
		}
	}
	return bs, nil
}

// dispatchRec is one recorded dispatch.
type dispatchRec struct {
	pipe   vk.Pipeline
	push   [4 + maxBindings]uint32
	infos  [maxBindings]bufferBinding
	gx, gy uint32
}

// run records every kernel over slices of the batch, with a barrier between
// dispatches, optionally poisons the outputs first, submits and waits. It
// returns the time between the timestamps around the dispatches.
func (d *device) run(ks []kernel, B int64, poison bool) (time.Duration, bool, error) {
	bs, err := d.sliceSize(ks, B)
	if err != nil {
		return 0, false, err
	}
	bs = evenSlices(B, bs)
	var recs []dispatchRec
	for b0 := int64(0); b0 < B; b0 += bs {
		n := bs
		if b0+n > B {
			n = B - b0
		}
		for _, k := range ks {
			var r dispatchRec
			r.push[0], r.push[1], r.push[2], r.push[3] = uint32(n), k.T, k.N, k.flags
			even := true
			for i, o := range k.binds {
				if o.buf == nil {
					r.infos[i] = bufferBinding{buf: d.placeholder.buf, offset: 0, rng: uint64(d.placeholder.size)}
					continue
				}
				start := b0 * o.stride * o.esize
				end := (b0 + n) * o.stride * o.esize
				base := start / d.align * d.align
				rng := (end - base + 3) &^ 3
				if base+rng > o.buf.size {
					rng = o.buf.size - base
				}
				r.infos[i] = bufferBinding{buf: o.buf.buf, offset: uint64(base), rng: uint64(rng)}
				r.push[4+i] = uint32((start - base) / o.esize)
				even = even && r.push[4+i]%2 == 0
			}
			spec := k.spec
			if k.wordAligned && even {
				spec[specAligned] = 1
			}
			if strings.HasSuffix(k.module, "_f16") {
				spec[specHWF16] = d.hwF16
			}
			p, err := d.pipeline(k.module, spec)
			if err != nil {
				return 0, false, err
			}
			r.pipe = p
			g := k.groups(n)
			gx := int64(d.maxGroups[0])
			if g < gx {
				gx = g
			}
			if gx < 1 {
				gx = 1
			}
			gy := (g + gx - 1) / gx
			if gy > int64(d.maxGroups[1]) {
				return 0, false, &scans.ScanFallback{Backend: "vulkan", Reason: fmt.Sprintf("%d workgroups exceed the device's dispatch limits", g)}
			}
			r.gx, r.gy = uint32(gx), uint32(gy)
			recs = append(recs, r)
		}
	}

	d.lastDispatches.Store(int64(len(recs)))
	c, err := d.getCtx()
	if err != nil {
		return 0, false, err
	}
	defer d.putCtx(c)
	if err := d.ensureSets(c, len(recs)); err != nil {
		return 0, false, err
	}
	infos := make([]bufferBinding, 0, len(recs)*maxBindings)
	for i := range recs {
		infos = append(infos, recs[i].infos[:]...)
	}
	sets, r := shimWriteSets(d.instance, d.dev, c.dpool, d.dsl, maxBindings, infos)
	if err := check(r, "allocate descriptor sets"); err != nil {
		return 0, false, err
	}

	if err := d.begin(c); err != nil {
		return 0, false, err
	}
	cmd := c.cmd
	if c.hasQry {
		vk.CmdResetQueryPool(cmd, c.qpool, 0, 2)
	}
	if poison {
		for _, k := range ks {
			for _, o := range k.binds {
				if o.buf != nil && o.out {
					vk.CmdFillBuffer(cmd, o.buf.buf, 0, vk.DeviceSize(o.buf.size), o.poison)
				}
			}
		}
		d.barrier(cmd, vk.AccessTransferWriteBit, vk.AccessShaderReadBit|vk.AccessShaderWriteBit,
			vk.PipelineStageTransferBit, vk.PipelineStageComputeShaderBit)
	}
	if c.hasQry {
		vk.CmdWriteTimestamp(cmd, vk.PipelineStageTopOfPipeBit, c.qpool, 0)
	}
	for i := range recs {
		r := &recs[i]
		if i > 0 {
			d.barrier(cmd, vk.AccessShaderWriteBit, vk.AccessShaderReadBit|vk.AccessShaderWriteBit,
				vk.PipelineStageComputeShaderBit, vk.PipelineStageComputeShaderBit)
		}
		vk.CmdBindPipeline(cmd, vk.PipelineBindPointCompute, r.pipe)
		vk.CmdBindDescriptorSets(cmd, vk.PipelineBindPointCompute, d.layout, 0, 1, []vk.DescriptorSet{sets[i]}, 0, nil)
		push := new([4 + maxBindings]uint32)
		*push = r.push
		vk.CmdPushConstants(cmd, d.layout, vk.ShaderStageFlags(vk.ShaderStageComputeBit), 0, pushBytes, unsafe.Pointer(&push[0]))
		vk.CmdDispatch(cmd, r.gx, r.gy, 1)
	}
	if c.hasQry {
		vk.CmdWriteTimestamp(cmd, vk.PipelineStageBottomOfPipeBit, c.qpool, 1)
	}
	if err := d.submit(c); err != nil {
		return 0, false, err
	}
	if err := d.checkGuards(ks); err != nil {
		return 0, false, err
	}
	if !c.hasQry {
		return 0, false, nil
	}
	ts, err := d.timestamps(c, 2)
	if err != nil {
		return 0, false, err
	}
	return ts[0], true, nil
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
			shimCopy(d.instance, c.cmd, d.staging.buf, b.buf, 0, uint64(at)+uint64(off), uint64(words))
		} else {
			shimCopy(d.instance, c.cmd, b.buf, d.staging.buf, uint64(at)+uint64(off), 0, uint64(words))
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
func (d *device) read(b *buffer, data []byte) error  { return d.transfer(b, data, false) }

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

// beginBound starts recording on c with pipeline p bound and one
// descriptor set: bufs at bindings 0, 1, ..., the placeholder at the
// others. The probes, which run one small kernel, record this way.
func (d *device) beginBound(c *execCtx, p vk.Pipeline, bufs ...bufferBinding) error {
	if err := d.ensureSets(c, 1); err != nil {
		return err
	}
	infos := make([]bufferBinding, maxBindings)
	for i := range infos {
		infos[i] = bufferBinding{buf: d.placeholder.buf, rng: uint64(d.placeholder.size)}
	}
	copy(infos, bufs)
	sets, r := shimWriteSets(d.instance, d.dev, c.dpool, d.dsl, maxBindings, infos)
	if err := check(r, "allocate descriptor sets"); err != nil {
		return err
	}
	if err := d.begin(c); err != nil {
		return err
	}
	vk.CmdBindPipeline(c.cmd, vk.PipelineBindPointCompute, p)
	vk.CmdBindDescriptorSets(c.cmd, vk.PipelineBindPointCompute, d.layout, 0, 1, []vk.DescriptorSet{sets[0]}, 0, nil)
	return nil
}

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
