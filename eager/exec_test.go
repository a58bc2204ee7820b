package eager_test

import (
	"testing"

	"github.com/mingru/scans/conformance/conformancetest"
	"github.com/mingru/scans/eager"
)

// TestExecution runs the execution paths (caller-given outputs, the
// queue, goroutines with queues of their own) on eager.
func TestExecution(t *testing.T) {
	conformancetest.TestExecution(t, eager.New(), 0)
}

// TestClose checks that calls after Close fail with ErrClosed.
func TestClose(t *testing.T) {
	conformancetest.TestClose(t, eager.New())
}
