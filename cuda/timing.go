//go:build cuda

package cuda

/*
#include <cuda.h>
*/
import "C"

import (
	"fmt"
	"sort"
	"time"

	"github.com/mingru/scans"
)

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
