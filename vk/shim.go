//go:build cgo

package vk

// The calls whose structs vulkan-go frees in Go finalizers while the driver
// may still read them (crashes under concurrent use) go through this C shim.

/*
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(void*) == 8, "64-bit targets only");

typedef uint64_t H; // any Vulkan handle on a 64-bit target

typedef struct { int32_t sType; const void* pNext; const char* app; uint32_t appVersion; const char* engine; uint32_t engineVersion; uint32_t apiVersion; } AppInfo;
typedef struct { int32_t sType; const void* pNext; uint32_t flags; const AppInfo* app; uint32_t layerCount; const char* const* layers; uint32_t extCount; const char* const* exts; } InstanceInfo;
typedef struct { int32_t sType; const void* pNext; uint32_t enabledCount; const int32_t* enabled; uint32_t disabledCount; const int32_t* disabled; } ValidationFeatures;
typedef struct { char name[256]; uint32_t specVersion; uint32_t implVersion; char description[256]; } LayerProps;
typedef struct { uint32_t flags; uint32_t count; uint32_t tsBits; uint32_t w, h, d; } QueueFamilyProps;
typedef struct { int32_t sType; const void* pNext; uint32_t flags; uint32_t family; uint32_t count; const float* priorities; } QueueInfo;
typedef struct { int32_t sType; const void* pNext; uint32_t flags; uint32_t queueInfoCount; const QueueInfo* queueInfos; uint32_t layerCount; const char* const* layers; uint32_t extCount; const char* const* exts; const void* features; } DeviceInfo;
typedef struct { uint32_t binding; int32_t type; uint32_t count; uint32_t stages; const void* samplers; } LayoutBinding;
typedef struct { int32_t sType; const void* pNext; uint32_t flags; uint32_t bindingCount; const LayoutBinding* bindings; } SetLayoutInfo;
typedef struct { uint32_t stages; uint32_t offset; uint32_t size; } PushRange;
typedef struct { int32_t sType; const void* pNext; uint32_t flags; uint32_t setLayoutCount; const H* setLayouts; uint32_t pushCount; const PushRange* push; } PipelineLayoutInfo;
typedef struct { uint32_t id; uint32_t offset; size_t size; } SpecEntry;
typedef struct { uint32_t count; const SpecEntry* entries; size_t dataSize; const void* data; } SpecInfo;
typedef struct { int32_t sType; const void* pNext; uint32_t flags; uint32_t stage; H module; const char* name; const SpecInfo* spec; } StageInfo;
typedef struct { int32_t sType; const void* pNext; uint32_t flags; StageInfo stage; H layout; H base; int32_t baseIndex; } ComputeInfo;
typedef struct { int32_t type; uint32_t count; } PoolSize;
typedef struct { int32_t sType; const void* pNext; uint32_t flags; uint32_t maxSets; uint32_t sizeCount; const PoolSize* sizes; } PoolInfo;
typedef struct { int32_t sType; const void* pNext; H pool; uint32_t count; const H* layouts; } SetAllocInfo;
typedef struct { H buffer; uint64_t offset; uint64_t range; } BufferInfo;
typedef struct { int32_t sType; const void* pNext; H set; uint32_t binding; uint32_t element; uint32_t count; int32_t type; const void* images; const BufferInfo* buffers; const void* views; } WriteSet;
typedef struct { int32_t sType; const void* pNext; uint32_t waitCount; const H* waits; const uint32_t* waitStages; uint32_t cmdCount; const H* cmds; uint32_t signalCount; const H* signals; } SubmitInfo;
typedef struct { int32_t sType; const void* pNext; uint32_t src; uint32_t dst; } MemBarrier;
typedef struct { uint64_t src; uint64_t dst; uint64_t size; } CopyRegion;

typedef void* (*GIPA)(H instance, const char* name);
static GIPA gipa;
static void vks_set_gipa(void* p) { gipa = (GIPA)p; }

// Structure types (VkStructureType).
enum {
	ST_APP = 0, ST_INSTANCE = 1, ST_QUEUE = 2, ST_DEVICE = 3, ST_SUBMIT = 4,
	ST_STAGE = 18, ST_COMPUTE = 29, ST_PIPELINE_LAYOUT = 30, ST_SET_LAYOUT = 32,
	ST_POOL = 33, ST_SET_ALLOC = 34, ST_WRITE = 35, ST_MEM_BARRIER = 46,
};
enum { STORAGE_BUFFER = 7, STAGE_COMPUTE = 0x20 };

static int32_t vks_has_layer(const char* name, int* found) {
	int32_t (*f)(uint32_t*, LayerProps*) = gipa(0, "vkEnumerateInstanceLayerProperties");
	*found = 0;
	if (!f) return -3;
	uint32_t n = 0;
	int32_t r = f(&n, NULL);
	if (r < 0) return r;
	LayerProps* p = calloc(n ? n : 1, sizeof(LayerProps));
	r = f(&n, p);
	if (r >= 0) {
		for (uint32_t i = 0; i < n; i++) {
			if (strcmp(p[i].name, name) == 0) *found = 1;
		}
	}
	free(p);
	return r < 0 ? r : 0;
}

static int32_t vks_create_instance(uint32_t api, int validation, H* out) {
	int32_t (*f)(const InstanceInfo*, const void*, H*) = gipa(0, "vkCreateInstance");
	if (!f) return -3;
	AppInfo app = { ST_APP, NULL, "mingru-scans", 1, "mingru-scans", 1, api };
	const char* layers[] = { "VK_LAYER_KHRONOS_validation" };
	const char* exts[] = { "VK_EXT_debug_report", "VK_EXT_validation_features" };
	// Synchronization validation on top of the default checks: missing
	// barriers do not show on a serial CPU driver, but the layer sees them.
	int32_t enables[] = { 4 }; // VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT
	ValidationFeatures vf = { 1000247000, NULL, 1, enables, 0, NULL };
	InstanceInfo info = { ST_INSTANCE, NULL, 0, &app, 0, NULL, 0, NULL };
	if (validation) {
		info.pNext = &vf;
		info.layerCount = 1; info.layers = layers;
		info.extCount = 2; info.exts = exts;
	}
	return f(&info, NULL, out);
}

// vks_instance_version is the loader's instance version (1.0 when it has
// no vkEnumerateInstanceVersion).
static uint32_t vks_instance_version(void) {
	int32_t (*f)(uint32_t*) = gipa(0, "vkEnumerateInstanceVersion");
	uint32_t v = 1u << 22;
	if (f && f(&v) < 0) v = 1u << 22;
	return v;
}

typedef struct { int32_t sType; void* pNext; uint32_t size; uint32_t stages; uint32_t ops; uint32_t quad; } SubgroupProps;
typedef struct { int32_t sType; void* pNext; uint32_t minSize; uint32_t maxSize; uint32_t maxSubgroups; uint32_t stages; } SizeControlProps;
typedef struct { char name[256]; uint32_t specVersion; } ExtProps;

// vks_has_device_ext reports whether the physical device has the named
// extension.
static int vks_has_device_ext(H instance, H phys, const char* name) {
	int32_t (*f)(H, const char*, uint32_t*, ExtProps*) = gipa(instance, "vkEnumerateDeviceExtensionProperties");
	if (!f) return 0;
	uint32_t n = 0;
	if (f(phys, NULL, &n, NULL) < 0) return 0;
	ExtProps* p = calloc(n ? n : 1, sizeof(ExtProps));
	if (!p) return 0;
	int found = 0;
	if (f(phys, NULL, &n, p) >= 0) {
		for (uint32_t i = 0; i < n; i++) {
			if (strcmp(p[i].name, name) == 0) found = 1;
		}
	}
	free(p);
	return found;
}
typedef struct { int32_t sType; void* pNext; char props[4096]; } Props2; // VkPhysicalDeviceProperties and room to spare
typedef struct { int32_t sType; void* pNext; char features[1024]; } Features2; // VkPhysicalDeviceFeatures and room to spare
typedef struct { int32_t sType; void* pNext; uint32_t control; uint32_t full; } SizeControlFeatures; // VkPhysicalDeviceSubgroupSizeControlFeatures

// vks_subgroup reads VkPhysicalDeviceSubgroupProperties (Vulkan 1.1: the
// instance and the device must both be 1.1 or later) and, where the device
// has VK_EXT_subgroup_size_control, the least and greatest subgroup sizes
// it may use (else both are size) and whether it can require full
// subgroups in compute (computeFullSubgroups).
static int vks_subgroup(H instance, H phys, uint32_t* size, uint32_t* minSize, uint32_t* maxSize, uint32_t* stages, uint32_t* ops, int* full) {
	void (*f)(H, Props2*) = gipa(instance, "vkGetPhysicalDeviceProperties2");
	if (!f) return 0;
	SubgroupProps sg;
	memset(&sg, 0, sizeof sg);
	sg.sType = 1000094000; // VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES
	SizeControlProps sc;
	memset(&sc, 0, sizeof sc);
	sc.sType = 1000225000; // VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES
	int control = vks_has_device_ext(instance, phys, "VK_EXT_subgroup_size_control");
	if (control) sg.pNext = &sc;
	Props2* p = calloc(1, sizeof(Props2));
	if (!p) return 0;
	p->sType = 1000059001; // VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2
	p->pNext = &sg;
	f(phys, p);
	free(p);
	*size = sg.size;
	*minSize = (control && sc.minSize > 0 && sc.minSize < sg.size) ? sc.minSize : sg.size;
	*maxSize = (control && sc.maxSize > sg.size) ? sc.maxSize : sg.size;
	*stages = sg.stages;
	*ops = sg.ops;
	*full = 0;
	void (*ff)(H, Features2*) = gipa(instance, "vkGetPhysicalDeviceFeatures2");
	if (control && ff) {
		SizeControlFeatures fc = { 1000225002, NULL, 0, 0 }; // VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES
		Features2* q = calloc(1, sizeof(Features2));
		if (!q) return 0;
		q->sType = 1000059000; // VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2
		q->pNext = &fc;
		ff(phys, q);
		free(q);
		*full = fc.control && fc.full;
	}
	return 1;
}

static uint32_t vks_queue_families(H instance, H phys, QueueFamilyProps* out, uint32_t cap) {
	void (*f)(H, uint32_t*, QueueFamilyProps*) = gipa(instance, "vkGetPhysicalDeviceQueueFamilyProperties");
	if (!f) return 0;
	uint32_t n = 0;
	f(phys, &n, NULL);
	if (n > cap) n = cap;
	f(phys, &n, out);
	return n;
}

typedef struct { int32_t sType; void* pNext; uint32_t on; } ExecFeature; // VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR

// vks_create_device creates the device with one queue of the family. With
// stats, and where the device has VK_KHR_pipeline_executable_properties,
// it enables that extension (for vks_pipeline_stats) and sets *stats to 1.
// With full, it enables VK_EXT_subgroup_size_control's subgroupSizeControl
// and computeFullSubgroups (the caller has checked the device has both).
static int32_t vks_create_device(H instance, H phys, uint32_t family, int* stats, int full, H* out) {
	int32_t (*f)(H, const DeviceInfo*, const void*, H*) = gipa(instance, "vkCreateDevice");
	if (!f) return -3;
	float prio = 1.0f;
	QueueInfo q = { ST_QUEUE, NULL, 0, family, 1, &prio };
	DeviceInfo info = { ST_DEVICE, NULL, 0, 1, &q, 0, NULL, 0, NULL, NULL };
	const char* exts[2];
	uint32_t n = 0;
	const char* statsExt = "VK_KHR_pipeline_executable_properties";
	ExecFeature feat = { 1000269000, NULL, 1 }; // VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR
	SizeControlFeatures fc = { 1000225002, NULL, 1, 1 }; // VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES
	const void* chain = NULL;
	if (full) {
		exts[n++] = "VK_EXT_subgroup_size_control";
		chain = &fc;
	}
	if (*stats && vks_has_device_ext(instance, phys, statsExt)) {
		exts[n++] = statsExt;
		feat.pNext = (void*)chain;
		chain = &feat;
	} else {
		*stats = 0;
	}
	info.pNext = chain;
	info.extCount = n;
	info.exts = n > 0 ? exts : NULL;
	return f(phys, &info, NULL, out);
}

typedef struct { int32_t sType; const void* pNext; H pipeline; } PipelineInfo; // VkPipelineInfoKHR
typedef struct { int32_t sType; void* pNext; uint32_t stages; char name[256]; char description[256]; uint32_t subgroupSize; } ExecProps;
typedef struct { int32_t sType; const void* pNext; H pipeline; uint32_t index; } ExecInfo;
typedef struct { int32_t sType; void* pNext; char name[256]; char description[256]; int32_t format; union { uint32_t b; int64_t i; uint64_t u; double f; } value; } ExecStat;

// vks_pipeline_stats writes the driver's statistics of a pipeline created
// with CAPTURE_STATISTICS into buf (cap bytes, NUL-terminated) as
// "name=value" items separated by "; ", each executable's prefixed by its
// name when there are several. Returns 0, or a negative VkResult.
static int32_t vks_pipeline_stats(H instance, H dev, H pipeline, char* buf, size_t cap) {
	int32_t (*fp)(H, const PipelineInfo*, uint32_t*, ExecProps*) = gipa(instance, "vkGetPipelineExecutablePropertiesKHR");
	int32_t (*fs)(H, const ExecInfo*, uint32_t*, ExecStat*) = gipa(instance, "vkGetPipelineExecutableStatisticsKHR");
	buf[0] = 0;
	if (!fp || !fs) return -3;
	PipelineInfo pi = { 1000269001, NULL, pipeline };
	ExecProps props[4];
	uint32_t n = 4;
	memset(props, 0, sizeof props);
	for (uint32_t i = 0; i < 4; i++) props[i].sType = 1000269002;
	int32_t r = fp(dev, &pi, &n, props);
	if (r < 0) return r;
	size_t used = 0;
	for (uint32_t e = 0; e < n; e++) {
		ExecInfo ei = { 1000269003, NULL, pipeline, e };
		ExecStat st[32];
		uint32_t m = 32;
		memset(st, 0, sizeof st);
		for (uint32_t i = 0; i < 32; i++) st[i].sType = 1000269004;
		r = fs(dev, &ei, &m, st);
		if (r < 0) return r;
		for (uint32_t i = 0; i < m && used + 1 < cap; i++) {
			const char* sep = used ? "; " : "";
			char pre[260] = "";
			if (n > 1) snprintf(pre, sizeof pre, "%s ", props[e].name);
			int w;
			switch (st[i].format) {
			case 0: w = snprintf(buf + used, cap - used, "%s%s%s=%s", sep, pre, st[i].name, st[i].value.b ? "true" : "false"); break;
			case 1: w = snprintf(buf + used, cap - used, "%s%s%s=%lld", sep, pre, st[i].name, (long long)st[i].value.i); break;
			case 2: w = snprintf(buf + used, cap - used, "%s%s%s=%llu", sep, pre, st[i].name, (unsigned long long)st[i].value.u); break;
			default: w = snprintf(buf + used, cap - used, "%s%s%s=%g", sep, pre, st[i].name, st[i].value.f); break;
			}
			if (w < 0) break;
			used += (size_t)w < cap - used ? (size_t)w : cap - used - 1;
		}
	}
	return 0;
}

static int32_t vks_create_layouts(H instance, H dev, uint32_t bindings, uint32_t pushBytes, H* dsl, H* layout) {
	int32_t (*fs)(H, const SetLayoutInfo*, const void*, H*) = gipa(instance, "vkCreateDescriptorSetLayout");
	int32_t (*fp)(H, const PipelineLayoutInfo*, const void*, H*) = gipa(instance, "vkCreatePipelineLayout");
	if (!fs || !fp) return -3;
	LayoutBinding b[32];
	if (bindings > 32) return -3;
	for (uint32_t i = 0; i < bindings; i++) {
		LayoutBinding x = { i, STORAGE_BUFFER, 1, STAGE_COMPUTE, NULL };
		b[i] = x;
	}
	SetLayoutInfo si = { ST_SET_LAYOUT, NULL, 0, bindings, b };
	int32_t r = fs(dev, &si, NULL, dsl);
	if (r < 0) return r;
	PushRange pr = { STAGE_COMPUTE, 0, pushBytes };
	PipelineLayoutInfo pi = { ST_PIPELINE_LAYOUT, NULL, 0, 1, dsl, 1, &pr };
	return fp(dev, &pi, NULL, layout);
}

// vks_create_pipeline creates the compute pipeline of module's "main" with
// the given specialization constants (ids 0..nspec-1), pipeline create
// flags and shader stage create flags.
static int32_t vks_create_pipeline(H instance, H dev, H module, H layout, const uint32_t* spec, uint32_t nspec, uint32_t flags, uint32_t stageFlags, H* out) {
	int32_t (*f)(H, H, uint32_t, const ComputeInfo*, const void*, H*) = gipa(instance, "vkCreateComputePipelines");
	if (!f) return -3;
	SpecEntry e[32];
	uint32_t data[32];
	if (nspec > 32) return -3;
	for (uint32_t i = 0; i < nspec; i++) {
		SpecEntry x = { i, 4 * i, 4 };
		e[i] = x;
		data[i] = spec[i];
	}
	SpecInfo si = { nspec, e, 4 * nspec, data };
	ComputeInfo ci;
	memset(&ci, 0, sizeof ci);
	ci.sType = ST_COMPUTE;
	ci.flags = flags;
	ci.stage.sType = ST_STAGE;
	ci.stage.flags = stageFlags;
	ci.stage.stage = STAGE_COMPUTE;
	ci.stage.module = module;
	ci.stage.name = "main";
	ci.stage.spec = &si;
	ci.layout = layout;
	ci.baseIndex = -1;
	return f(dev, 0, 1, &ci, NULL, out);
}

static int32_t vks_create_pool(H instance, H dev, uint32_t sets, uint32_t descriptors, H* out) {
	int32_t (*f)(H, const PoolInfo*, const void*, H*) = gipa(instance, "vkCreateDescriptorPool");
	if (!f) return -3;
	PoolSize ps = { STORAGE_BUFFER, descriptors };
	PoolInfo info = { ST_POOL, NULL, 0, sets, 1, &ps };
	return f(dev, &info, NULL, out);
}

// vks_write_sets allocates n sets of one layout and points binding j of
// set i at buffers[i*bindings + j].
static int32_t vks_write_sets(H instance, H dev, H pool, H layout, uint32_t n, uint32_t bindings, const BufferInfo* buffers, H* sets) {
	int32_t (*fa)(H, const SetAllocInfo*, H*) = gipa(instance, "vkAllocateDescriptorSets");
	void (*fu)(H, uint32_t, const WriteSet*, uint32_t, const void*) = gipa(instance, "vkUpdateDescriptorSets");
	if (!fa || !fu) return -3;
	H* layouts = malloc(sizeof(H) * n);
	WriteSet* w = calloc((size_t)n * bindings, sizeof(WriteSet));
	if (!layouts || !w) { free(layouts); free(w); return -1; }
	for (uint32_t i = 0; i < n; i++) layouts[i] = layout;
	SetAllocInfo ai = { ST_SET_ALLOC, NULL, pool, n, layouts };
	int32_t r = fa(dev, &ai, sets);
	if (r >= 0) {
		for (uint32_t i = 0; i < n; i++) {
			for (uint32_t j = 0; j < bindings; j++) {
				WriteSet* x = &w[i * bindings + j];
				x->sType = ST_WRITE;
				x->set = sets[i];
				x->binding = j;
				x->count = 1;
				x->type = STORAGE_BUFFER;
				x->buffers = &buffers[i * bindings + j];
			}
		}
		fu(dev, n * bindings, w, 0, NULL);
	}
	free(layouts);
	free(w);
	return r;
}

static int32_t vks_submit(H instance, H queue, H cmd, H fence) {
	int32_t (*f)(H, uint32_t, const SubmitInfo*, H) = gipa(instance, "vkQueueSubmit");
	if (!f) return -3;
	SubmitInfo s = { ST_SUBMIT, NULL, 0, NULL, NULL, 1, &cmd, 0, NULL };
	return f(queue, 1, &s, fence);
}

static void vks_barrier(H instance, H cmd, uint32_t srcStage, uint32_t dstStage, uint32_t src, uint32_t dst) {
	void (*f)(H, uint32_t, uint32_t, uint32_t, uint32_t, const MemBarrier*, uint32_t, const void*, uint32_t, const void*) = gipa(instance, "vkCmdPipelineBarrier");
	MemBarrier m = { ST_MEM_BARRIER, NULL, src, dst };
	f(cmd, srcStage, dstStage, 0, 1, &m, 0, NULL, 0, NULL);
}

static void vks_copy(H instance, H cmd, H srcBuf, H dstBuf, uint64_t src, uint64_t dst, uint64_t size) {
	void (*f)(H, H, H, uint32_t, const CopyRegion*) = gipa(instance, "vkCmdCopyBuffer");
	CopyRegion r = { src, dst, size };
	f(cmd, srcBuf, dstBuf, 1, &r);
}
*/
import "C"

