package dispatch

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/mingru/scans"
)

// NewQueue implements scans.Queuer. The queue runs each call where its
// tensors live: calls on a GPU backend's tensors are enqueued on that
// backend's own queue (made on first use), and run asynchronously until
// Wait; calls on host tensors run at once, as Run runs them (they need
// the host's data anyway). A call the GPU backend declines
// (ScanFallback) runs at once under the Scanner's policy, after the work
// enqueued before it that writes its inputs.
func (s *Scanner) NewQueue() (scans.Queue, error) {
	return &queue{s: s, sub: map[string]scans.Queue{}}, nil
}

type queue struct {
	s     *Scanner
	mu    sync.Mutex
	sub   map[string]scans.Queue
	order []string // sub's keys in the order first used
}

func (q *queue) Run(c *scans.Call) ([]scans.Tensor, error) {
	if c == nil {
		return nil, errNilCall
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	loc := callLocation(c)
	b := q.s.byLocation(loc)
	qr, ok := b.(scans.Queuer)
	if loc == "host" || !ok {
		return q.s.do(c)
	}
	q.mu.Lock()
	sq := q.sub[loc]
	if sq == nil {
		var err error
		if sq, err = qr.NewQueue(); err != nil {
			q.mu.Unlock()
			return nil, err
		}
		q.sub[loc] = sq
		q.order = append(q.order, loc)
	}
	q.mu.Unlock()
	out, err := sq.Run(c)
	var fb *scans.ScanFallback
	if errors.As(err, &fb) && q.s.choice == Auto {
		q.s.warnOnce(b.Name()+"|fallback|"+err.Error(), err.Error()+"; running eager")
		return q.s.do(c)
	}
	return out, err
}

// Wait waits for every backend queue the calls went to, and returns the
// first error.
func (q *queue) Wait() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	var first error
	for _, loc := range q.order {
		if err := q.sub[loc].Wait(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Close closes every backend of the Scanner that has a Close method
// (io.Closer): their device memory is freed, and every later call on the
// Scanner or on their tensors returns an error wrapping scans.ErrClosed.
func (s *Scanner) Close() error {
	var errs []error
	for _, b := range append([]scans.Backend{s.eager}, s.gpus...) {
		if c, ok := b.(io.Closer); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("dispatch: close %s: %w", b.Name(), err))
			}
		}
	}
	return errors.Join(errs...)
}
