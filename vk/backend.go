package vk

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/internal/angles"
)

// config holds what New reads from the environment, plus knobs that the
// package's own tests set.
type config struct {
	loader     string // shared object holding the Vulkan loader
	device     string // MINGRU_VK_DEVICE: index or name substring
	validation bool   // MINGRU_VK_VALIDATION=1
	pipeLog    string // MINGRU_VK_PIPELINE_LOG: file receiving one line per pipeline built
	guard      bool   // MINGRU_VK_GUARD=1: guard regions after every tensor buffer
	maxRange   int64  // if > 0, caps maxStorageBufferRange (forces slicing)
	// Tests: stage every transfer through a staging buffer of this many
	// bytes, as on a discrete GPU.
	noUnified   bool
	stagingSize int
	// Tests: run the Givens kernels that use no subgroup operations; or
	// give the subgroup Givens kernels this many chunks of T, or a ring
	// of this many steps.
	noSubgroup   bool
	givensChunks int
	givensDepth  int
	// Tests: run the row layout of matrix_affine_scan with workgroups of
	// this many invocations, or a ring of this many steps (index 0 the
	// forward, 1 the backward).
	rowsWG   [2]int
	rowsRing [2]int
	// Tests: run matrix_affine_scan in the row layout (affineRows > 0) or
	// the column layout (< 0) whatever blockRows says, the column layout
	// with blockChunks chunks of T where that is > 0.
	affineRows  int
	blockChunks int
	// Tests: give each invocation of the column layout this many columns
	// (1, or 2 with v even) whatever blockCols says.
	blockCols int
	// Tests: give the column layout a ring of colRing-1 steps (0: the
	// rule's).
	colRing int
	// Tests: softF16 widens and narrows f16 with the integer conversions
	// even where the device's instructions are exact (no probes run);
	// hwNarrow narrows f16 with packHalf2x16 without probing it, so that
	// a CPU device (lavapipe) runs that path too. softF16 wins.
	softF16  bool
	hwNarrow bool
	// Layout experiments (Sweep): the tiled kernels' layout in
	// place of tiledLayout's; the 16-bit and subgroup Givens kernels
	// compiled without the whole-word paths.
	tiledLayout  func(B, T, units, wgCap, steps, unitCh int) (tile, chunks int)
	noAlignWords bool
}

// Backend runs the scans on a Vulkan device. It implements scans.Backend
// and scans.Instrumented. The zero value is not usable; call New.
type Backend struct {
	// Typed gives the backend the typed method of each operation
	// (LinearScan, GivensScanBackward, ...).
	scans.Typed

	cfg    config
	once   sync.Once
	dev    *device
	err    error // why the device could not be opened
	poison bool  // fill outputs with NaN before every kernel (tests)
	// shareDev: the device is another backend's, which closes it (tests
	// share one device); Close leaves it open.
	shareDev bool

	last lastTime // LastKernelTime

	life scans.Lifecycle // Close
	tmu  sync.Mutex      // the queue bookkeeping of every Tensor
}

// New returns a Vulkan backend. It touches no driver: the loader is opened
// and the device chosen on the first call to Status or to an operation.
// MINGRU_VK_DEVICE and MINGRU_VK_VALIDATION are read now (see the package
// documentation).
func New() *Backend {
	return newBackend(config{
		loader:     "libvulkan.so.1",
		device:     os.Getenv("MINGRU_VK_DEVICE"),
		validation: os.Getenv("MINGRU_VK_VALIDATION") == "1",
		pipeLog:    os.Getenv("MINGRU_VK_PIPELINE_LOG"),
		guard:      guardFromEnv(),
	})
}

// NewOn returns a Vulkan backend on the given device: an index into the
// driver's list (Devices), or a case-insensitive substring of its name;
// "" chooses as New does. Several backends, on one device or several, can
// live in one process: each holds its own tensors. Like New it touches no
// driver until first used; a device that does not exist is reported by
// Status.
func NewOn(device string) *Backend {
	b := New()
	b.cfg.device = device
	return b
}

func newBackend(cfg config) *Backend {
	b := &Backend{cfg: cfg}
	b.Typed = scans.Typed{Runner: b}
	return b
}

// Name implements scans.Backend; it is "vulkan".
func (b *Backend) Name() string { return "vulkan" }