import (
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// h converts any Vulkan handle of the binding to the shim's 64-bit form.
func h[T any](x T) C.H { return *(*C.H)(unsafe.Pointer(&x)) }

// fromH converts back.
func fromH[T any](x C.H) T { return *(*T)(unsafe.Pointer(&x)) }

func shimSetLoader(gipa unsafe.Pointer) { C.vks_set_gipa(gipa) }

func shimHasLayer(name string) (bool, vk.Result) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var found C.int
	r := C.vks_has_layer(cname, &found)
	return found != 0, vk.Result(r)
}

func shimCreateInstance(api uint32, validation bool) (vk.Instance, vk.Result) {
	v := C.int(0)
	if validation {
		v = 1
	}
	var out C.H
	r := C.vks_create_instance(C.uint32_t(api), v, &out)
	return fromH[vk.Instance](out), vk.Result(r)
}

func shimInstanceVersion() uint32 { return uint32(C.vks_instance_version()) }

// subgroupProps is what shimSubgroup reads: the device's subgroup size,
// the least and greatest sizes its compiler may choose instead
// (VK_EXT_subgroup_size_control; the size itself without that extension),
// the shader stages that have subgroup operations, the operations
// (VkSubgroupFeatureFlags), and whether pipelines can require full
// subgroups in compute.
type subgroupProps struct {
	size, minSize, maxSize, stages, ops uint32
	full                                bool
}

