package bench

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/eager"
)

// queuedGPU is eager with device-like instrumentation and a queued-timing
// switch; it records whether each operation ran with the switch on.
type queuedGPU struct {
	*eager.Backend
	mu       sync.Mutex
	on       bool
	ops, off int // operations run, and those run with the switch off
	last     time.Duration
}

func (q *queuedGPU) SetQueuedTiming(on bool) {
	q.mu.Lock()
	q.on = on
	q.mu.Unlock()
}

func (q *queuedGPU) count() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.ops++
	if !q.on {
		q.off++
	}
	q.last = time.Duration(1+rand.IntN(100)) * time.Microsecond
}

func (q *queuedGPU) Run(c *scans.Call) ([]scans.Tensor, error) {
	q.count()
	return q.Backend.Run(c)
}

func (q *queuedGPU) LastKernelTime() (time.Duration, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.last, q.ops > 0
}
func (*queuedGPU) PeakBytes() int64                        { return 0 }
func (*queuedGPU) ResetPeakBytes()                         {}
func (*queuedGPU) CopyBandwidth(int64) (float64, error)    { return 1e11, nil }
func (*queuedGPU) DispatchLatency() (time.Duration, error) { return time.Microsecond, nil }

var (
	_ scans.Instrumented = (*queuedGPU)(nil)
	_ scans.QueuedTimer  = (*queuedGPU)(nil)
)

// A backend that can time queued is timed queued, every run whose device
// time is kept (warm-up included); a last series of as many runs, with
// queued timing off, gives the host wall time; the backend is left with
// queued timing off, and the clock says so.
func TestMeasureQueued(t *testing.T) {
	q := &queuedGPU{Backend: eager.New()}
	in := smallInputs(t)
	for _, mode := range []Mode{ModeForward, ModeBackward} {
		q.ops, q.off = 0, 0
		m, err := MeasureInputs(q, in, mode, Timing{Warmup: 1, MinRuns: 3, MaxRuns: 3})
		if err != nil {
			t.Fatal(err)
		}
		per := Launches(mode)
		if wantQ, wantOff := per*(1+3), per*3; q.ops-q.off != wantQ || q.off != wantOff {
			t.Errorf("%s: %d operations queued, %d not; want %d and %d", mode, q.ops-q.off, q.off, wantQ, wantOff)
		}
		if !m.WallPlain || m.WallMedian <= 0 {
			t.Errorf("%s: wall median %g, plain %v; want a positive time, plain", mode, m.WallMedian, m.WallPlain)
		}
		if q.on {
			t.Errorf("%s: queued timing left on", mode)
		}
		if m.Clock != "device, queued" || m.Median <= 0 {
			t.Errorf("%s: clock %q, median %g; want device, queued and a positive time", mode, m.Clock, m.Median)
		}
	}
}

// coldGPU is queuedGPU with a cache to flush: an operation that follows a
// flush takes 10 µs, one that follows another operation 1 µs.
type coldGPU struct {
	queuedGPU
	flushes int
	cold    bool
}

func (c *coldGPU) FlushCache() error {
	c.flushes++
	c.cold = true
	return nil
}

func (c *coldGPU) Run(call *scans.Call) ([]scans.Tensor, error) {
	out, err := c.queuedGPU.Run(call)
	c.took()
	return out, err
}

func (c *coldGPU) took() {
	c.last = time.Microsecond
	if c.cold {
		c.last = 10 * time.Microsecond
	}
	c.cold = false
}

var _ scans.CacheFlusher = (*coldGPU)(nil)

// A backend with a cache to flush is timed cold (a flush before every
// timed run, none before the warm-up), then warm for as many runs; the
// wall time of the calls is reported beside.
func TestMeasureCold(t *testing.T) {
	c := &coldGPU{queuedGPU: queuedGPU{Backend: eager.New()}}
	in := smallInputs(t)
	for _, mode := range []Mode{ModeForward, ModeBackward} {
		c.flushes, c.ops = 0, 0
		m, err := MeasureInputs(c, in, mode, Timing{Warmup: 2, MinRuns: 3, MaxRuns: 3})
		if err != nil {
			t.Fatal(err)
		}
		cold, warm := 10*time.Microsecond, time.Microsecond
		if mode == ModeBackward {
			cold, warm = 11*time.Microsecond, 2*time.Microsecond
		}
		if m.Cache != "cold" || m.Runs != 3 || c.flushes != 3 {
			t.Errorf("%s: cache %q, %d runs, %d flushes; want cold, 3, 3", mode, m.Cache, m.Runs, c.flushes)
		}
		if m.Median != cold.Seconds() || m.WarmMedian != warm.Seconds() {
			t.Errorf("%s: median %g, warm %g; want %g and %g", mode, m.Median, m.WarmMedian, cold.Seconds(), warm.Seconds())
		}
		if per := Launches(mode); c.ops != per*(2+3+3+3) {
			t.Errorf("%s: %d operations, want %d (warm-up, cold, warm and wall series)", mode, c.ops, per*11)
		}
		if m.WallMedian <= 0 {
			t.Errorf("%s: wall median %g", mode, m.WallMedian)
		}
	}
}