// device opens the device once and remembers the outcome.
func (b *Backend) device() (*device, error) {
	b.once.Do(func() {
		defer func() {
			if r := recover(); r != nil {
				b.dev, b.err = nil, fmt.Errorf("Vulkan not available: initialization panicked: %v", r)
			}
		}()
		d, err := openDevice(b.cfg)
		if err != nil {
			b.err = fmt.Errorf("Vulkan not available: %w", err)
			return
		}
		b.dev = d
	})
	if b.err == nil && b.dev.isClosed() {
		return nil, fmt.Errorf("vulkan: %w", scans.ErrClosed)
	}
	return b.dev, b.err
}

// unavailable is the error of a call that found no device: the backend
// is closed, or the device could not be opened.
func (b *Backend) unavailable() error {
	_, err := b.device()
	if errors.Is(err, scans.ErrClosed) {
		return err
	}
	return &scans.UnavailableError{Backend: "vulkan", Reason: err.Error()}
}

// Status implements scans.Backend. The first call opens the device.
func (b *Backend) Status() scans.Status {
	d, err := b.device()
	if err != nil {
		return scans.Status{Backend: "vulkan", Reason: err.Error()}
	}
	return scans.Status{Backend: "vulkan", Available: true, Device: d.name, Driver: d.driver, Software: d.software,
		Notes: d.f16Paths() + "; " + d.subgroupNote}
}

// softwareMaxT is the longest sequence a CPU Vulkan device (Mesa's
// lavapipe) is given. Its shader compiler ends an invocation after 65535
// loop iterations in all, silently; the kernels stay under that for every T
// up to this bound (the conformance matrix runs T = 4096 there), and longer
// sequences are declined with ScanFallback rather than risk a truncated
// scan. GPUs have no such limit.
const softwareMaxT = 4096

// deviceSupports adds the limits of the device in hand to supports.
func deviceSupports(dev *device, op scans.Op, d scans.Dims, dt scans.DType) error {
	if err := supports(op, d, dt); err != nil {
		return err
	}
	if dev.software && d.T > softwareMaxT {
		return &scans.ScanFallback{Backend: "vulkan", Op: op,
			Reason: fmt.Sprintf("T=%d is over the %d steps a CPU Vulkan device (%s) runs without truncating a loop", d.T, softwareMaxT, dev.name)}
	}
	return nil
}

// Supports implements scans.Backend: nil for shapes the kernels serve
// (linear_scan and parallel_scan_log: any D; matrix_scan: k=2, v=1;
// matrix_affine_scan: k, v in {1,2,4,8,16}; givens_scan: k in
// {2,4,8,16}), a *scans.ScanFallback otherwise. On a CPU Vulkan device it
// also declines T > 4096 (see softwareMaxT); that check initializes the
// device, the shape checks alone do not.
func (b *Backend) Supports(op scans.Op, d scans.Dims, dt scans.DType) error {
	if err := supports(op, d, dt); err != nil {
		return err
	}
	dev, err := b.device()
	if err != nil {
		return b.unavailable()
	}
	return deviceSupports(dev, op, d, dt)
}

// deviceErr reports a failure of the device (out of memory, device lost,
// a failed submission) during a transfer as a *scans.KernelError, like a
// failed kernel.
func deviceErr(what scans.Op, err error) error {
	return &scans.KernelError{Backend: "vulkan", Op: what, Err: err}
}

// recoverTo turns a panic below the public API into an error.
func recoverTo(op scans.Op, err *error) {
	if r := recover(); r != nil {
		*err = &scans.KernelError{Backend: "vulkan", Op: op, Err: fmt.Errorf("vk: internal error: %v", r)}
	}
}

// Upload implements scans.Backend: it copies a host tensor to device
// memory, and notes the range of its values (as givens_scan's theta: see
// the package doc).
func (b *Backend) Upload(h *scans.Host) (t scans.Tensor, err error) {
	defer recoverTo("upload", &err)
	if h == nil {
		return nil, errors.New("vk: Upload: nil host tensor")
	}
	leave, err := b.life.Enter()
	if err != nil {
		return nil, fmt.Errorf("vk: Upload: %w", err)
	}
	defer leave()
	d, err := b.device()
	if err != nil {
		return nil, b.unavailable()
	}
	vt, err := b.newTensor(d, h.DType(), h.Shape())
	if err != nil {
		return nil, deviceErr("upload", fmt.Errorf("vk: Upload %v: %w", h, err))
	}
	if err := d.write(vt.buf, hostBytes(h)); err != nil {
		b.free(vt)
		return nil, deviceErr("upload", fmt.Errorf("vk: Upload %v: %w", h, err))
	}
	vt.angles = angles.Of(h)
	return vt, nil
}

