package scans

import (
	"errors"
	"fmt"
	"sync"
)

// ErrClosed is returned (wrapped) by every call on a backend, queue or
// tensor after the backend's Close.
var ErrClosed = errors.New("scans: the backend is closed")

// Queue runs calls in the order they are enqueued, without waiting for
// each. A training loop enqueues a step's calls and waits once.
//
// Run checks the call and returns its results at once, as tensors of the
// queue's backend that a later call on the queue may take as arguments
// (or as Out). Their values are there once Wait has returned nil; a
// Download of one waits for the work that writes it. A bad argument is
// returned by Run itself and nothing is enqueued. A failure while the
// work runs is returned by the next Wait, naming the operation where the
// device says which; the results of the failed batch are then undefined.
// Releasing a tensor that enqueued work still uses is allowed: its memory
// is reused only after that work has run.
//
// A queue is for one goroutine at a time; goroutines that share a
// backend each make their own queue.
type Queue interface {
	Runner
	// Wait submits what is enqueued, waits for it to finish and returns
	// the first error of that work.
	Wait() error
}

// Queuer is implemented by a backend that can enqueue work. Each queue is
// independent: a CUDA stream, a Vulkan command buffer recorded until Wait.
type Queuer interface {
	NewQueue() (Queue, error)
}

// MemoryPool is implemented by a GPU backend that keeps released device
// memory for reuse, so that a loop does not allocate device memory per
// call. PeakBytes counts the memory in tensors and kernel scratch; the
// cache is counted here.
type MemoryPool interface {
	// CachedBytes is the device memory held for reuse, in no tensor.
	CachedBytes() int64
	// EmptyCache returns the cached memory to the driver.
	EmptyCache()
}

// NewImmediateQueue returns a Queue whose Run runs each call at once
// through r and whose Wait returns nil: the queue of a backend whose
// calls are synchronous anyway (eager).
func NewImmediateQueue(r Runner) Queue { return &immediate{r: r} }

type immediate struct{ r Runner }

func (q *immediate) Run(c *Call) ([]Tensor, error) { return q.r.Run(c) }
func (q *immediate) Wait() error                   { return nil }

// QueueError is what a Queue's Wait returns when enqueued work failed: the
// operations of the batch that failed, the first of them when the device
// says which, and the cause.
type QueueError struct {
	Backend string
	Ops     []string // "linear_scan forward", in enqueued order
	Err     error
}

func (e *QueueError) Error() string {
	if len(e.Ops) == 1 {
		return fmt.Sprintf("%s: queue: %s: %v", e.Backend, e.Ops[0], e.Err)
	}
	return fmt.Sprintf("%s: queue: a batch of %d operations (%s, ...): %v", e.Backend, len(e.Ops), e.Ops[0], e.Err)
}

// Unwrap returns the cause.
func (e *QueueError) Unwrap() error { return e.Err }

// Lifecycle guards a backend's Close against calls in flight: each call
// holds Enter's lock until it returns, Close waits for them and marks the
// backend closed, and later calls get ErrClosed. The zero value is open.
type Lifecycle struct {
	mu     sync.RWMutex
	closed bool
}

// Enter starts a call: it returns a function that ends it, or ErrClosed.
func (l *Lifecycle) Enter() (leave func(), err error) {
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return nil, ErrClosed
	}
	return l.mu.RUnlock, nil
}

// Close waits for the calls in flight, runs free once, and marks the
// backend closed; a second Close returns nil.
func (l *Lifecycle) Close(free func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	free()
}
