package bench

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/mingru/scans"
)

// Shape is one of the contract's benchmark shapes: the batch, length and
// channel count of the elementwise operations and the blocks of each block
// operation.
type Shape struct {
	Name    string
	B, T, D int
	// Blocks (N, k, v) of the block operations.
	MatrixN                   int // matrix_scan, k = 2, v = 1
	AffineN, AffineK, AffineV int // matrix_affine_scan
	GivensN, GivensK          int // givens_scan
}

// Shapes are the benchmark shapes of the contract, the same for the
// project and for any outside comparison.
var Shapes = []Shape{
	{Name: "lab", B: 128, T: 64, D: 64, MatrixN: 32, AffineN: 8, AffineK: 8, AffineV: 8, GivensN: 8, GivensK: 8},
	{Name: "long-T", B: 16, T: 1024, D: 64, MatrixN: 32, AffineN: 8, AffineK: 8, AffineV: 8, GivensN: 8, GivensK: 8},
	{Name: "large", B: 32, T: 4096, D: 1024, MatrixN: 512, AffineN: 128, AffineK: 8, AffineV: 8, GivensN: 128, GivensK: 8},
}

// ShapeByName finds one of Shapes.
func ShapeByName(name string) (Shape, error) {
	for _, s := range Shapes {
		if s.Name == name {
			return s, nil
		}
	}
	names := make([]string, len(Shapes))
	for i, s := range Shapes {
		names[i] = s.Name
	}
	return Shape{}, fmt.Errorf("bench: unknown shape %q (want one of %v)", name, names)
}

// Dims returns the dims of op at this shape.
func (s Shape) Dims(op scans.Op) scans.Dims {
	switch op {
	case scans.OpMatrixScan:
		return scans.Dims{B: s.B, T: s.T, N: s.MatrixN, K: 2, V: 1}
	case scans.OpMatrixAffineScan:
		return scans.Dims{B: s.B, T: s.T, N: s.AffineN, K: s.AffineK, V: s.AffineV}
	case scans.OpGivensScan:
		return scans.Dims{B: s.B, T: s.T, N: s.GivensN, K: s.GivensK, V: 1}
	}
	return scans.Dims{B: s.B, T: s.T, N: s.D, K: 1, V: 1}
}

// Mode is what a benchmark times.
type Mode string

// The two modes.
const (
	ModeForward  Mode = "forward"
	ModeBackward Mode = "forward+backward"
)

// BenchInit says whether the benchmark gives op an initial state: every
// op with one takes it, except mingru_scan, whose benchmark leaves h0
// absent (SPEC.md).
func BenchInit(op scans.Op) bool { return HasInit(op) && op != scans.OpMingruScan }

// Traffic counts the bytes an operation must move at dims d in element
// type dt, each tensor read or written once, with an initial state where
// BenchInit says the benchmark gives one:
//
//	forward:  every forward input (h0 included) + the output
//	backward: what the backward reads (the transition inputs a / A /
//	          theta, sigma / log_coeffs, log_values / k, x; h0; the
//	          output h; its gradient dh) + every gradient it writes
//
// The backward does not read b, X or givens_scan's x (their gradient is
// the adjoint itself); mingru_scan's reads x, which its gates depend on.
// ModeBackward counts the forward's bytes plus the backward's.
func Traffic(op scans.Op, d scans.Dims, dt scans.DType, mode Mode) (int64, error) {
	return traffic(op, d, dt, mode, BenchInit(op))
}

// traffic is Traffic with the initial state given when init is true.
func traffic(op scans.Op, d scans.Dims, dt scans.DType, mode Mode, init bool) (int64, error) {
	d, err := NormalizeDims(op, d)
	if err != nil {
		return 0, err
	}
	args, out, err := ArgShapes(op, d)
	if err != nil {
		return 0, err
	}
	if HasInit(op) && !init {
		args = slices.Delete(args, initIndex(op), initIndex(op)+1)
	}
	sz := func(shape []int) int64 { return int64(scans.NumElements(shape)) * int64(dt.Size()) }
	var inBytes int64
	for _, a := range args {
		inBytes += sz(a)
	}
	fwd := inBytes + sz(out)
	if mode == ModeForward {
		return fwd, nil
	}
	// Backward: reads the inputs except the additive term, h and dh;
	// writes a gradient for every input.
	skip := map[scans.Op]int{scans.OpLinearScan: 1, scans.OpMatrixScan: 1, scans.OpMatrixAffineScan: 1, scans.OpGivensScan: 2}
	var reads int64
	for i, a := range args {
		if j, ok := skip[op]; ok && j == i {
			continue
		}
		reads += sz(a)
	}
	bwd := reads + 2*sz(out) + inBytes
	return fwd + bwd, nil
}

