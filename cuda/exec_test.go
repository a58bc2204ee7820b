//go:build cuda

package cuda

import (
	"testing"

	"github.com/mingru/scans/conformance/conformancetest"
)

// TestExecution runs the execution paths (caller-given outputs, a
// queue's stream, goroutines with queues of their own, and 100,000 calls,
// 500 with -short, whose device memory stays flat) with outputs poisoned
// before every kernel.
func TestExecution(t *testing.T) {
	calls := 100000
	if testing.Short() {
		calls = 500
	}
	conformancetest.TestExecution(t, gpu(t), calls)
}

// TestClose checks Close with work in flight and every call after it.
func TestClose(t *testing.T) {
	conformancetest.TestClose(t, gpu(t))
}
