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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mingru/scans"
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
