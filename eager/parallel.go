package eager

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/mingru/scans"
)

// serialWork is the amount of work (lane steps times per-step cost, roughly
// flops) below which a kernel runs on the calling goroutine: starting
// workers would cost more than it saves.
const serialWork = 1 << 15

// tasksPerWorker is how many chunks each worker gets on average, so that
// uneven chunks (the last one of a row is shorter) still balance.
const tasksPerWorker = 4

// forLanes runs fn over every lane (b, n) of d, in chunks of contiguous
// channels n0 <= n < n1 of one batch row b. Chunks run on a pool of
// runtime.GOMAXPROCS(0) goroutines that take chunks from a shared counter;
// each chunk is one call of fn, which scans its lanes sequentially in T.
// laneCost is the work of one lane over all T steps; small calls run on the
// calling goroutine. A panic inside fn is re-raised on the calling
// goroutine after every worker has stopped, so that the caller can recover
// it.
func forLanes(d scans.Dims, laneCost int, fn func(b, n0, n1 int)) {
	workers := runtime.GOMAXPROCS(0)
	lanes := d.B * d.N
	if workers == 1 || lanes == 1 || lanes*laneCost < serialWork {
		for b := 0; b < d.B; b++ {
			fn(b, 0, d.N)
		}
		return
	}
	// Split each batch row into perRow chunks, enough that there are about
	// tasksPerWorker chunks per worker overall, but never below one lane.
	perRow := (tasksPerWorker*workers + d.B - 1) / d.B
	perRow = max(1, min(perRow, d.N))
	chunk := (d.N + perRow - 1) / perRow
	perRow = (d.N + chunk - 1) / chunk
	tasks := d.B * perRow
	workers = min(workers, tasks)

	var (
		next   atomic.Int64
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed any
	)
	wg.Add(workers)
	for w := 0; w < workers; w++ {
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					mu.Lock()
					if failed == nil {
						failed = r
					}
					mu.Unlock()
				}
			}()
			for {
				i := int(next.Add(1) - 1)
				if i >= tasks {
					return
				}
				b := i / perRow
				n0 := (i % perRow) * chunk
				fn(b, n0, min(n0+chunk, d.N))
			}
		}()
	}
	wg.Wait()
	if failed != nil {
		panic(fmt.Sprint("in a worker: ", failed))
	}
}