// GateTraffic counts the bytes that the gates of the unfused minGRU chain
// move at mingru_scan's dims d in element type dt, each tensor read or
// written once, h0 absent: the gates' forward reads k and x and writes
// log_coeffs (B,T,D) and log_values (B,T+1,D) for parallel_scan_log; the
// gates' backward reads k, x and parallel_scan_log's two gradients and
// writes dk and dx. The chain is these two passes around
// parallel_scan_log's forward and backward; mingru_scan does the same
// work in one forward and one backward that keep the gates in registers.
func GateTraffic(d scans.Dims, dt scans.DType) (int64, error) {
	d, err := NormalizeDims(scans.OpMingruScan, d)
	if err != nil {
		return 0, err
	}
	btd := int64(d.B) * int64(d.T) * int64(d.N)
	values := int64(d.B) * int64(d.T+1) * int64(d.N)
	forward := 2*btd + btd + values
	backward := 2*btd + btd + values + 2*btd
	return (forward + backward) * int64(dt.Size()), nil
}

// Launches is the number of kernel launches an operation makes in the
// contract's kernel design (one workgroup per lane, no workgroup waiting
// on another): one for the forward, one more for the backward.
func Launches(mode Mode) int {
	if mode == ModeBackward {
		return 2
	}
	return 1
}

// Timing configures Measure.
type Timing struct {
	Warmup  int           // untimed runs first
	MinRuns int           // at least this many timed runs
	MaxRuns int           // at most this many
	Budget  time.Duration // stop adding runs past MinRuns once this much wall time is spent
}

// DefaultTiming is used by scanbench; QuickTiming by its --quick.
var (
	DefaultTiming = Timing{Warmup: 3, MinRuns: 10, MaxRuns: 200, Budget: time.Second}
	QuickTiming   = Timing{Warmup: 1, MinRuns: 5, MaxRuns: 30, Budget: 300 * time.Millisecond}
)

// Measurement is the timing of one operation on one backend.
type Measurement struct {
	Backend string     `json:"backend"`
	Shape   string     `json:"shape"`
	Op      scans.Op   `json:"op"`
	Mode    Mode       `json:"mode"`
	DType   string     `json:"dtype"`
	Dims    scans.Dims `json:"dims"`
	// Clock is "device" (the backend's own kernel timestamps,
	// scans.Instrumented.LastKernelTime), "device, queued" (the same, from
	// a scans.QueuedTimer with queued timing on: the device's time alone,
	// not the host's to submit the launch) or "wall" (host clock around
	// the synchronous call; the eager backend).
	Clock string `json:"clock"`
	// Cache is "cold" where every timed run followed a cache flush
	// (scans.CacheFlusher), empty on a backend without one.
	Cache string `json:"cache,omitempty"`
	Runs  int    `json:"runs"`
	// Median, P10 and P90 of the timed runs, in seconds.
	Median float64 `json:"median_s"`
	P10    float64 `json:"p10_s"`
	P90    float64 `json:"p90_s"`
	// WarmMedian is the median of as many runs without the flush (inputs
	// left in cache by the run before), where Cache is "cold".
	WarmMedian float64 `json:"warm_median_s,omitempty"`
	// WallMedian is the median host wall time from a call until its
	// results are ready (the forward's and the backward's, one after the
	// other): submission, allocation and waiting. A backend whose calls
	// return once enqueued (CUDA) is waited for, as a caller does before
	// it uses the results. Timed without a cache flush before the call,
	// as a caller's loop runs.
	WallMedian float64 `json:"wall_median_s,omitempty"`
	// WallPlain says that WallMedian was timed with the backend's queued
	// timing off, as a caller runs it. Where it is false and Clock is
	// "device, queued", WallMedian includes the busy kernel that each
	// launch was queued behind.
	WallPlain bool `json:"wall_plain,omitempty"`
	// WallReady says that WallMedian runs until the results are ready.
	// Where it is false (tables made before it), WallMedian ran until the
	// calls returned, before CUDA's kernels had finished.
	WallReady bool `json:"wall_ready,omitempty"`
	// Bytes is Traffic of the measured inputs (h0 counted where given);
	// GBps = Bytes / Median / 1e9.
	Bytes int64   `json:"bytes"`
	GBps  float64 `json:"gbps"`
	// CopyGBps is the backend's copy bandwidth measured in the same run;
	// FracCopy = GBps / CopyGBps.
	CopyGBps float64 `json:"copy_gbps,omitempty"`
	FracCopy float64 `json:"frac_copy,omitempty"`
	// Floor is the fastest the operation could run: Bytes at the copy
	// bandwidth plus one dispatch latency per launch, in seconds.
	Floor    float64 `json:"floor_s,omitempty"`
	Launches int     `json:"launches"`
	// Speedup is eager's median over this backend's median at the same
	// row (0 when eager did not run it).
	Speedup float64 `json:"speedup_vs_eager,omitempty"`
	// Skipped says why the row was not measured (empty when it was).
	Skipped string `json:"skipped,omitempty"`
}