// slowAfterFlush is eager with device-like instrumentation and a cache
// to flush, but no queued timing (as Vulkan): its first call after a
// flush blocks the host for afterFlush.
type slowAfterFlush struct {
	*eager.Backend
	flushed bool
}

const afterFlush = 50 * time.Millisecond

func (s *slowAfterFlush) FlushCache() error { s.flushed = true; return nil }

func (s *slowAfterFlush) Run(call *scans.Call) ([]scans.Tensor, error) {
	if s.flushed {
		time.Sleep(afterFlush)
		s.flushed = false
	}
	return s.Backend.Run(call)
}

func (*slowAfterFlush) LastKernelTime() (time.Duration, bool)   { return time.Microsecond, true }
func (*slowAfterFlush) PeakBytes() int64                        { return 0 }
func (*slowAfterFlush) ResetPeakBytes()                         {}
func (*slowAfterFlush) CopyBandwidth(int64) (float64, error)    { return 1e11, nil }
func (*slowAfterFlush) DispatchLatency() (time.Duration, error) { return time.Microsecond, nil }

var (
	_ scans.Instrumented = (*slowAfterFlush)(nil)
	_ scans.CacheFlusher = (*slowAfterFlush)(nil)
)

// The wall time of a call is timed as a caller's loop runs it, never
// right after a cache flush, on a backend without queued timing too.
func TestWallNotAfterFlush(t *testing.T) {
	s := &slowAfterFlush{Backend: eager.New()}
	in := smallInputs(t)
	m, err := MeasureInputs(s, in, ModeForward, Timing{Warmup: 1, MinRuns: 3, MaxRuns: 3})
	if err != nil {
		t.Fatal(err)
	}
	if m.Cache != "cold" || m.Clock != "device" {
		t.Fatalf("cache %q, clock %q; want cold and device", m.Cache, m.Clock)
	}
	if m.WallMedian <= 0 || m.WallMedian >= afterFlush.Seconds()/2 {
		t.Errorf("wall median %v: want the time of calls that follow no flush", time.Duration(m.WallMedian*1e9))
	}
}

// asyncGPU is queuedGPU whose calls return once enqueued (as CUDA's do):
// the work of each takes pending, which LastKernelTime waits for.
type asyncGPU struct {
	queuedGPU
	issued time.Time
}

const pending = 20 * time.Millisecond

func (a *asyncGPU) Run(c *scans.Call) ([]scans.Tensor, error) {
	a.issued = time.Now()
	return a.queuedGPU.Run(c)
}

func (a *asyncGPU) LastKernelTime() (time.Duration, bool) {
	time.Sleep(time.Until(a.issued.Add(pending)))
	return a.queuedGPU.LastKernelTime()
}

// The wall time of a call runs until its results are ready: on a backend
// whose calls return before their work is done, the wait is counted, for
// each call of the mode.
func TestWallWaitsForResults(t *testing.T) {
	a := &asyncGPU{queuedGPU: queuedGPU{Backend: eager.New()}}
	in := smallInputs(t)
	for _, mode := range []Mode{ModeForward, ModeBackward} {
		m, err := MeasureInputs(a, in, mode, Timing{Warmup: 1, MinRuns: 3, MaxRuns: 3})
		if err != nil {
			t.Fatal(err)
		}
		want := time.Duration(Launches(mode)) * pending
		if got := time.Duration(m.WallMedian * 1e9); got < want {
			t.Errorf("%s: wall median %v; want at least %v, the wait for the results", mode, got, want)
		}
	}
}

// smallInputs draws fresh inputs of a small linear_scan, h0 given.
func smallInputs(t *testing.T) *InputSet {
	t.Helper()
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	in, err := InputsInit(scans.OpLinearScan, scans.Dims{B: 2, T: 5, N: 3, K: 1, V: 1}, scans.F32, Typical, true, rng)
	if err != nil {
		t.Fatal(err)
	}
	return in
}
