package bench

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/mingru/scans"
)

// StepLayers is the depth of the training-step benchmark: each layer runs
// linear_scan and parallel_scan_log forward, then the backwards run in
// reverse order.
const StepLayers = 8

// StepSmall is the training step's smallest shape, B=1, T=16, D=64: its
// kernels take a few microseconds, so its step shows what each call costs
// the host. It is not one of SPEC's benchmark shapes (Shapes).
var StepSmall = Shape{Name: "small", B: 1, T: 16, D: 64, MatrixN: 32, AffineN: 8, AffineK: 8, AffineV: 8, GivensN: 8, GivensK: 8}

// StepResult is one backend's training step at one shape: the same calls
// made synchronously (fresh outputs, released after the step; the step
// ends when its last call has finished) and enqueued
// on one queue with outputs allocated once and reused (scans.Call.Out),
// each timed by the host's clock per step. KernelSum is the sum of the
// calls' device times, each timed alone as the benchmark rows are
// (queued timing); Batch is the device time of the queue's whole batch,
// from its first kernel to its last.
type StepResult struct {
	Backend string     `json:"backend"`
	Shape   string     `json:"shape"`
	Dims    scans.Dims `json:"dims"`
	DType   string     `json:"dtype"`
	Layers  int        `json:"layers"`
	Calls   int        `json:"calls"`
	Runs    int        `json:"runs"`

	SyncWall  float64 `json:"sync_wall_s"`
	QueueWall float64 `json:"queue_wall_s"`
	KernelSum float64 `json:"kernel_sum_s,omitempty"`
	Batch     float64 `json:"batch_device_s,omitempty"`
	// SyncRatio and QueueRatio are the walls over KernelSum.
	SyncRatio  float64 `json:"sync_ratio,omitempty"`
	QueueRatio float64 `json:"queue_ratio,omitempty"`
	Skipped    string  `json:"skipped,omitempty"`
}

