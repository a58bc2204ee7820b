package vk

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/mingru/scans/conformance/conformancetest"
)

// The tests run with the Khronos validation layer (MINGRU_VK_VALIDATION=1
// unless the environment sets it) and fail on any message it reports. On a
// machine without the layer they run without it, and say so, rather than
// skip.
func TestMain(m *testing.M) {
	if os.Getenv("MINGRU_VK_VALIDATION") == "" {
		os.Setenv("MINGRU_VK_VALIDATION", "1")
		if st := New().Status(); !st.Available && strings.Contains(st.Reason, "VK_LAYER_KHRONOS_validation is not installed") {
			fmt.Fprintln(os.Stderr, "vk tests: the validation layer is not installed; running without it")
			os.Setenv("MINGRU_VK_VALIDATION", "0")
		}
	}
	os.Exit(m.Run())
}

// sharedDevice is the device the package's tests share, opened once:
// each test's backend has a configuration of its own but the same
// device, so that a pipeline is compiled once per process (on a CPU
// device, compiling is most of a test's time).
var sharedDevice struct {
	once sync.Once
	b    *Backend
}

// testBackend returns a backend for a test, on the shared device, or
// skips the test with the reason when no Vulkan device is present. Its
// Close leaves the device open; a test of Close itself uses New. It
// registers a check that the validation layer reported nothing while the
// test ran.
func testBackend(t *testing.T) *Backend {
	t.Helper()
	sharedDevice.once.Do(func() { sharedDevice.b = New() })
	st := sharedDevice.b.Status()
	if !st.Available {
		t.Skipf("no Vulkan device: %s", st.Reason)
	}
	b := newBackend(sharedDevice.b.cfg)
	b.dev, b.shareDev = sharedDevice.b.dev, true
	b.once.Do(func() {})
	validationMessages() // start clean
	t.Cleanup(func() { failOnValidation(t) })
	return b
}

func failOnValidation(t *testing.T) {
	t.Helper()
	msgs := validationMessages()
	for i, m := range msgs {
		if i == 10 {
			t.Errorf("... and %d more validation messages", len(msgs)-10)
			break
		}
		t.Errorf("validation: %s", m)
	}
}

// TestConformance runs the shared conformance matrix against eager (quick
// with -short).
func TestConformance(t *testing.T) {
	b := testBackend(t)
	if os.Getenv("MINGRU_VK_VALIDATION") == "1" {
		t.Logf("validation layer enabled")
	}
	conformancetest.TestBackend(t, b, testing.Short())
}

// fullTier skips, with -short, a test of kernel paths or layouts that
// the conformance matrix does not reach: on a CPU device each compiles
// pipelines of its own, which takes minutes on two cores. The full tier
// (go test without -short; scripts/gpu-run.sh conformance on a GPU) runs
// them.
func fullTier(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("the full tier runs it (go test without -short)")
	}
}

func shapeStr(s []int) string {
	parts := make([]string, len(s))
	for i, n := range s {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ",")
}

// benchDevice opens a backend of its own for a benchmark (closed when it
// ends) and its device, or skips the benchmark where there is none.
func benchDevice(b *testing.B) (*Backend, *device) {
	if os.Getenv("MINGRU_VK_VALIDATION") == "1" {
		b.Log("the validation layer is on: its checks are timed too")
	}
	be := New()
	b.Cleanup(func() { be.Close() })
	d, err := be.device()
	if err != nil {
		b.Skip(be.Status().Reason)
	}
	return be, d
}

// BenchmarkCalls times the host's cost of a call, synchronous or queued
// (conformancetest.BenchmarkCalls). The validation layer multiplies that
// cost: run it with MINGRU_VK_VALIDATION=0 go test -run '^$' -bench Calls
// ./vk.
func BenchmarkCalls(b *testing.B) {
	be, _ := benchDevice(b)
	conformancetest.BenchmarkCalls(b, be)
}

// BenchmarkCallsRecorded is BenchmarkCalls with every synchronous call
// recorded anew, as before a repeated call's recording was submitted
// again: the difference is what recording costs.
func BenchmarkCallsRecorded(b *testing.B) {
	be, d := benchDevice(b)
	d.noReplay = true
	conformancetest.BenchmarkCalls(b, be)
}

// BenchmarkSubmit times the round trip of an empty command buffer (one
// submit, one fence wait, one fence reset), the least any synchronous
// call costs on the device.
func BenchmarkSubmit(b *testing.B) {
	_, d := benchDevice(b)
	c, err := d.getCtx()
	if err != nil {
		b.Fatal(err)
	}
	defer d.putCtx(c)
	if err := d.begin(c); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := d.submit(c); err != nil {
			b.Fatal(err)
		}
	}
}
