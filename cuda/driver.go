//go:build cuda

package cuda

/*
#cgo LDFLAGS: -ldl
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

// The driver API, resolved from libcuda.so.1 at run time. The pointer
// types are those of cuda.h's declarations; the symbols are named with
// their versioned suffixes (cuda.h maps cuMemAlloc to cuMemAlloc_v2 and so
// on; the unsuffixed symbols are the legacy 32-bit forms).
static void *scans_lib;
static __typeof__(&cuInit) p_cuInit;
static __typeof__(&cuDriverGetVersion) p_cuDriverGetVersion;
static __typeof__(&cuGetErrorName) p_cuGetErrorName;
static __typeof__(&cuGetErrorString) p_cuGetErrorString;
static __typeof__(&cuDeviceGetCount) p_cuDeviceGetCount;
static __typeof__(&cuDeviceGet) p_cuDeviceGet;
static __typeof__(&cuDeviceGetName) p_cuDeviceGetName;
static __typeof__(&cuDeviceGetAttribute) p_cuDeviceGetAttribute;
static __typeof__(&cuDevicePrimaryCtxRetain) p_cuDevicePrimaryCtxRetain;
static __typeof__(&cuCtxSetCurrent) p_cuCtxSetCurrent;
static __typeof__(&cuCtxSynchronize) p_cuCtxSynchronize;
static __typeof__(&cuModuleLoadDataEx) p_cuModuleLoadDataEx;
static __typeof__(&cuModuleGetFunction) p_cuModuleGetFunction;
static __typeof__(&cuMemAlloc) p_cuMemAlloc;
static __typeof__(&cuMemFree) p_cuMemFree;
static __typeof__(&cuMemcpyHtoD) p_cuMemcpyHtoD;
static __typeof__(&cuMemcpyDtoH) p_cuMemcpyDtoH;
static __typeof__(&cuMemcpyDtoDAsync) p_cuMemcpyDtoDAsync;
static __typeof__(&cuMemsetD32) p_cuMemsetD32;
static __typeof__(&cuMemsetD16) p_cuMemsetD16;
static __typeof__(&cuLaunchKernel) p_cuLaunchKernel;
static __typeof__(&cuEventCreate) p_cuEventCreate;
static __typeof__(&cuEventRecord) p_cuEventRecord;
static __typeof__(&cuEventSynchronize) p_cuEventSynchronize;
static __typeof__(&cuEventElapsedTime) p_cuEventElapsedTime;
static __typeof__(&cuStreamCreate) p_cuStreamCreate;
static __typeof__(&cuStreamSynchronize) p_cuStreamSynchronize;
static __typeof__(&cuStreamDestroy) p_cuStreamDestroy;
static __typeof__(&cuEventDestroy) p_cuEventDestroy;
static __typeof__(&cuDeviceTotalMem) p_cuDeviceTotalMem;
static __typeof__(&cuMemGetAddressRange) p_cuMemGetAddressRange;
static __typeof__(&cuPointerGetAttribute) p_cuPointerGetAttribute;
static __typeof__(&cuStreamWaitEvent) p_cuStreamWaitEvent;
static __typeof__(&cuStreamGetCtx) p_cuStreamGetCtx;
static __typeof__(&cuMemsetD32Async) p_cuMemsetD32Async;

// scans_open loads libcuda.so.1 and resolves every entry point. It
// returns NULL on success, or a message (static or dlerror's).
static const char *scans_open(void) {
	if (scans_lib != NULL) {
		return NULL;
	}
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		const char *e = dlerror();
		return e != NULL ? e : "dlopen libcuda.so.1 failed";
	}
#define LOAD(var, sym)                                       \
	var = (__typeof__(var))dlsym(lib, sym);                  \
	if (var == NULL) {                                       \
		return "libcuda.so.1 has no " sym " (driver too old)"; \
	}
	LOAD(p_cuInit, "cuInit")
	LOAD(p_cuDriverGetVersion, "cuDriverGetVersion")
	LOAD(p_cuGetErrorName, "cuGetErrorName")
	LOAD(p_cuGetErrorString, "cuGetErrorString")
	LOAD(p_cuDeviceGetCount, "cuDeviceGetCount")
	LOAD(p_cuDeviceGet, "cuDeviceGet")
	LOAD(p_cuDeviceGetName, "cuDeviceGetName")
	LOAD(p_cuDeviceGetAttribute, "cuDeviceGetAttribute")
	LOAD(p_cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
	LOAD(p_cuCtxSetCurrent, "cuCtxSetCurrent")
	LOAD(p_cuCtxSynchronize, "cuCtxSynchronize")
	LOAD(p_cuModuleLoadDataEx, "cuModuleLoadDataEx")
	LOAD(p_cuModuleGetFunction, "cuModuleGetFunction")
	LOAD(p_cuMemAlloc, "cuMemAlloc_v2")
	LOAD(p_cuMemFree, "cuMemFree_v2")
	LOAD(p_cuMemcpyHtoD, "cuMemcpyHtoD_v2")
	LOAD(p_cuMemcpyDtoH, "cuMemcpyDtoH_v2")
	LOAD(p_cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2")
	LOAD(p_cuMemsetD32, "cuMemsetD32_v2")
	LOAD(p_cuMemsetD16, "cuMemsetD16_v2")
	LOAD(p_cuLaunchKernel, "cuLaunchKernel")
	LOAD(p_cuEventCreate, "cuEventCreate")
	LOAD(p_cuEventRecord, "cuEventRecord")
	LOAD(p_cuEventSynchronize, "cuEventSynchronize")
	LOAD(p_cuEventElapsedTime, "cuEventElapsedTime")
	LOAD(p_cuStreamCreate, "cuStreamCreate")
	LOAD(p_cuStreamSynchronize, "cuStreamSynchronize")
	LOAD(p_cuStreamDestroy, "cuStreamDestroy_v2")
	LOAD(p_cuEventDestroy, "cuEventDestroy_v2")
	LOAD(p_cuDeviceTotalMem, "cuDeviceTotalMem_v2")
	LOAD(p_cuMemGetAddressRange, "cuMemGetAddressRange_v2")
	LOAD(p_cuPointerGetAttribute, "cuPointerGetAttribute")
	LOAD(p_cuStreamWaitEvent, "cuStreamWaitEvent")
	LOAD(p_cuStreamGetCtx, "cuStreamGetCtx")
	LOAD(p_cuMemsetD32Async, "cuMemsetD32Async")
#undef LOAD
	scans_lib = lib;
	return NULL;
}

static CUresult scans_init(void) { return p_cuInit(0); }
static CUresult scans_driver_version(int *v) { return p_cuDriverGetVersion(v); }
static const char *scans_error_name(CUresult r) {
	const char *s = NULL;
	if (p_cuGetErrorName == NULL || p_cuGetErrorName(r, &s) != CUDA_SUCCESS) {
		return NULL;
	}
	return s;
}
static const char *scans_error_string(CUresult r) {
	const char *s = NULL;
	if (p_cuGetErrorString == NULL || p_cuGetErrorString(r, &s) != CUDA_SUCCESS) {
		return NULL;
	}
	return s;
}
static CUresult scans_device_count(int *n) { return p_cuDeviceGetCount(n); }
static CUresult scans_device_get(CUdevice *d, int ordinal) { return p_cuDeviceGet(d, ordinal); }
static CUresult scans_device_name(char *name, int len, CUdevice d) { return p_cuDeviceGetName(name, len, d); }
static CUresult scans_device_total_mem(size_t *n, CUdevice d) { return p_cuDeviceTotalMem(n, d); }
static CUresult scans_device_attribute(int *v, int attr, CUdevice d) {
	return p_cuDeviceGetAttribute(v, (CUdevice_attribute)attr, d);
}
static CUresult scans_ctx_open(CUcontext *ctx, CUdevice d) {
	CUresult r = p_cuDevicePrimaryCtxRetain(ctx, d);
	if (r != CUDA_SUCCESS) {
		return r;
	}
	return p_cuCtxSetCurrent(*ctx);
}
static CUresult scans_ctx_set_current(CUcontext ctx) { return p_cuCtxSetCurrent(ctx); }
static CUresult scans_ctx_synchronize(void) { return p_cuCtxSynchronize(); }
static CUresult scans_stream_create(CUstream *s, unsigned int flags) { return p_cuStreamCreate(s, flags); }
static CUresult scans_stream_wait(CUstream s, CUevent e) { return p_cuStreamWaitEvent(s, e, 0); }
static CUresult scans_stream_ctx(CUstream s, CUcontext *ctx) { return p_cuStreamGetCtx(s, ctx); }
static CUresult scans_stream_synchronize(CUstream s) { return p_cuStreamSynchronize(s); }
static CUresult scans_stream_destroy(CUstream s) { return p_cuStreamDestroy(s); }
static CUresult scans_module_load(CUmodule *m, const char *image, char *log, unsigned int logsize) {
	CUjit_option opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
	void *vals[2] = {log, (void *)(uintptr_t)logsize};
	return p_cuModuleLoadDataEx(m, image, 2, opts, vals);
}
static CUresult scans_module_function(CUfunction *f, CUmodule m, const char *name) {
	return p_cuModuleGetFunction(f, m, name);
}
static CUresult scans_mem_alloc(CUdeviceptr *p, size_t n) { return p_cuMemAlloc(p, n); }
static CUresult scans_mem_free(CUdeviceptr p) { return p_cuMemFree(p); }
static CUresult scans_mem_range(CUdeviceptr *base, size_t *size, CUdeviceptr p) {
	return p_cuMemGetAddressRange(base, size, p);
}
static CUresult scans_pointer_context(CUcontext *ctx, CUdeviceptr p) {
	return p_cuPointerGetAttribute(ctx, CU_POINTER_ATTRIBUTE_CONTEXT, p);
}
static CUresult scans_htod(CUdeviceptr dst, const void *src, size_t n) { return p_cuMemcpyHtoD(dst, src, n); }
static CUresult scans_dtoh(void *dst, CUdeviceptr src, size_t n) { return p_cuMemcpyDtoH(dst, src, n); }
static CUresult scans_dtod(CUdeviceptr dst, CUdeviceptr src, size_t n) {
	return p_cuMemcpyDtoDAsync(dst, src, n, (CUstream)0);
}
static CUresult scans_memset32(CUdeviceptr p, unsigned int v, size_t n) { return p_cuMemsetD32(p, v, n); }
static CUresult scans_memset32_async(CUdeviceptr p, unsigned int v, size_t n, CUstream s) {
	return p_cuMemsetD32Async(p, v, n, s);
}
static CUresult scans_memset16(CUdeviceptr p, unsigned short v, size_t n) { return p_cuMemsetD16(p, v, n); }

// scans_launch launches f on stream s (0: the default stream) with its
// parameters packed in one buffer (every parameter of the scan kernels is
// 8 bytes).
static CUresult scans_launch(CUstream s, CUfunction f, unsigned int grid, unsigned int bx, unsigned int by,
                             unsigned int shared, void *params, size_t size) {
	if (size == 0) {
		return p_cuLaunchKernel(f, grid, 1, 1, bx, by, 1, shared, s, NULL, NULL);
	}
	void *config[5] = {CU_LAUNCH_PARAM_BUFFER_POINTER, params, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
	                   CU_LAUNCH_PARAM_END};
	return p_cuLaunchKernel(f, grid, 1, 1, bx, by, 1, shared, s, NULL, config);
}
static CUresult scans_event_create(CUevent *e, unsigned int flags) { return p_cuEventCreate(e, flags); }
static CUresult scans_event_record(CUevent e, CUstream s) { return p_cuEventRecord(e, s); }
static CUresult scans_event_destroy(CUevent e) { return p_cuEventDestroy(e); }
static CUresult scans_event_synchronize(CUevent e) { return p_cuEventSynchronize(e); }
static CUresult scans_event_elapsed(float *ms, CUevent start, CUevent stop) {
	return p_cuEventElapsedTime(ms, start, stop);
}
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unsafe"
)

// driverError is a failed driver call: its name and CUresult.
type driverError struct {
	call string
	code int
}

func (e *driverError) Error() string {
	r := C.CUresult(e.code)
	name, desc := C.scans_error_name(r), C.scans_error_string(r)
	s := fmt.Sprintf("%s: CUresult %d", e.call, e.code)
	if name != nil {
		s = e.call + ": " + C.GoString(name)
	}
	if desc != nil {
		s += " (" + C.GoString(desc) + ")"
	}
	return s
}

func check(call string, r C.CUresult) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	return &driverError{call: call, code: int(r)}
}

// openDriver loads libcuda.so.1 and initializes the driver. It runs on
// a locked thread.
func openDriver() error {
	if msg := C.scans_open(); msg != nil {
		return fmt.Errorf("libcuda.so.1 not loaded: %s", C.GoString(msg))
	}
	return check("cuInit", C.scans_init())
}

func driverVersion() (int, error) {
	var v C.int
	err := check("cuDriverGetVersion", C.scans_driver_version(&v))
	return int(v), err
}

func deviceCount() (int, error) {
	var n C.int
	err := check("cuDeviceGetCount", C.scans_device_count(&n))
	return int(n), err
}

func deviceGet(ordinal int) (C.CUdevice, error) {
	var d C.CUdevice
	err := check("cuDeviceGet", C.scans_device_get(&d, C.int(ordinal)))
	return d, err
}

func deviceName(d C.CUdevice) (string, error) {
	buf := (*C.char)(C.malloc(256))
	defer C.free(unsafe.Pointer(buf))
	if err := check("cuDeviceGetName", C.scans_device_name(buf, 256, d)); err != nil {
		return "", err
	}
	return C.GoString(buf), nil
}

// The device attributes the backend reads (cuda.h's CUdevice_attribute).
const (
	attrMaxThreadsPerSM = C.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR
	attrSMCount         = C.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
	attrCCMajor         = C.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	attrCCMinor         = C.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
	attrMaxBlocksPerSM  = C.CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR
	attrRegsPerSM       = C.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR
)

func deviceTotalMem(d C.CUdevice) (int64, error) {
	var n C.size_t
	err := check("cuDeviceTotalMem", C.scans_device_total_mem(&n, d))
	return int64(n), err
}

func deviceAttribute(d C.CUdevice, attr int) (int, error) {
	var v C.int
	err := check("cuDeviceGetAttribute", C.scans_device_attribute(&v, C.int(attr), d))
	return int(v), err
}

// openContext retains the device's primary context and makes it current
// on the calling thread.
func openContext(d C.CUdevice) (C.CUcontext, error) {
	var ctx C.CUcontext
	err := check("cuDevicePrimaryCtxRetain/cuCtxSetCurrent", C.scans_ctx_open(&ctx, d))
	return ctx, err
}

func ctxSynchronize() error { return check("cuCtxSynchronize", C.scans_ctx_synchronize()) }

// ctxSetCurrent makes ctx current on the calling thread.
func ctxSetCurrent(ctx C.CUcontext) error {
	return check("cuCtxSetCurrent", C.scans_ctx_set_current(ctx))
}

// streamCreate makes a stream that, like the default stream's work,
// orders with the default stream (CU_STREAM_DEFAULT).
func streamCreate() (C.CUstream, error) {
	var s C.CUstream
	err := check("cuStreamCreate", C.scans_stream_create(&s, C.CU_STREAM_DEFAULT))
	return s, err
}

// streamHandle is a CUstream, for tests, which cannot name C's types.
type streamHandle = C.CUstream

// streamCreateNonBlocking makes a stream that does not order with the
// default stream (CU_STREAM_NON_BLOCKING), as other libraries' streams
// often are (tests).
func streamCreateNonBlocking() (C.CUstream, error) {
	var s C.CUstream
	err := check("cuStreamCreate", C.scans_stream_create(&s, C.CU_STREAM_NON_BLOCKING))
	return s, err
}

// streamContext is the context s belongs to.
func streamContext(s C.CUstream) (C.CUcontext, error) {
	var ctx C.CUcontext
	err := check("cuStreamGetCtx", C.scans_stream_ctx(s, &ctx))
	return ctx, err
}

// streamWait makes the work enqueued on s after it wait for the work
// recorded in e (nil s: the default stream).
func streamWait(s C.CUstream, e C.CUevent) error {
	return check("cuStreamWaitEvent", C.scans_stream_wait(s, e))
}

func streamSynchronize(s C.CUstream) error {
	return check("cuStreamSynchronize", C.scans_stream_synchronize(s))
}

func streamDestroy(s C.CUstream) error { return check("cuStreamDestroy", C.scans_stream_destroy(s)) }

// loadModule JIT-compiles a PTX image; a failure carries the JIT's log.
func loadModule(name, ptx string) (C.CUmodule, error) {
	const logSize = 8192
	image := C.CString(ptx)
	defer C.free(unsafe.Pointer(image))
	log := (*C.char)(C.calloc(logSize, 1))
	defer C.free(unsafe.Pointer(log))
	var m C.CUmodule
	if err := check("cuModuleLoadDataEx "+name, C.scans_module_load(&m, image, log, logSize)); err != nil {
		if l := strings.TrimSpace(C.GoString(log)); l != "" {
			return m, fmt.Errorf("%w: %s", err, l)
		}
		return m, err
	}
	return m, nil
}

func moduleFunction(m C.CUmodule, name string) (C.CUfunction, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var f C.CUfunction
	err := check("cuModuleGetFunction "+name, C.scans_module_function(&f, m, cname))
	return f, err
}

func memAlloc(n int64) (uint64, error) {
	var p C.CUdeviceptr
	err := check("cuMemAlloc", C.scans_mem_alloc(&p, C.size_t(n)))
	return uint64(p), err
}

func memFree(p uint64) error { return check("cuMemFree", C.scans_mem_free(C.CUdeviceptr(p))) }

// memRange is the allocation that holds p: its base and size.
func memRange(p uint64) (base uint64, size int64, err error) {
	var b C.CUdeviceptr
	var n C.size_t
	err = check("cuMemGetAddressRange", C.scans_mem_range(&b, &n, C.CUdeviceptr(p)))
	return uint64(b), int64(n), err
}

// pointerContext is the context in which p was allocated.
func pointerContext(p uint64) (C.CUcontext, error) {
	var ctx C.CUcontext
	err := check("cuPointerGetAttribute", C.scans_pointer_context(&ctx, C.CUdeviceptr(p)))
	return ctx, err
}

func memcpyHtoD(dst uint64, src unsafe.Pointer, n int64) error {
	return check("cuMemcpyHtoD", C.scans_htod(C.CUdeviceptr(dst), src, C.size_t(n)))
}

func memcpyDtoH(dst unsafe.Pointer, src uint64, n int64) error {
	return check("cuMemcpyDtoH", C.scans_dtoh(dst, C.CUdeviceptr(src), C.size_t(n)))
}

func memcpyDtoDAsync(dst, src uint64, n int64) error {
	return check("cuMemcpyDtoDAsync", C.scans_dtod(C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n)))
}

func memsetD32(p uint64, v uint32, n int64) error {
	return check("cuMemsetD32", C.scans_memset32(C.CUdeviceptr(p), C.uint(v), C.size_t(n)))
}

// memsetD32Async fills n words at p with v on stream s (tests).
func memsetD32Async(p uint64, v uint32, n int64, s C.CUstream) error {
	return check("cuMemsetD32Async", C.scans_memset32_async(C.CUdeviceptr(p), C.uint(v), C.size_t(n), s))
}

func memsetD16(p uint64, v uint16, n int64) error {
	return check("cuMemsetD16", C.scans_memset16(C.CUdeviceptr(p), C.uint16_t(v), C.size_t(n)))
}

// launch runs f on stream s (nil: the default stream) on a grid of grid
// blocks of bx x by threads with shared bytes of dynamic shared memory;
// params are the kernel's parameters in order, each 8 bytes (device
// addresses and 64-bit integers).
func launch(s C.CUstream, name string, f C.CUfunction, grid, bx, by, shared int, params []uint64) error {
	buf := make([]byte, 8*len(params))
	for i, p := range params {
		binary.LittleEndian.PutUint64(buf[8*i:], p)
	}
	var ptr unsafe.Pointer
	if len(buf) > 0 {
		ptr = unsafe.Pointer(&buf[0])
	}
	if r := C.scans_launch(s, f, C.uint(grid), C.uint(bx), C.uint(by), C.uint(shared), ptr, C.size_t(len(buf))); r != C.CUDA_SUCCESS {
		return check("cuLaunchKernel "+name, r)
	}
	return nil
}

func eventCreate() (C.CUevent, error) {
	var e C.CUevent
	err := check("cuEventCreate", C.scans_event_create(&e, C.CU_EVENT_DEFAULT))
	return e, err
}

// eventCreateOrdering makes an event for ordering streams only, without
// timing (CU_EVENT_DISABLE_TIMING), which makes it cheaper to record.
func eventCreateOrdering() (C.CUevent, error) {
	var e C.CUevent
	err := check("cuEventCreate", C.scans_event_create(&e, C.CU_EVENT_DISABLE_TIMING))
	return e, err
}

// eventRecord records e on stream s (nil: the default stream).
func eventRecord(e C.CUevent, s C.CUstream) error {
	return check("cuEventRecord", C.scans_event_record(e, s))
}

func eventDestroy(e C.CUevent) error { return check("cuEventDestroy", C.scans_event_destroy(e)) }

func eventSynchronize(e C.CUevent) error {
	return check("cuEventSynchronize", C.scans_event_synchronize(e))
}

// eventElapsed is the time between two recorded, completed events.
func eventElapsed(start, stop C.CUevent) (float64, error) {
	var ms C.float
	err := check("cuEventElapsedTime", C.scans_event_elapsed(&ms, start, stop))
	return float64(ms), err
}
