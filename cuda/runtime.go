//go:build cuda

package cuda

/*
#include <cuda.h>
*/
import "C"

import (
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/internal/angles"
)

// Backend is the CUDA backend. New makes it without touching the driver;
// the first call that needs the GPU (Status, Upload, an operation) loads
// libcuda.so.1, initializes the driver and retains device 0's primary
// context. A failure there is remembered: Status reports it and every
// later call returns it as a *scans.UnavailableError.
//
// One goroutine, locked to an OS thread on which the context is current,
// runs every driver call; the methods hand it work and wait, so they are
// safe for concurrent use and operations run one at a time.
type Backend struct {
	// Typed gives the backend the typed method of each operation
	// (LinearScan, GivensScanBackward, ...).
	scans.Typed

	once    sync.Once
	initErr error // set once by start
	work    chan func()

	// Set by start on the device goroutine before work is served; read-only
	// afterwards.
	device string
	driver string
	occ    occupancy // threads and blocks the device keeps in flight

	// Owned by the device goroutine.
	modules     map[string]C.CUmodule
	funcs       map[string]C.CUfunction
	start, stop C.CUevent

	// busy is the length of queued timing's busy kernel (see timedOn).
	busy time.Duration
	// flushBuf is FlushCache's buffer of scans.FlushBytes (0 until the
	// first flush); it is not counted in PeakBytes.
	flushBuf uint64

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
}

// New returns the CUDA backend. It touches no driver.
func New() *Backend {
	b := &Backend{}
	b.Typed = scans.Typed{Runner: b}
	return b
}

var (
	_ scans.Backend      = (*Backend)(nil)
	_ scans.Instrumented = (*Backend)(nil)
	_ scans.QueuedTimer  = (*Backend)(nil)
	_ scans.CacheFlusher = (*Backend)(nil)
)

// Name returns "cuda".
func (*Backend) Name() string { return backendName }

// unavailablePrefix starts every reason the GPU cannot be used.
const unavailablePrefix = "CUDA not available: "

// ensure starts the device goroutine once and returns why the backend
// cannot run, as a *scans.UnavailableError, or nil.
func (b *Backend) ensure() error {
	b.once.Do(func() {
		ready := make(chan error)
		b.work = make(chan func())
		go b.serve(ready)
		b.initErr = <-ready
	})
	if b.initErr != nil {
		return &scans.UnavailableError{Backend: backendName, Reason: unavailablePrefix + b.initErr.Error()}
	}
	return nil
}

// serve is the device goroutine: it opens the driver and the context on
// its locked thread, reports the outcome on ready, then runs work forever.
// A goroutine that failed to open the device exits (and its thread with
// it, being locked).
func (b *Backend) serve(ready chan<- error) {
	runtime.LockOSThread()
	err := b.open()
	ready <- err
	if err != nil {
		return
	}
	for job := range b.work {
		job()
	}
}

// open runs on the device goroutine.
func (b *Backend) open() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic while opening the device: %v", r)
		}
	}()
	if err := openDriver(); err != nil {
		return err
	}
	n, err := deviceCount()
	if err != nil {
		return err
	}
	if n < 1 {
		return fmt.Errorf("no CUDA device")
	}
	dev, err := deviceGet(0)
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
	if _, err := openContext(dev); err != nil {
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
	b.funcs = map[string]C.CUfunction{}
	b.busy = busyStart
	return nil
}

// do runs fn on the device goroutine and returns its error. A panic in fn
// is recovered there and returned as an error.
func (b *Backend) do(fn func() error) error {
	if err := b.ensure(); err != nil {
		return err
	}
	done := make(chan error, 1)
	b.work <- func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("panic on the device goroutine: %v", r)
			}
		}()
		done <- fn()
	}
	return <-done
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
// use. It runs on the device goroutine.
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

// alloc allocates device memory and accounts for it. It runs on the device
// goroutine.
func (b *Backend) alloc(n int64) (uint64, error) {
	p, err := memAlloc(n)
	if err != nil {
		return 0, fmt.Errorf("allocate %d bytes: %w", n, err)
	}
	b.mu.Lock()
	b.held += n
	if b.held > b.peak {
		b.peak = b.held
	}
	b.mu.Unlock()
	return p, nil
}

// free releases device memory and its accounting. It runs on the device
// goroutine.
func (b *Backend) free(p uint64, n int64) error {
	err := memFree(p)
	b.mu.Lock()
	b.held -= n
	b.mu.Unlock()
	return err
}

// newTensor allocates a device tensor. It runs on the device goroutine.
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
			b.free(d.ptr, d.bytes)
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
		if d.ptr == 0 {
			return releasedError("download", "t", d)
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
		if d.ptr == 0 {
			return releasedError("release", "t", d)
		}
		p := d.ptr
		d.ptr = 0
		return b.free(p, d.bytes)
	}))
}

// LastKernelTime is the device time, measured with events, of the kernel
// launches of the most recent completed operation.
func (b *Backend) LastKernelTime() (time.Duration, bool) {
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

// timed runs fn (which enqueues work on the default stream) between two
// events and returns the device time between them, queued as
// SetQueuedTiming says. It runs on the device goroutine.
func (b *Backend) timed(fn func() error) (time.Duration, error) {
	return b.timedOn(b.queued.Load(), fn)
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
			if err := launch(busyKernel, busy, 1, 1, 1, 0, []uint64{uint64(b.busy.Nanoseconds())}); err != nil {
				return 0, err
			}
		}
		if err := eventRecord(b.start); err != nil {
			ctxSynchronize()
			return 0, err
		}
		if err := fn(); err != nil {
			// Let what was enqueued finish before the caller frees anything.
			ctxSynchronize()
			return 0, err
		}
		if err := eventRecord(b.stop); err != nil {
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
		defer b.free(src, bytes)
		dst, err := b.alloc(bytes)
		if err != nil {
			return err
		}
		defer b.free(dst, bytes)
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
			d, err := b.timedOn(true, func() error { return launch(emptyKernel, f, 1, 1, 1, 0, nil) })
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