// shimSubgroup reads the device's subgroup properties; ok is false when the
// query is not available.
func shimSubgroup(inst vk.Instance, phys vk.PhysicalDevice) (p subgroupProps, ok bool) {
	var sz, mn, mx, st, op C.uint32_t
	var full C.int
	if C.vks_subgroup(h(inst), h(phys), &sz, &mn, &mx, &st, &op, &full) == 0 {
		return p, false
	}
	return subgroupProps{uint32(sz), uint32(mn), uint32(mx), uint32(st), uint32(op), full != 0}, true
}

type queueFamily struct {
	flags, count, tsBits uint32
}

func shimQueueFamilies(inst vk.Instance, phys vk.PhysicalDevice) []queueFamily {
	var props [64]C.QueueFamilyProps
	n := C.vks_queue_families(h(inst), h(phys), &props[0], 64)
	out := make([]queueFamily, n)
	for i := range out {
		out[i] = queueFamily{uint32(props[i].flags), uint32(props[i].count), uint32(props[i].tsBits)}
	}
	return out
}

// shimCreateDevice creates the device. With stats it also enables the
// driver's pipeline statistics where the device has them, and reports
// whether it did; with full, pipelines that require full subgroups.
func shimCreateDevice(inst vk.Instance, phys vk.PhysicalDevice, family uint32, stats, full bool) (vk.Device, bool, vk.Result) {
	var out C.H
	cs, cf := C.int(0), C.int(0)
	if stats {
		cs = 1
	}
	if full {
		cf = 1
	}
	r := C.vks_create_device(h(inst), h(phys), C.uint32_t(family), &cs, cf, &out)
	return fromH[vk.Device](out), cs != 0, vk.Result(r)
}

