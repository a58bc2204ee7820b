package dispatch

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/mingru/scans"
)

// NewQueue implements scans.Queuer. The queue runs each call where its
// tensors live: calls on a GPU backend's tensors are enqueued on a queue
// of the backend instance that holds them (made on first use), and run
// asynchronously until
// Wait; calls on host tensors run at once, as Run runs them (they need
// the host's data anyway). A call the GPU backend declines
// (ScanFallback) runs at once under the Scanner's policy, after the work
// enqueued before it that writes its inputs.
func (s *Scanner) NewQueue() (scans.Queue, error) {
	return &queue{s: s, sub: map[scans.Backend]scans.Queue{}}, nil
}

type queue struct {
	s     *Scanner
	mu    sync.Mutex
	sub   map[scans.Backend]scans.Queue // a queue per backend instance
	order []scans.Backend               // sub's keys in the order first used
}

func (q *queue) Run(c *scans.Call) ([]scans.Tensor, error) {
	if c == nil {
		return nil, errNilCall
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	loc := callLocation(c)
	b := callOwner(c)
	if b == nil {
		b = q.s.byLocation(loc)
	}
	qr, ok := b.(scans.Queuer)
	if loc == "host" || !ok {
		return q.s.do(c)
	}
	q.mu.Lock()
	sq := q.sub[b]
	if sq == nil {
		var err error
		if sq, err = qr.NewQueue(); err != nil {
			q.mu.Unlock()
			return nil, err
		}
		q.sub[b] = sq
		q.order = append(q.order, b)
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
	for _, b := range q.order {
		if err := q.sub[b].Wait(); err != nil && first == nil {
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

// Copy returns a copy of t on backend to: through the host where t lives
// on another backend or on another instance of the same one (there is no
// direct path between devices yet). A host tensor is uploaded; a copy to
// eager is a host tensor. t is left as it is.
func Copy(t scans.Tensor, to scans.Backend) (scans.Tensor, error) {
	if scans.IsNil(t) || to == nil {
		return nil, errors.New("dispatch: Copy: nil tensor or backend")
	}
	h, ok := t.(*scans.Host)
	if !ok {
		o, ok := t.(scans.Owned)
		if !ok {
			return nil, fmt.Errorf("dispatch: Copy: a %T on %s names no backend that holds it (scans.Owned)", t, t.Location())
		}
		var err error
		if h, err = o.Owner().Download(t); err != nil {
			return nil, fmt.Errorf("dispatch: Copy: %w", err)
		}
	}
	if to.Name() == string(Eager) {
		return h.Clone(), nil
	}
	out, err := to.Upload(h)
	if err != nil {
		return nil, fmt.Errorf("dispatch: Copy: %w", err)
	}
	return out, nil
}
