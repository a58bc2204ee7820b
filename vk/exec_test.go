package vk

import (
	"testing"

	"github.com/mingru/scans/conformance/conformancetest"
)

// TestExecution runs the execution paths (caller-given outputs, the
// queue's batched submission, goroutines with queues of their own, and a
// loop of calls whose device memory stays flat: 100,000 calls on a GPU,
// 10,000 on a CPU device, 2,000 with -short) with outputs poisoned before
// every kernel.
func TestExecution(t *testing.T) {
	b := testBackend(t)
	b.poison = true
	calls := 100000
	if b.Status().Software {
		calls = 10000
	}
	if testing.Short() {
		calls = 2000
	}
	conformancetest.TestExecution(t, b, calls)
}

// TestClose checks Close with work in flight and every call after it.
func TestClose(t *testing.T) {
	testBackend(t)                      // skips without a device; checks the validation layer
	conformancetest.TestClose(t, New()) // a device of its own, which Close destroys
}
