//go:build cuda

package cuda_test

import (
	"testing"

	"github.com/mingru/scans/cuda"
	"github.com/mingru/scans/dispatch/dispatchtest"
)

// TestInstances runs dispatchtest.TestInstances on two backends on the
// default device: each in its own right, sharing the device's primary
// context.
func TestInstances(t *testing.T) {
	first, second := cuda.New(), cuda.New()
	if st := first.Status(); !st.Available {
		t.Skipf("needs a CUDA GPU: %s", st.Reason)
	}
	defer first.Close()
	defer second.Close()
	dispatchtest.TestInstances(t, first, second)
}