// pipelineCaptureStatistics is VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR.
const pipelineCaptureStatistics = 0x40

// shimPipelineStats returns the driver's statistics of a pipeline created
// with pipelineCaptureStatistics ("name=value; ..."), or "" where it gives
// none.
func shimPipelineStats(inst vk.Instance, dev vk.Device, p vk.Pipeline) string {
	const size = 4096
	buf := (*C.char)(C.malloc(size))
	defer C.free(unsafe.Pointer(buf))
	if C.vks_pipeline_stats(h(inst), h(dev), h(p), buf, size) < 0 {
		return ""
	}
	return C.GoString(buf)
}

func shimCreateLayouts(inst vk.Instance, dev vk.Device, bindings, pushBytes uint32) (vk.DescriptorSetLayout, vk.PipelineLayout, vk.Result) {
	var dsl, pl C.H
	r := C.vks_create_layouts(h(inst), h(dev), C.uint32_t(bindings), C.uint32_t(pushBytes), &dsl, &pl)
	return fromH[vk.DescriptorSetLayout](dsl), fromH[vk.PipelineLayout](pl), vk.Result(r)
}

func shimCreatePipeline(inst vk.Instance, dev vk.Device, module vk.ShaderModule, layout vk.PipelineLayout, spec []uint32, flags, stageFlags uint32) (vk.Pipeline, vk.Result) {
	cspec := make([]C.uint32_t, len(spec))
	for i, s := range spec {
		cspec[i] = C.uint32_t(s)
	}
	var out C.H
	r := C.vks_create_pipeline(h(inst), h(dev), h(module), h(layout), &cspec[0], C.uint32_t(len(spec)), C.uint32_t(flags), C.uint32_t(stageFlags), &out)
	return fromH[vk.Pipeline](out), vk.Result(r)
}