// Measure times op at dims d in mode on b: inputs drawn from the benchmark
// distributions with rng (an initial state where BenchInit says; a nil rng
// is seeded from the clock), then MeasureInputs.
func Measure(b scans.Backend, op scans.Op, d scans.Dims, dt scans.DType, mode Mode, cfg Timing, rng *rand.Rand) (Measurement, error) {
	d, err := NormalizeDims(op, d)
	if err != nil {
		return Measurement{}, err
	}
	if err := b.Supports(op, d, dt); err != nil {
		return Measurement{}, err
	}
	in, err := InputsInit(op, d, dt, Typical, BenchInit(op), rng)
	if err != nil {
		return Measurement{}, err
	}
	return MeasureInputs(b, in, mode, cfg)
}

// MeasureInputs times in's operation in mode on b: the inputs and the
// output gradient are uploaded once; then cfg.Warmup untimed runs and
// timed runs until cfg.MinRuns and cfg.Budget are both reached (or
// cfg.MaxRuns). Each run's outputs are released after it, outside the
// timing. Device time is used when b implements scans.Instrumented (the
// forward's and the backward's LastKernelTime summed), wall time around
// the synchronous calls otherwise. A scans.QueuedTimer times queued for
// the measurement (and is left with queued timing off), so that every
// device clock counts the device's work alone, as timestamps in a
// command buffer do.
//
// On a scans.CacheFlusher each timed run is preceded, outside its timing,
// by FlushCache, so that Median is the time with inputs in device memory
// (cold cache); a second series of as many runs without it gives
// WarmMedian. WallMedian is the host's time from the calls until their
// results are ready, as a caller makes them, never right after a flush:
// of the runs (the warm ones on a scans.CacheFlusher) or, on a
// scans.QueuedTimer, of a third series of as many runs without a flush
// and with queued timing off.
func MeasureInputs(b scans.Backend, in *InputSet, mode Mode, cfg Timing) (m Measurement, err error) {
	op, d, dt := in.Op, in.Dims, in.DType
	m = Measurement{Backend: b.Name(), Op: op, Mode: mode, DType: dt.String(), Dims: d, Clock: "wall", Launches: Launches(mode)}
	if m.Bytes, err = traffic(op, d, dt, mode, in.Init()); err != nil {
		return m, err
	}
	if err := b.Supports(op, d, dt); err != nil {
		return m, err
	}
	dev, err := upload(b, append(slices.Clone(in.Args), in.Grad)...)
	if err != nil {
		return m, err
	}
	defer release(b, dev...)
	args, grad := dev[:len(in.Args)], dev[len(in.Args)]
	inst, _ := b.(scans.Instrumented)
	var queued scans.QueuedTimer
	if inst != nil {
		m.Clock = "device"
		if q, ok := b.(scans.QueuedTimer); ok {
			queued = q
			q.SetQueuedTiming(true)
			defer q.SetQueuedTiming(false)
			m.Clock = "device, queued"
		}
	}
	flusher, _ := b.(scans.CacheFlusher)
	if inst == nil {
		flusher = nil
	}

	// once runs the mode and returns its device time (its wall time on a
	// backend without a device clock) and its wall time: from the call
	// until its results are ready. A backend whose calls return once
	// their work is enqueued (CUDA) is waited for by LastKernelTime, and
	// that wait is a caller's too before it can use the results.
	once := func() (time.Duration, time.Duration, error) {
		var held []scans.Tensor
		defer func() { release(b, held...) }()
		start := time.Now()
		out, err := Forward(b, op, args)
		if err != nil {
			return 0, 0, err
		}
		held = append(held, out)
		dev := time.Duration(0)
		if inst != nil {
			t, ok := inst.LastKernelTime()
			if !ok {
				return 0, 0, errors.New("no kernel time after a forward")
			}
			dev = t
		}
		if mode == ModeBackward {
			grads, err := Backward(b, op, args, out, grad)
			if err != nil {
				return 0, 0, err
			}
			held = append(held, grads...)
			if inst != nil {
				t, ok := inst.LastKernelTime()
				if !ok {
					return 0, 0, errors.New("no kernel time after a backward")
				}
				dev += t
			}
		}
		wall := time.Since(start)
		if inst == nil {
			dev = wall
		}
		return dev, wall, nil
	}
	for i := 0; i < cfg.Warmup; i++ {
		if _, _, err := once(); err != nil {
			return m, err
		}
	}
	// series times runs (a fixed number when n > 0, else as cfg says),
	// each after a cache flush when cold.
	series := func(cold bool, n int) (devs, walls []float64, err error) {
		start := time.Now()
		for {
			if n > 0 && len(devs) == n {
				break
			}
			if n == 0 && len(devs) >= max(cfg.MinRuns, 1) && (time.Since(start) >= cfg.Budget || len(devs) >= cfg.MaxRuns) {
				break
			}
			if cold {
				if err := flusher.FlushCache(); err != nil {
					return nil, nil, err
				}
			}
			dv, wl, err := once()
			if err != nil {
				return nil, nil, err
			}
			devs, walls = append(devs, dv.Seconds()), append(walls, wl.Seconds())
		}
		slices.Sort(devs)
		slices.Sort(walls)
		return devs, walls, nil
	}
	times, walls, err := series(flusher != nil, 0)
	if err != nil {
		return m, err
	}
	m.Runs = len(times)
	m.Median, m.P10, m.P90 = quantile(times, 0.5), quantile(times, 0.1), quantile(times, 0.9)
	m.WallMedian = quantile(walls, 0.5)
	if flusher != nil {
		m.Cache = "cold"
		warm, warmWalls, err := series(false, len(times))
		if err != nil {
			return m, err
		}
		m.WarmMedian = quantile(warm, 0.5)
		// A caller's loop does not flush the cache between calls.
		m.WallMedian = quantile(warmWalls, 0.5)
	}
	if queued != nil {
		queued.SetQueuedTiming(false)
		_, plain, err := series(false, len(times))
		if err != nil {
			return m, err
		}
		m.WallMedian = quantile(plain, 0.5)
	}
	m.WallPlain, m.WallReady = true, true
	if m.Median > 0 {
		m.GBps = float64(m.Bytes) / m.Median / 1e9
	}
	return m, nil
}

