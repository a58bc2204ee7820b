//go:build cuda

package cuda

/*
#include <cuda.h>
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/internal/angles"
	"github.com/mingru/scans/internal/pool"
)

// Backend is the CUDA backend. New makes it without touching the driver;
// the first call that needs the GPU (Status, Upload, an operation) loads
// libcuda.so.1, initializes the driver and retains its device's primary
// context. A failure there is remembered: Status reports it and every
// later call returns it as a *scans.UnavailableError.
//
// Each method runs its driver calls on its own goroutine, locked to its
// OS thread with the primary context made current there, under one lock:
// the methods are safe for concurrent use and their driver calls run one
// at a time. Released device memory is kept for reuse (scans.MemoryPool).
//
// An operation returns once its kernel is enqueued on the default stream,
// as CUDA libraries do: its outputs are usable at once by later calls,
// which run after it, and Download, LastKernelTime and a queue's Wait
// wait for it. A launch the driver refuses is the call's error; a fault
// while the kernel runs is reported by the next call that waits.
type Backend struct {
	// Typed gives the backend the typed method of each operation
	// (LinearScan, GivensScanBackward, ...).
	scans.Typed

	once       sync.Once
	initErr    error // set once by ensure
	ordinal    int   // the device's CUDA ordinal
	ordinalErr error // a bad MINGRU_CUDA_DEVICE
	ctx        C.CUcontext
	devMu      sync.Mutex // held around every run of driver calls (do)
	life       scans.Lifecycle

	// Set by open, before any other call; read-only afterwards.
	device string
	driver string
	occ    occupancy // threads and blocks the device keeps in flight

	// Guarded by devMu.
	cache       pool.Cache[uint64] // released allocations by size class
	live        map[uint64]int64   // allocations in use: address to class
	modules     map[string]C.CUmodule
	funcs       map[string]C.CUfunction
	planFuncs   map[planFunc]loadedFunc // funcs by plan, so a call builds no names
	start, stop C.CUevent
	// orderEv orders the backend's streams with a caller's (WrapOn); nil
	// until first needed.
	orderEv C.CUevent

	// busy is the length of queued timing's busy kernel (see timedOn).
	busy time.Duration
	// flushBuf is FlushCache's buffer of scans.FlushBytes (0 until the
	// first flush); it is not counted in PeakBytes.
	flushBuf uint64
	// queues are the backend's queues, whose streams and events Close
	// destroys (guarded by devMu).
	queues []*Queue

	// poison makes every operation fill its outputs with NaN before the
	// launch, so tests can check that the kernels write every element.
	poison bool

	// queued is SetQueuedTiming's switch, read by every operation.
	queued atomic.Bool

	mu       sync.Mutex // guards the fields below
	held     int64      // device bytes allocated by this backend now
	peak     int64      // largest held since ResetPeakBytes
	lastTime time.Duration
	hasTime  bool
	// timePending: the last operation's events are recorded but not yet
	// read (LastKernelTime reads them).
	timePending bool
}

// New returns the CUDA backend on the device MINGRU_CUDA_DEVICE names (a
// CUDA ordinal; default 0). It touches no driver.
func New() *Backend {
	b := NewOn(0)
	if v := strings.TrimSpace(os.Getenv("MINGRU_CUDA_DEVICE")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			b.ordinalErr = fmt.Errorf("MINGRU_CUDA_DEVICE=%q is not a CUDA ordinal (0, 1, ...)", v)
		}
		b.ordinal = n
	}
	return b
}

// NewOn returns a CUDA backend on the device of the given ordinal
// (Devices lists them). It touches no driver; an ordinal with no device
// is reported by Status. Several backends, on one device or several, can
// live in one process: each holds its own tensors, in the device's
// primary context.
func NewOn(ordinal int) *Backend {
	b := &Backend{ordinal: ordinal}
	b.Typed = scans.Typed{Runner: b}
	return b
}

// Devices implements scans.DeviceLister: every CUDA device, by ordinal.
// It loads the driver but opens no context.
func (b *Backend) Devices() (list []scans.DeviceInfo, err error) {
	defer guard("devices", &err)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := openDriver(); err != nil {
		return nil, &scans.UnavailableError{Backend: backendName, Reason: unavailablePrefix + err.Error()}
	}
	n, err := deviceCount()
	if err != nil {
		return nil, fmt.Errorf("cuda: Devices: %w", err)
	}
	for i := 0; i < n; i++ {
		dev, err := deviceGet(i)
		if err != nil {
			return nil, fmt.Errorf("cuda: Devices: %w", err)
		}
		name, err := deviceName(dev)
		if err != nil {
			return nil, fmt.Errorf("cuda: Devices: %w", err)
		}
		mem, err := deviceTotalMem(dev)
		if err != nil {
			return nil, fmt.Errorf("cuda: Devices: %w", err)
		}
		list = append(list, scans.DeviceInfo{Backend: backendName, Index: i, Name: name, Memory: mem})
	}
	return list, nil
}

var (
	_ scans.Backend      = (*Backend)(nil)
	_ scans.Instrumented = (*Backend)(nil)
	_ scans.QueuedTimer  = (*Backend)(nil)
	_ scans.CacheFlusher = (*Backend)(nil)
	_ scans.MemoryPool   = (*Backend)(nil)
	_ scans.Queuer       = (*Backend)(nil)
	_ scans.DeviceLister = (*Backend)(nil)
	_ scans.Owned        = (*Tensor)(nil)
)

// Name returns "cuda".
func (*Backend) Name() string { return backendName }

// unavailablePrefix starts every reason the GPU cannot be used.
const unavailablePrefix = "CUDA not available: "

// ensure opens the driver and the device once and returns why the
// backend cannot run, as a *scans.UnavailableError, or nil.
func (b *Backend) ensure() error {
	b.once.Do(func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		b.initErr = b.open()
	})
	if b.initErr != nil {
		return &scans.UnavailableError{Backend: backendName, Reason: unavailablePrefix + b.initErr.Error()}
	}
	return nil
}

// open runs on a locked thread.
func (b *Backend) open() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic while opening the device: %v", r)
		}
	}()
	if err := openDriver(); err != nil {
		return err
	}
	if b.ordinalErr != nil {
		return b.ordinalErr
	}
	n, err := deviceCount()
	if err != nil {
		return err
	}
	if n < 1 {
		return fmt.Errorf("no CUDA device")
	}
	if b.ordinal < 0 || b.ordinal >= n {
		return fmt.Errorf("no CUDA device of ordinal %d (%d devices: 0 to %d)", b.ordinal, n, n-1)
	}
	dev, err := deviceGet(b.ordinal)
	if err != nil {
		return err
	}
	name, err := deviceName(dev)
	if err != nil {
		return err
	}
	var attrs [6]int
	for i, a := range []int{attrSMCount, attrMaxThreadsPerSM, attrCCMajor, attrCCMinor, attrMaxBlocksPerSM, attrRegsPerSM} {
		if attrs[i], err = deviceAttribute(dev, a); err != nil {
			return err
		}
	}
	ver, err := driverVersion()
	if err != nil {
		return err
	}
	if b.ctx, err = openContext(dev); err != nil {
		return err
	}
	if b.start, err = eventCreate(); err != nil {
		return err
	}
	if b.stop, err = eventCreate(); err != nil {
		return err
	}
	b.device = name
	b.driver = fmt.Sprintf("CUDA driver API %d.%d, compute capability %d.%d, %d SMs", ver/1000, ver%1000/10, attrs[2], attrs[3], attrs[0])
	b.occ = occupancy{threads: attrs[0] * attrs[1], blocks: attrs[0] * attrs[4], sms: attrs[0], regs: attrs[5]}
	b.modules = map[string]C.CUmodule{}
	b.live = map[uint64]int64{}
	b.funcs = map[string]C.CUfunction{}
	b.planFuncs = map[planFunc]loadedFunc{}
	b.busy = busyStart
	return nil
}

// do runs fn with the device's lock held, on a locked OS thread with the
// context current, inside the backend's lifecycle (an error wrapping
// scans.ErrClosed after Close), and returns its error. A panic in fn is
// recovered and returned as an error.
func (b *Backend) do(fn func() error) (err error) {
	if err := b.ensure(); err != nil {
		return err
	}
	leave, err := b.life.Enter()
	if err != nil {
		return fmt.Errorf("cuda: %w", err)
	}
	defer leave()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.devMu.Lock()
	defer b.devMu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic in a driver call: %v", r)
		}
	}()
	if err := ctxSetCurrent(b.ctx); err != nil {
		return err
	}
	return fn()
}

// Status reports whether CUDA can run here, initializing the driver on
// the first call.
func (b *Backend) Status() scans.Status {
	if err := b.ensure(); err != nil {
		return scans.Status{Backend: backendName, Reason: err.Error()}
	}
	return scans.Status{Backend: backendName, Available: true, Device: b.device, Driver: b.driver}
}

// Supports returns nil when the kernels serve op at d for dt, a
// *scans.ScanFallback when d is outside their envelope, and a
// *scans.UnavailableError when CUDA cannot run here.
func (b *Backend) Supports(op scans.Op, d scans.Dims, dt scans.DType) error {
	if err := envelope(op, d, dt); err != nil {
		return err
	}
	return b.ensure()
}

// function returns the kernel's handle, JIT-compiling its module on first
// use. It runs under do.
// planFunc is what picks a plan's kernel (see plan.kernel and moduleOf).
type planFunc struct {
	op                   scans.Op
	dir                  scans.Direction
	dt                   scans.DType
	k, v                 int
	chunked, turn, pairs bool
}

// loadedFunc is a loaded kernel and its name.
type loadedFunc struct {
	f    C.CUfunction
	name string
}

// planFunction returns the kernel of p and its name. It runs under do.
func (b *Backend) planFunction(p *plan) (C.CUfunction, string, error) {
	key := planFunc{p.op, p.dir, p.dt, p.d.K, p.d.V, p.by > 1, p.turn, p.pairs}
	if l, ok := b.planFuncs[key]; ok {
		return l.f, l.name, nil
	}
	name := p.kernel()
	f, err := b.function(p.module(), name)
	if err != nil {
		return nil, "", err
	}
	b.planFuncs[key] = loadedFunc{f, name}
	return f, name, nil
}

func (b *Backend) function(module, kernel string) (C.CUfunction, error) {
	if f, ok := b.funcs[kernel]; ok {
		return f, nil
	}
	m, ok := b.modules[module]
	if !ok {
		src, err := readPTX(module)
		if err != nil {
			return nil, err
		}
		if m, err = loadModule(module, src); err != nil {
			return nil, err
		}
		b.modules[module] = m
	}
	f, err := moduleFunction(m, kernel)
	if err != nil {
		return nil, err
	}
	b.funcs[kernel] = f
	return f, nil
}

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

// Close implements io.Closer: it waits for the calls in flight and for
// the device, and frees every allocation, tensors and cache included, and
// the queues' streams. Every later call returns an error wrapping
// scans.ErrClosed. Closing twice is a no-op.
func (b *Backend) Close() error {
	if b.ensure() != nil {
		b.life.Close(func() {})
		return nil
	}
	var err error
	b.life.Close(func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		b.devMu.Lock()
		defer b.devMu.Unlock()
		if err = ctxSetCurrent(b.ctx); err != nil {
			return
		}
		err = ctxSynchronize()
		for p := range b.live {
			memFree(p)
		}
		b.live = map[uint64]int64{}
		b.emptyCache()
		for _, q := range b.queues {
			streamDestroy(q.stream)
			eventDestroy(q.start)
			eventDestroy(q.stop)
		}
		b.queues = nil
		if b.orderEv != nil {
			eventDestroy(b.orderEv)
			b.orderEv = nil
		}
		if b.flushBuf != 0 {
			memFree(b.flushBuf)
			b.flushBuf = 0
		}
		b.mu.Lock()
		b.held = 0
		b.mu.Unlock()
	})
	return wrapUnavailable("close", err)
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

// LastKernelTime is the device time, measured with events, of the kernel
// launches of the most recent operation (or queue batch). It waits for
// that operation to finish.
func (b *Backend) LastKernelTime() (time.Duration, bool) {
	b.mu.Lock()
	pending := b.timePending
	b.mu.Unlock()
	if pending {
		err := b.do(func() error {
			if err := eventSynchronize(b.stop); err != nil {
				return err
			}
			ms, err := eventElapsed(b.start, b.stop)
			if err != nil {
				return err
			}
			b.mu.Lock()
			if b.timePending {
				b.lastTime, b.hasTime, b.timePending = time.Duration(ms*float64(time.Millisecond)), true, false
			}
			b.mu.Unlock()
			return nil
		})
		if err != nil {
			return 0, false
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastTime, b.hasTime
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

// repeats is how many timed runs CopyBandwidth takes the median of, after
// one untimed warm-up.
const repeats = 11

// SetQueuedTiming implements scans.QueuedTimer: with on, each operation
// is timed behind a busy kernel, so that LastKernelTime is the device's
// time for the operation alone; off (the default), LastKernelTime also
// holds the host's time to submit its launch, and an operation costs no
// more device time than its kernel. CopyBandwidth and DispatchLatency are
// always timed queued.
func (b *Backend) SetQueuedTiming(on bool) { b.queued.Store(on) }

// The busy kernel's first length, and the longest it grows to.
const (
	busyStart = 50 * time.Microsecond
	busyMax   = 2 * time.Millisecond
)

// bracket enqueues fn's work on the default stream between the events
// start and stop and returns without waiting: LastKernelTime reads the
// time between them when asked. It runs under do.
func (b *Backend) bracket(fn func() error) error {
	if err := eventRecord(b.start, nil); err != nil {
		return err
	}
	if err := fn(); err != nil {
		return err
	}
	if err := eventRecord(b.stop, nil); err != nil {
		return err
	}
	b.mu.Lock()
	b.timePending = true
	b.mu.Unlock()
	return nil
}

// timedOn is timed, queued or not. Queued, a busy kernel (one thread
// reading the device's timer for b.busy) is launched first, so that the
// device reaches the first event only after the host has recorded it,
// enqueued fn's work and recorded the second: the events then bracket the
// device's work alone, with no wait for a launch to arrive. Should the
// host take more than three quarters of the busy time to enqueue (a slow
// host thread, a garbage collection), the device may have waited inside
// the bracket: the busy time doubles (up to busyMax) and fn runs again.
// Every caller's fn is one launch or copy that writes its outputs from its
// inputs, so running it again gives the same outputs.
func (b *Backend) timedOn(queued bool, fn func() error) (time.Duration, error) {
	var busy C.CUfunction
	if queued {
		f, err := b.function(utilModule, busyKernel)
		if err != nil {
			return 0, err
		}
		busy = f
	}
	for {
		var t0 time.Time
		if queued {
			t0 = time.Now()
			if err := launch(nil, busyKernel, busy, 1, 1, 1, 0, []uint64{uint64(b.busy.Nanoseconds())}); err != nil {
				return 0, err
			}
		}
		if err := eventRecord(b.start, nil); err != nil {
			ctxSynchronize()
			return 0, err
		}
		if err := fn(); err != nil {
			// Let what was enqueued finish before the caller frees anything.
			ctxSynchronize()
			return 0, err
		}
		if err := eventRecord(b.stop, nil); err != nil {
			ctxSynchronize()
			return 0, err
		}
		var host time.Duration
		if queued {
			host = time.Since(t0)
		}
		if err := eventSynchronize(b.stop); err != nil {
			return 0, err
		}
		ms, err := eventElapsed(b.start, b.stop)
		if err != nil {
			return 0, err
		}
		if !queued || host < b.busy*3/4 || b.busy >= busyMax {
			return time.Duration(ms * float64(time.Millisecond)), nil
		}
		b.busy = min(2*b.busy, busyMax)
	}
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// CopyBandwidth copies a device buffer of the given size to another
// (cuMemcpyDtoDAsync), timed queued with events (SetQueuedTiming), and
// returns the bytes read plus written per second, the median of several
// copies after a warm-up.
func (b *Backend) CopyBandwidth(bytes int64) (bw float64, err error) {
	defer guard("copy bandwidth", &err)
	if bytes < 4 {
		return 0, fmt.Errorf("cuda: copy bandwidth: %d bytes, want at least 4", bytes)
	}
	bytes &^= 3
	err = b.do(func() error {
		src, err := b.alloc(bytes)
		if err != nil {
			return err
		}
		defer b.free(src)
		dst, err := b.alloc(bytes)
		if err != nil {
			return err
		}
		defer b.free(dst)
		if err := memsetD32(src, 0x3f800000, bytes/4); err != nil {
			return err
		}
		times := make([]time.Duration, 0, repeats)
		for i := 0; i <= repeats; i++ {
			d, err := b.timedOn(true, func() error { return memcpyDtoDAsync(dst, src, bytes) })
			if err != nil {
				return err
			}
			if i > 0 {
				times = append(times, d)
			}
		}
		m := median(times)
		if m <= 0 {
			return fmt.Errorf("copy of %d bytes took no measurable time", bytes)
		}
		bw = float64(2*bytes) / m.Seconds()
		return nil
	})
	return bw, wrapUnavailable("copy bandwidth", err)
}

// FlushCache implements scans.CacheFlusher: it writes a device buffer of
// scans.FlushBytes (allocated on the first call and kept) and waits.
func (b *Backend) FlushCache() (err error) {
	defer guard("flush cache", &err)
	err = b.do(func() error {
		if b.flushBuf == 0 {
			p, err := memAlloc(scans.FlushBytes)
			if err != nil {
				return fmt.Errorf("allocate the cache-flush buffer: %w", err)
			}
			b.flushBuf = p
		}
		if err := memsetD32(b.flushBuf, 0x5eed5eed, scans.FlushBytes/4); err != nil {
			return err
		}
		return ctxSynchronize()
	})
	return wrapUnavailable("flush cache", err)
}

// latencyWarmup and latencyRepeats are the untimed and timed launches
// of DispatchLatency: an empty launch takes a few microseconds, so many
// of them cost little.
const (
	latencyWarmup  = 20
	latencyRepeats = 101
)

// DispatchLatency is the device time of one empty kernel launch (one
// block of one thread), timed queued (SetQueuedTiming) as scanbench times
// the operations: what a launch adds on the device, not the host's time to
// submit it, which moves from run to run by more than its sampling error
// (DESIGN.md). The median of latencyRepeats launches after latencyWarmup
// untimed ones.
func (b *Backend) DispatchLatency() (lat time.Duration, err error) {
	defer guard("dispatch latency", &err)
	err = b.do(func() error {
		f, err := b.function(utilModule, emptyKernel)
		if err != nil {
			return err
		}
		times := make([]time.Duration, 0, latencyRepeats)
		for i := 0; i < latencyWarmup+latencyRepeats; i++ {
			d, err := b.timedOn(true, func() error { return launch(nil, emptyKernel, f, 1, 1, 1, 0, nil) })
			if err != nil {
				return err
			}
			if i >= latencyWarmup {
				times = append(times, d)
			}
		}
		lat = median(times)
		return nil
	})
	return lat, wrapUnavailable("dispatch latency", err)
}