// MeasureStep times the training step on b at dims d (linear_scan's B, T,
// D) in dt: StepLayers layers of linear_scan and parallel_scan_log
// forward, then their backwards in reverse order, each layer on inputs of
// its own, warm (no cache flush between steps).
func MeasureStep(b scans.Backend, shape string, d scans.Dims, dt scans.DType, cfg Timing, rng *rand.Rand) (StepResult, error) {
	r := StepResult{Backend: b.Name(), Shape: shape, Dims: d, DType: dt.String(), Layers: StepLayers, Calls: 4 * StepLayers}
	q, ok := b.(scans.Queuer)
	if !ok {
		return r, errors.New("no queues")
	}
	rng = orClock(rng)
	// Per layer: linear_scan's a, x and gradient; parallel_scan_log's
	// log_coeffs, log_values and gradient.
	var hosts []*scans.Host
	for range StepLayers {
		for _, op := range []scans.Op{scans.OpLinearScan, scans.OpParallelScanLog} {
			in, err := InputsInit(op, d, dt, Typical, false, rng)
			if err != nil {
				return r, err
			}
			hosts = append(hosts, in.Args[0], in.Args[1], in.Grad)
		}
	}
	dev, err := upload(b, hosts...)
	if err != nil {
		return r, err
	}
	defer release(b, dev...)
	lin := func(l int) (a, x, g scans.Tensor) { return dev[6*l], dev[6*l+1], dev[6*l+2] }
	lg := func(l int) (c, v, g scans.Tensor) { return dev[6*l+3], dev[6*l+4], dev[6*l+5] }

	// step runs the step through run; out, when not nil, gives each call
	// its outputs (in call order) and the results are not released.
	step := func(run scans.Runner, out [][]scans.Tensor, times *[]time.Duration) error {
		var held []scans.Tensor
		defer func() { release(b, held...) }()
		inst, _ := b.(scans.Instrumented)
		n := 0
		do := func(op scans.Op, dir scans.Direction, args ...scans.Tensor) ([]scans.Tensor, error) {
			c := &scans.Call{Op: op, Dir: dir, Args: args}
			if out != nil {
				c.Out = out[n]
			}
			n++
			res, err := run.Run(c)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", op, dir, err)
			}
			if times != nil && inst != nil {
				t, ok := inst.LastKernelTime()
				if !ok {
					return nil, errors.New("no kernel time")
				}
				*times = append(*times, t)
			}
			if out == nil {
				for _, t := range res {
					if !scans.IsNil(t) {
						held = append(held, t)
					}
				}
			}
			return res, nil
		}
		hl := make([]scans.Tensor, StepLayers)
		hg := make([]scans.Tensor, StepLayers)
		for l := range StepLayers {
			a, x, _ := lin(l)
			res, err := do(scans.OpLinearScan, scans.Forward, a, x, nil)
			if err != nil {
				return err
			}
			hl[l] = res[0]
			c, v, _ := lg(l)
			if res, err = do(scans.OpParallelScanLog, scans.Forward, c, v); err != nil {
				return err
			}
			hg[l] = res[0]
		}
		for l := StepLayers - 1; l >= 0; l-- {
			c, v, g := lg(l)
			if _, err := do(scans.OpParallelScanLog, scans.Backward, c, v, hg[l], g); err != nil {
				return err
			}
			a, x, g := lin(l)
			if _, err := do(scans.OpLinearScan, scans.Backward, a, x, nil, hl[l], g); err != nil {
				return err
			}
		}
		return nil
	}

	// The outputs the queued step reuses, in call order.
	var outs [][]scans.Tensor
	defer func() {
		for _, o := range outs {
			release(b, o...)
		}
	}()
	alloc := func(shapes ...[]int) ([]scans.Tensor, error) {
		o := make([]scans.Tensor, len(shapes))
		for i, s := range shapes {
			if s == nil {
				continue
			}
			h, err := scans.NewHost(dt, s...)
			if err != nil {
				return nil, err
			}
			if o[i], err = b.Upload(h); err != nil {
				return nil, err
			}
		}
		outs = append(outs, o)
		return o, nil
	}
	btd, logv := []int{d.B, d.T, d.N}, []int{d.B, d.T + 1, d.N}
	fwdOut := make([][]scans.Tensor, 0, 2*StepLayers)
	for range StepLayers {
		for range 2 {
			o, err := alloc(btd)
			if err != nil {
				return r, err
			}
			fwdOut = append(fwdOut, o)
		}
	}
	order := slices.Clone(fwdOut)
	for range StepLayers {
		o, err := alloc(btd, logv)
		if err != nil {
			return r, err
		}
		order = append(order, o)
		if o, err = alloc(btd, btd, nil); err != nil {
			return r, err
		}
		order = append(order, o)
	}
	qu, err := q.NewQueue()
	if err != nil {
		return r, err
	}
	queued := func() error {
		if err := step(qu, order, nil); err != nil {
			return err
		}
		return qu.Wait()
	}
	// The synchronous step ends when its last call has finished: a
	// backend whose calls return once enqueued (CUDA) is waited for.
	syncStep := func() error {
		if err := step(b, nil, nil); err != nil {
			return err
		}
		if inst, ok := b.(scans.Instrumented); ok {
			inst.LastKernelTime()
		}
		return nil
	}
	for range max(cfg.Warmup, 1) {
		if err := syncStep(); err != nil {
			return r, err
		}
		if err := queued(); err != nil {
			return r, err
		}
	}
	var syncWalls, queueWalls, batches []float64
	start := time.Now()
	for len(syncWalls) < max(cfg.MinRuns, 1) || (time.Since(start) < cfg.Budget && len(syncWalls) < cfg.MaxRuns) {
		t0 := time.Now()
		if err := syncStep(); err != nil {
			return r, err
		}
		syncWalls = append(syncWalls, time.Since(t0).Seconds())
		t0 = time.Now()
		if err := queued(); err != nil {
			return r, err
		}
		queueWalls = append(queueWalls, time.Since(t0).Seconds())
		if inst, ok := b.(scans.Instrumented); ok {
			if t, ok := inst.LastKernelTime(); ok {
				batches = append(batches, t.Seconds())
			}
		}
	}
	slices.Sort(syncWalls)
	slices.Sort(queueWalls)
	slices.Sort(batches)
	r.Runs = len(syncWalls)
	r.SyncWall, r.QueueWall = quantile(syncWalls, 0.5), quantile(queueWalls, 0.5)
	if len(batches) > 0 {
		r.Batch = quantile(batches, 0.5)
	}
	// The calls' own device times, queued timing on as in the rows.
	if _, ok := b.(scans.Instrumented); ok {
		if qt, ok := b.(scans.QueuedTimer); ok {
			qt.SetQueuedTiming(true)
			defer qt.SetQueuedTiming(false)
		}
		sums := make([]float64, 0, r.Runs)
		for range r.Runs {
			var times []time.Duration
			if err := step(b, nil, &times); err != nil {
				return r, err
			}
			s := 0.0
			for _, t := range times {
				s += t.Seconds()
			}
			sums = append(sums, s)
		}
		slices.Sort(sums)
		r.KernelSum = quantile(sums, 0.5)
		r.SyncRatio, r.QueueRatio = r.SyncWall/r.KernelSum, r.QueueWall/r.KernelSum
	}
	return r, nil
}