// quantile of sorted xs: the empirical quantile (gonum's stat.Empirical),
// so every reported time is one that was measured, never an interpolation
// between two runs.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return stat.Quantile(q, stat.Empirical, xs, nil)
}

// SetCeiling fills the copy-bandwidth columns of m: the fraction of the
// copy bandwidth achieved and the floor, Bytes / copy bandwidth + latency
// per launch.
func (m *Measurement) SetCeiling(copyBytesPerSec float64, latency time.Duration) {
	if copyBytesPerSec <= 0 {
		return
	}
	m.CopyGBps = copyBytesPerSec / 1e9
	m.FracCopy = m.GBps / m.CopyGBps
	m.Floor = float64(m.Bytes)/copyBytesPerSec + latency.Seconds()*float64(m.Launches)
}

// HostCopyBandwidth times copying a host buffer of the given size (Go's
// copy, split across GOMAXPROCS goroutines as eager splits its lanes) and
// returns bytes moved per second, read plus written, the eager backend's
// counterpart of scans.Instrumented.CopyBandwidth.
func HostCopyBandwidth(bytes int64) float64 {
	n := max(bytes/8, 1)
	src := make([]float64, n)
	dst := make([]float64, n)
	for i := range src {
		src[i] = float64(i)
	}
	workers := int64(max(1, min(runtime.GOMAXPROCS(0), int(n))))
	parCopy := func() {
		var wg sync.WaitGroup
		for w := range workers {
			lo, hi := n*w/workers, n*(w+1)/workers
			wg.Add(1)
			go func() {
				defer wg.Done()
				copy(dst[lo:hi], src[lo:hi])
			}()
		}
		wg.Wait()
	}
	parCopy() // touch the pages
	var best time.Duration
	for i := 0; i < 5; i++ {
		start := time.Now()
		parCopy()
		if t := time.Since(start); best == 0 || t < best {
			best = t
		}
	}
	return 2 * float64(n*8) / best.Seconds()
}