// Download implements scans.Backend: it copies a device tensor to the
// host.
func (b *Backend) Download(t scans.Tensor) (h *scans.Host, err error) {
	defer recoverTo("download", &err)
	vt, ok := t.(*Tensor)
	if !ok || vt == nil {
		return nil, fmt.Errorf("vk: Download: want a *vk.Tensor, got %T", t)
	}
	if vt.owner != b {
		return nil, errors.New("vk: Download: the tensor belongs to another vulkan backend")
	}
	leave, err := b.life.Enter()
	if err != nil {
		return nil, fmt.Errorf("vk: Download: %w", err)
	}
	defer leave()
	if vt.released.Load() {
		return nil, errors.New("vk: Download: the tensor was released")
	}
	d, err := b.device()
	if err != nil {
		return nil, b.unavailable()
	}
	if err := b.settle(vt); err != nil {
		return nil, fmt.Errorf("vk: Download %v: the queued work that writes it failed: %w", vt, err)
	}
	h, err = scans.NewHost(vt.dtype, vt.shape...)
	if err != nil {
		return nil, err
	}
	if err := d.read(vt.buf, hostBytes(h)); err != nil {
		return nil, deviceErr("download", fmt.Errorf("vk: Download %v: %w", vt, err))
	}
	return h, nil
}

// Release implements scans.Backend: it frees the tensor's device memory.
// Releasing a host tensor or nil is a no-op; releasing twice is an error.
func (b *Backend) Release(t scans.Tensor) (err error) {
	defer recoverTo("release", &err)
	if scans.IsNil(t) {
		return nil
	}
	vt, ok := t.(*Tensor)
	if !ok {
		return nil
	}
	if vt.owner != b {
		return errors.New("vk: Release: the tensor belongs to another vulkan backend")
	}
	leave, err := b.life.Enter()
	if err != nil {
		return fmt.Errorf("vk: Release: %w", err)
	}
	defer leave()
	if vt.released.Swap(true) {
		return errors.New("vk: Release: the tensor was already released")
	}
	b.tmu.Lock()
	if vt.uses > 0 {
		// Enqueued work still uses it: its queue frees it when done.
		vt.freeLater = true
		b.tmu.Unlock()
		return nil
	}
	buf := vt.buf
	vt.buf = nil
	b.tmu.Unlock()
	b.dev.free(buf)
	return nil
}

// Close implements io.Closer: it waits for the calls in flight, drops
// what queues hold unsubmitted, and frees every device object, tensors
// and cache included. Every later call returns an error wrapping
// scans.ErrClosed. Closing twice is a no-op.
func (b *Backend) Close() error {
	b.life.Close(func() {
		if d, err := b.device(); err == nil && !b.shareDev {
			d.destroy()
		}
	})
	return nil
}

// CachedBytes implements scans.MemoryPool: the device memory of released
// tensors and scratch, kept for reuse.
func (b *Backend) CachedBytes() int64 {
	leave, err := b.life.Enter()
	if err != nil {
		return 0
	}
	defer leave()
	if d, err := b.device(); err == nil {
		_, c := d.memory()
		return c
	}
	return 0
}

// EmptyCache implements scans.MemoryPool.
func (b *Backend) EmptyCache() {
	leave, err := b.life.Enter()
	if err != nil {
		return
	}
	defer leave()
	if d, err := b.device(); err == nil {
		d.emptyCache()
	}
}

func (b *Backend) newTensor(d *device, dt scans.DType, shape []int) (*Tensor, error) {
	t := &Tensor{dtype: dt, shape: append([]int(nil), shape...), owner: b, angles: angles.Any}
	buf, err := d.alloc(t.Bytes())
	if err != nil {
		return nil, err
	}
	t.buf = buf
	return t, nil
}