func shimCreatePool(inst vk.Instance, dev vk.Device, sets, descriptors uint32) (vk.DescriptorPool, vk.Result) {
	var out C.H
	r := C.vks_create_pool(h(inst), h(dev), C.uint32_t(sets), C.uint32_t(descriptors), &out)
	return fromH[vk.DescriptorPool](out), vk.Result(r)
}

// bufferBinding is one descriptor: a buffer range.
type bufferBinding struct {
	buf         vk.Buffer
	offset, rng uint64
}

// shimWriteSets allocates one set per group of `bindings` descriptors in
// infos and writes them.
func shimWriteSets(inst vk.Instance, dev vk.Device, pool vk.DescriptorPool, layout vk.DescriptorSetLayout, bindings int, infos []bufferBinding) ([]vk.DescriptorSet, vk.Result) {
	n := len(infos) / bindings
	cinfos := (*C.BufferInfo)(C.malloc(C.size_t(len(infos)) * C.size_t(unsafe.Sizeof(C.BufferInfo{}))))
	defer C.free(unsafe.Pointer(cinfos))
	ci := unsafe.Slice(cinfos, len(infos))
	for i, b := range infos {
		ci[i] = C.BufferInfo{buffer: h(b.buf), offset: C.uint64_t(b.offset), _range: C.uint64_t(b.rng)}
	}
	csets := make([]C.H, n)
	r := C.vks_write_sets(h(inst), h(dev), h(pool), h(layout), C.uint32_t(n), C.uint32_t(bindings), cinfos, &csets[0])
	sets := make([]vk.DescriptorSet, n)
	for i := range sets {
		sets[i] = fromH[vk.DescriptorSet](csets[i])
	}
	return sets, vk.Result(r)
}

func shimSubmit(inst vk.Instance, q vk.Queue, cmd vk.CommandBuffer, fence vk.Fence) vk.Result {
	return vk.Result(C.vks_submit(h(inst), h(q), h(cmd), h(fence)))
}

func shimBarrier(inst vk.Instance, cmd vk.CommandBuffer, srcStage, dstStage vk.PipelineStageFlagBits, src, dst vk.AccessFlagBits) {
	C.vks_barrier(h(inst), h(cmd), C.uint32_t(srcStage), C.uint32_t(dstStage), C.uint32_t(src), C.uint32_t(dst))
}

func shimCopy(inst vk.Instance, cmd vk.CommandBuffer, src, dst vk.Buffer, srcOff, dstOff, size uint64) {
	C.vks_copy(h(inst), h(cmd), h(src), h(dst), C.uint64_t(srcOff), C.uint64_t(dstOff), C.uint64_t(size))
}
