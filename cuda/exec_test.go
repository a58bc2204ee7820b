//go:build cuda

package cuda

import (
	"strings"
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

// TestDevices lists the devices and checks that a backend on an ordinal
// with no device says so.
func TestDevices(t *testing.T) {
	b := gpu(t)
	list, err := b.Devices()
	if err != nil || len(list) == 0 {
		t.Fatalf("Devices: %v, %v", list, err)
	}
	for i, d := range list {
		if d.Backend != "cuda" || d.Index != i || d.Name == "" || d.Memory <= 0 {
			t.Errorf("device %d: %+v", i, d)
		}
	}
	if got := b.Status().Device; got != list[0].Name {
		t.Errorf("the default backend runs on %q, want ordinal 0, %q", got, list[0].Name)
	}
	missing := NewOn(len(list))
	if st := missing.Status(); st.Available || !strings.Contains(st.Reason, "ordinal") {
		t.Errorf("NewOn(%d): %v, want unavailable naming the ordinal", len(list), st)
	}
}