func (b *Backend) free(ts ...*Tensor) {
	for _, t := range ts {
		if t != nil && !t.released.Swap(true) {
			b.dev.free(t.buf)
			t.buf = nil
		}
	}
}

// LastKernelTime implements scans.Instrumented: the device time between
// timestamps written before the first and after the last dispatch of the
// most recent operation (scaled by the device's timestampPeriod). ok is
// false before any operation completed, or when the queue has no
// timestamps.
//
// A synchronous call leaves its timestamps on the device: they are read
// here, or before its command buffer is recorded or submitted again,
// whichever comes first. A loop that never asks does not wait for them.
func (b *Backend) LastKernelTime() (time.Duration, bool) {
	b.last.settle()
	return b.last.get()
}

// lastTime is the device time of a backend's most recent operation. A
// synchronous call leaves it unread in the context it ran in (ctx) until
// someone asks for it or the context is taken again (device.settle).
type lastTime struct {
	mu  sync.Mutex
	ctx *execCtx // holds the unread timestamps, or nil
	dev *device  // ctx's
	ns  int64
	ok  bool
}

// settle reads the timestamps w waits for, if any.
func (w *lastTime) settle() {
	w.mu.Lock()
	c, d := w.ctx, w.dev
	w.mu.Unlock()
	if c != nil {
		d.settle(c)
	}
}

// set records a time read already (ok false: none) in place of an
// unread one.
func (w *lastTime) set(d time.Duration, ok bool) {
	w.mu.Lock()
	w.ctx, w.ns, w.ok = nil, int64(d), ok
	w.mu.Unlock()
}

func (w *lastTime) get() (time.Duration, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return time.Duration(w.ns), w.ok
}

// PeakBytes implements scans.Instrumented: the most device bytes held at
// once (tensors and kernel scratch; staging memory is host memory and not
// counted) since the last ResetPeakBytes.
func (b *Backend) PeakBytes() int64 {
	d, err := b.device()
	if err != nil {
		return 0
	}
	return d.peakBytes()
}

// ResetPeakBytes implements scans.Instrumented.
func (b *Backend) ResetPeakBytes() {
	if d, err := b.device(); err == nil {
		d.resetPeak()
	}
}

// CopyBandwidth implements scans.Instrumented: it times a compute-shader
// copy (16-byte loads and stores, enough workgroups to fill the device)
// between two device buffers of the given size with timestamps and returns
// the median of several copies as (bytes read + bytes written) per second:
// the ceiling for the scan kernels, which are compute shaders too.
func (b *Backend) CopyBandwidth(bytes int64) (bw float64, err error) {
	defer recoverTo("copy", &err)
	if bytes < 4 {
		return 0, fmt.Errorf("vk: CopyBandwidth: %d bytes, want >= 4", bytes)
	}
	d, err := b.device()
	if err != nil {
		return 0, b.unavailable()
	}
	return d.copyBandwidth(bytes)
}

// DispatchLatency implements scans.Instrumented: the median device time,
// between timestamps, of one dispatch of an empty kernel.
func (b *Backend) DispatchLatency() (lat time.Duration, err error) {
	defer recoverTo("dispatch", &err)
	d, err := b.device()
	if err != nil {
		return 0, b.unavailable()
	}
	return d.dispatchLatency()
}

// FlushCache implements scans.CacheFlusher: it fills a device buffer of
// scans.FlushBytes (allocated on the first call and kept) and waits.
func (b *Backend) FlushCache() (err error) {
	defer recoverTo("flush cache", &err)
	d, err := b.device()
	if err != nil {
		return b.unavailable()
	}
	return d.flushCache()
}

// Compile-time checks.
var (
	_ scans.Backend      = (*Backend)(nil)
	_ scans.Instrumented = (*Backend)(nil)
	_ scans.CacheFlusher = (*Backend)(nil)
	_ scans.MemoryPool   = (*Backend)(nil)
	_ scans.Queuer       = (*Backend)(nil)
	_ scans.DeviceLister = (*Backend)(nil)
	_ scans.Tensor       = (*Tensor)(nil)
	_ scans.Owned        = (*Tensor)(nil)
)

func init() { scans.Register("vulkan", 20, func() scans.Backend { return New() }) }
