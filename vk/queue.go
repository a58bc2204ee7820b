//go:build cgo

package vk

import (
	"fmt"
	"sync"
	"time"

	"github.com/mingru/scans"
)

// Queue is a queue of operations on one Vulkan backend (scans.Queue). Run
// checks a call, takes its outputs from the pool (or the call's Out) and
// plans its dispatches, and returns. Every queueChunk operations are
// recorded into one command buffer, in order, with a barrier before a
// dispatch that shares bytes of a buffer with one since the last barrier
// (independent operations run side by side), and submitted without
// waiting, so that the device starts while the host enqueues the rest;
// Wait submits what is left and waits for the fences. A Download of a tensor that enqueued
// work writes waits for the queue's work first. Make one with
// Backend.NewQueue.
type Queue struct {
	b  *Backend
	mu sync.Mutex
	// Since the last Wait: the operations not yet submitted, those
	// submitted (and the contexts they were submitted in, in order),
	// every tensor they use (counted in its uses) and the first failure
	// of a batch that a Download ran.
	ops       []*batchOp
	submitted []*batchOp
	ctxs      []*execCtx
	used      []*Tensor
	err       error
}

// queueChunk is how many operations a queue records into one command
// buffer before it submits them.
const queueChunk = 4

var _ scans.Queue = (*Queue)(nil)

// NewQueue implements scans.Queuer.
func (b *Backend) NewQueue() (scans.Queue, error) {
	leave, err := b.life.Enter()
	if err != nil {
		return nil, fmt.Errorf("vulkan: NewQueue: %w", err)
	}
	defer leave()
	if _, err := b.device(); err != nil {
		return nil, b.unavailable()
	}
	return &Queue{b: b}, nil
}

// Run enqueues c (see scans.Queue).
func (q *Queue) Run(c *scans.Call) ([]scans.Tensor, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.b.run(c, q)
}

// Wait implements scans.Queue.
func (q *Queue) Wait() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	leave, err := q.b.life.Enter()
	if err != nil {
		q.drop()
		return &scans.QueueError{Backend: "vulkan", Ops: []string{"wait"}, Err: err}
	}
	defer leave()
	err = q.flush()
	if q.err != nil {
		err, q.err = q.err, nil
	}
	return err
}

// drop forgets the enqueued work of a closed backend (whose device, and
// the contexts with it, Close destroyed).
func (q *Queue) drop() {
	q.ops, q.submitted, q.ctxs, q.used, q.err = nil, nil, nil, nil, nil
}

// enqueue plans the call's kernels and adds them to its queue, counting
// every tensor they use so that a Release waits for them.
func (c *call) enqueue(ks []kernel) error {
	op, err := c.dev.plan(ks, int64(c.dims.B), c.b.poison)
	if err != nil {
		c.freeScratch()
		return c.failed(err)
	}
	op.op, op.dir = c.op, c.dir
	op.scratch, c.scratch = c.scratch, nil
	q := c.q
	q.ops = append(q.ops, op)
	if len(q.ops) >= queueChunk {
		if err := q.post(); err != nil && q.err == nil {
			q.err = &scans.QueueError{Backend: "vulkan", Ops: opNames(q.submitted), Err: err}
		}
	}
	b := c.b
	b.tmu.Lock()
	for _, t := range c.ins {
		if t != nil {
			t.uses++
			q.used = append(q.used, t)
		}
	}
	for _, t := range c.written {
		t.uses++
		t.writer = q
		q.used = append(q.used, t)
	}
	b.tmu.Unlock()
	return nil
}

// post records the operations not yet submitted into a context of their
// own and submits them without waiting. The caller holds q.mu and is
// inside the backend's lifecycle.
func (q *Queue) post() error {
	if len(q.ops) == 0 {
		return nil
	}
	d := q.b.dev
	ops := q.ops
	q.ops = nil
	q.submitted = append(q.submitted, ops...)
	c, err := d.getCtx()
	if err != nil {
		return err
	}
	// Each chunk leads with a barrier, ordering it after every earlier
	// submission (this queue's, and any other's).
	if _, err := d.record(c, ops, true); err != nil {
		d.putCtx(c)
		return err
	}
	if err := d.post(c); err != nil {
		d.putCtx(c)
		return err
	}
	q.ctxs = append(q.ctxs, c)
	return nil
}

// flush submits what is enqueued, waits for every submission and returns
// the first error. The caller holds q.mu and is inside the backend's
// lifecycle.
func (q *Queue) flush() error {
	if len(q.ops) == 0 && len(q.ctxs) == 0 {
		return nil
	}
	err := q.post()
	ops, ctxs, used := q.submitted, q.ctxs, q.used
	q.submitted, q.ctxs, q.used = nil, nil, nil
	b := q.b
	d := b.dev
	for _, c := range ctxs {
		if werr := d.await(c); werr != nil && err == nil {
			err = werr
		}
	}
	if err == nil {
		err = d.checkOpGuards(ops)
	}
	var dur time.Duration
	timed := err == nil && len(ctxs) > 0 && ctxs[0].hasQry
	if timed {
		first, ferr := d.rawTimestamps(ctxs[0], 2)
		last, lerr := d.rawTimestamps(ctxs[len(ctxs)-1], 2)
		if ferr != nil || lerr != nil {
			timed = false
		} else {
			dur = d.ticks(first[0], last[1])
		}
	}
	for _, c := range ctxs {
		d.putCtx(c)
	}
	for _, op := range ops {
		for _, s := range op.scratch {
			d.free(s)
		}
	}
	b.tmu.Lock()
	var free []*buffer
	for _, t := range used {
		t.uses--
		if t.writer == q {
			t.writer = nil
		}
		if t.uses == 0 && t.freeLater {
			free = append(free, t.buf)
			t.buf, t.freeLater = nil, false
		}
	}
	b.tmu.Unlock()
	for _, buf := range free {
		d.free(buf)
	}
	if err != nil {
		return &scans.QueueError{Backend: "vulkan", Ops: opNames(ops), Err: err}
	}
	b.last.set(dur, timed)
	return nil
}

// settle runs the work of the queue that writes t, if any, before t is
// read; a failure is also kept for that queue's next Wait.
func (b *Backend) settle(t *Tensor) error {
	b.tmu.Lock()
	q := t.writer
	b.tmu.Unlock()
	if q == nil {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	err := q.flush()
	if err != nil && q.err == nil {
		q.err = err
	}
	return err
}

// opNames names the operations of a batch for a QueueError.
func opNames(ops []*batchOp) []string {
	names := make([]string, len(ops))
	for i, op := range ops {
		names[i] = fmt.Sprintf("%s %s", op.op, op.dir)
	}
	return names
}
