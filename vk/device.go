//go:build cgo

package vk

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"

	"github.com/mingru/scans/internal/pool"
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
	holes         int         // placeholder bindings a command buffer may hold between two barriers
	holeBytes     int64       // bytes of the placeholder each takes
	queueMu       sync.Locker // held around every submission to queue
	external      bool        // the instance and device are the caller's (NewFrom): not destroyed
	pipeMu        sync.Mutex
	pipes         map[pipeKey]vk.Pipeline
	pipeLog       string // file receiving one line per pipeline built ("" for none)
	pipeStats     bool   // pipelines are built with the driver's statistics (for pipeLog)
	modules       map[string]vk.ShaderModule
	ctxMu         sync.Mutex
	ctxFree       []*execCtx
	ctxAll        []*execCtx // every context made, free or in flight (destroy frees them)
	ctxTick       uint64     // counts ctxFor's takes (execCtx.used)
	stageMu       sync.Mutex
	staging       *buffer
	stagePtr      unsafe.Pointer
	memMu         sync.Mutex
	held, peak    int64
	cache         pool.Cache[*buffer]  // released buffers by size class
	live          map[*buffer]struct{} // buffers alloc handed out and free has not taken back
	closed        bool                 // set by close: free releases to the driver

	lastDispatches atomic.Int64 // dispatches recorded by the last run (tests)
	lastBarriers   atomic.Int64 // barriers between dispatches in the last recording (tests)
	replays        atomic.Int64 // synchronous calls that submitted a held recording (tests)
	stampReads     atomic.Int64 // timestamp reads of synchronous calls (tests)
	// bufGen counts buffers destroyed and caller buffers wrapped: a held
	// recording made before it changed may bind a buffer handle that now
	// names another buffer, so it is not submitted again (see prepare).
	bufGen atomic.Uint64
	// noReplay records every synchronous call anew (tests, benchmarks).
	noReplay bool
	// skipBarriers leaves out the barriers between dispatches, so that a
	// test sees the validation layer report the hazards (tests).
	skipBarriers bool

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
	d := newDevice(cfg, &sync.Mutex{})
	defer func() {
		if err != nil {
			d.destroy()
		}
	}()
	if err := d.createInstance(cfg.validation); err != nil {
		return nil, err
	}
	pick, err := d.choose(cfg.device)
	if err != nil {
		return nil, err
	}
	d.describe(pick)
	fam, _ := computeFamily(d.instance, d.phys)
	d.useFamily(fam)
	if cfg.noUnified {
		d.unified = false
	}
	if err := d.createDevice(); err != nil {
		return nil, err
	}
	return d, d.prepare(cfg)
}

// newDevice is a device not yet opened, with the settings of cfg and the
// lock held around submissions.
func newDevice(cfg config, queueLock sync.Locker) *device {
	return &device{pipes: map[pipeKey]vk.Pipeline{}, modules: map[string]vk.ShaderModule{}, pipeLog: cfg.pipeLog, guard: cfg.guard,
		queueMu: queueLock}
}

// prepare makes what every kernel needs on an opened device, the
// descriptor set and pipeline layouts first, and runs the probes.
func (d *device) prepare(cfg config) (err error) {
	if cfg.maxRange > 0 && cfg.maxRange < d.maxRange {
		d.maxRange = cfg.maxRange
	}
	d.stagingSize = stagingDefault
	if cfg.stagingSize > 0 {
		d.stagingSize = (cfg.stagingSize + 3) &^ 3
	}
	dsl, pl, r := shimCreateLayouts(d.instance, d.dev, maxBindings, pushBytes)
	if err := check(r, "create descriptor set and pipeline layouts"); err != nil {
		return err
	}
	d.dsl, d.layout = dsl, pl
	// The placeholder holds holes of holeBytes (at least 64 bytes, on
	// the offset alignment), one for each absent operand bound since a
	// command buffer's last barrier (record).
	d.holeBytes = (max(64, d.align) + d.align - 1) / d.align * d.align
	d.holes = 128
	if d.placeholder, err = d.allocRaw(int64(d.holes)*d.holeBytes, false); err != nil {
		return fmt.Errorf("vk: placeholder buffer: %w", err)
	}
	if err := d.probeSubgroups(); err != nil {
		return err
	}
	if cfg.softF16 {
		d.narrowing = "integer rounding (software conversions asked for)"
		return nil
	}
	exact, err := d.probeF16()
	if err != nil {
		return err
	}
	if exact {
		d.hwF16 |= hwWiden
	}
	return d.chooseNarrowing(cfg.hwNarrow)
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

// candidates lists the physical devices in the driver's order.
func (d *device) candidates() ([]candidate, error) {
	var n uint32
	if err := check(vk.EnumeratePhysicalDevices(d.instance, &n, nil), "enumerate physical devices"); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errors.New("no Vulkan device found")
	}
	physs := make([]vk.PhysicalDevice, n)
	if err := check(vk.EnumeratePhysicalDevices(d.instance, &n, physs), "enumerate physical devices"); err != nil {
		return nil, err
	}
	var cands []candidate
	for i, p := range physs[:n] {
		var props vk.PhysicalDeviceProperties
		vk.GetPhysicalDeviceProperties(p, &props)
		props.Deref()
		cands = append(cands, candidate{phys: p, props: props, index: i, name: cstr(props.DeviceName[:])})
	}
	return cands, nil
}

// choose picks the physical device: want (an index into the enumeration,
// or a case-insensitive substring of the name) when set, else discrete >
// integrated > virtual > CPU, first enumerated on ties.
func (d *device) choose(want string) (*candidate, error) {
	cands, err := d.candidates()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, c := range cands {
		names = append(names, fmt.Sprintf("%d: %s", c.index, c.name))
	}
	var pick *candidate
	if want != "" {
		if idx, err := strconv.Atoi(want); err == nil {
			if idx < 0 || idx >= len(cands) {
				return nil, fmt.Errorf("device %s is out of range (devices: %s)", want, strings.Join(names, "; "))
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
				return nil, fmt.Errorf("device %q matches no device (devices: %s)", want, strings.Join(names, "; "))
			}
		}
		if _, ok := computeFamily(d.instance, pick.phys); !ok {
			return nil, fmt.Errorf("device %s has no compute queue", pick.name)
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
			return nil, fmt.Errorf("no Vulkan device with a compute queue (devices: %s)", strings.Join(names, "; "))
		}
	}
	return pick, nil
}

// describe records the chosen physical device and its limits.
func (d *device) describe(pick *candidate) {
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
}

// useFamily records the queue family the device's queue is of.
func (d *device) useFamily(fam family) {
	d.qfam = fam.index
	d.hasTimestamps = false
	if fam.tsBits > 0 {
		d.hasTimestamps = true
		if fam.tsBits >= 64 {
			d.tsMask = math.MaxUint64
		} else {
			d.tsMask = 1<<fam.tsBits - 1
		}
	}
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
	return nil
}

// destroy frees everything the device holds (when opening fails, and at
// Close).
func (d *device) destroy() {
	if d.dev != nil {
		if d.external {
			// The caller may use the device's other queues: wait for
			// this one only.
			d.queueMu.Lock()
			vk.QueueWaitIdle(d.queue)
			d.queueMu.Unlock()
		} else {
			vk.DeviceWaitIdle(d.dev)
		}
		d.freeAll()
		for _, c := range d.ctxAll {
			d.settle(c) // LastKernelTime stays true after Close
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
			d.freeRaw(d.placeholder)
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
		if !d.external {
			vk.DestroyDevice(d.dev, nil)
		}
	}
	if d.instance != nil && !d.external {
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
