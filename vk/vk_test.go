package vk

import (
	"fmt"
	"os"
	"strings"
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

// testBackend returns a backend for a test, or skips the test with the
// reason when no Vulkan device is present. It registers a check that the
// validation layer reported nothing while the test ran.
func testBackend(t *testing.T) *Backend {
	t.Helper()
	b := New()
	st := b.Status()
	if !st.Available {
		t.Skipf("no Vulkan device: %s", st.Reason)
	}
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

func shapeStr(s []int) string {
	parts := make([]string, len(s))
	for i, n := range s {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ",")
}
