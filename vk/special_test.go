//go:build cgo

package vk

import (
	"testing"

	"github.com/mingru/scans/bench"
)

// TestSpecialValues: NaN, +Inf and -Inf in any input propagate as in
// eager, and touch no other batch entry (bench.TestSpecialValues).
func TestSpecialValues(t *testing.T) {
	bench.TestSpecialValues(t, testBackend(t))
}
