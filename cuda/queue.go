//go:build cuda

package cuda

/*
#include <cuda.h>
*/
import "C"

import (
	"fmt"
	"sync"
	"time"

	"github.com/mingru/scans"
)

// Queue is a queue of operations on one CUDA backend (scans.Queue): a
// stream of its own. Run checks a call, takes its outputs from the pool
// (or the call's Out) and launches its kernel on the stream without
// waiting; Wait waits for the stream once. The stream orders with the
// default stream, on which the backend's synchronous calls and transfers
// run, so a Download waits for the queued work before it. Make one with
// Backend.NewQueue.
type Queue struct {
	b      *Backend
	mu     sync.Mutex
	stream C.CUstream
	// start and stop bracket a batch: start is recorded before its first
	// launch, stop at Wait.
	start, stop C.CUevent
	// Since the last Wait (guarded by b.devMu): the operations launched
	// and every tensor they use (counted in its uses).
	ops  []queuedOp
	used []*Tensor
}

// queuedOp is an operation a queue launched, named in a failed Wait's
// error.
type queuedOp struct {
	op  scans.Op
	dir scans.Direction
}

var _ scans.Queue = (*Queue)(nil)

// NewQueue implements scans.Queuer: a queue on a new stream.
func (b *Backend) NewQueue() (scans.Queue, error) {
	q := &Queue{b: b}
	err := b.do(func() error {
		var err error
		if q.stream, err = streamCreate(); err != nil {
			return err
		}
		if q.start, err = eventCreate(); err != nil {
			streamDestroy(q.stream)
			return err
		}
		if q.stop, err = eventCreate(); err != nil {
			streamDestroy(q.stream)
			eventDestroy(q.start)
			return err
		}
		b.queues = append(b.queues, q)
		return nil
	})
	if err != nil {
		return nil, wrapUnavailable("new queue", err)
	}
	return q, nil
}

// Run enqueues c (see scans.Queue).
func (q *Queue) Run(c *scans.Call) ([]scans.Tensor, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.b.runCall(c, q)
}

// launch launches a planned kernel on the queue's stream and counts the
// tensors it uses. It runs under do.
func (q *Queue) launch(p *plan, f C.CUfunction, name string, params []uint64, args, outs []*Tensor) error {
	if len(q.ops) == 0 {
		if err := eventRecord(q.start, q.stream); err != nil {
			return err
		}
	}
	if err := launch(q.stream, name, f, p.grid, p.bx, p.by, p.shared, params); err != nil {
		return err
	}
	q.ops = append(q.ops, queuedOp{p.op, p.dir})
	for _, ts := range [][]*Tensor{args, outs} {
		for _, t := range ts {
			if t != nil {
				t.uses++
				q.used = append(q.used, t)
			}
		}
	}
	return nil
}

// Wait implements scans.Queue: it waits for the stream, frees what was
// released while the work used it, and records the batch's device time
// (LastKernelTime) from the events around it.
func (q *Queue) Wait() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	b := q.b
	var ops []queuedOp
	err := b.do(func() error {
		ops = q.ops
		if len(ops) == 0 {
			return nil
		}
		rerr := eventRecord(q.stop, q.stream)
		serr := streamSynchronize(q.stream)
		for _, t := range q.used {
			t.uses--
			if t.uses == 0 && t.freeLater {
				p := t.ptr
				t.ptr, t.freeLater = 0, false
				if !t.external {
					b.free(p)
				}
			}
		}
		clear(q.used)
		q.ops, q.used = q.ops[:0], q.used[:0]
		if serr != nil {
			return serr
		}
		if rerr != nil {
			return rerr
		}
		ms, err := eventElapsed(q.start, q.stop)
		if err != nil {
			return err
		}
		b.mu.Lock()
		b.lastTime, b.hasTime, b.timePending = time.Duration(ms*float64(time.Millisecond)), true, false
		b.mu.Unlock()
		return nil
	})
	if err != nil {
		names := []string{"wait"}
		if len(ops) > 0 {
			names = make([]string, len(ops))
			for i, o := range ops {
				names[i] = fmt.Sprintf("%s %s", o.op, o.dir)
			}
		}
		return &scans.QueueError{Backend: backendName, Ops: names, Err: err}
	}
	return nil
}
