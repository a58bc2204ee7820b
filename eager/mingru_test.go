package eager_test

import (
	"testing"

	"github.com/mingru/scans/conformance/conformancetest"
	"github.com/mingru/scans/eager"
)

// TestMingruRange: mingru_scan with |k| up to 100 and |x| up to 1.5e4
// stays finite and within its gates against the float64 reference
// (conformancetest.TestMingruRange).
func TestMingruRange(t *testing.T) { conformancetest.TestMingruRange(t, eager.New()) }

// TestMingruNegativeH0: a negative h0 entry makes its lane NaN, and only
// its lane (conformancetest.TestMingruNegativeH0).
func TestMingruNegativeH0(t *testing.T) { conformancetest.TestMingruNegativeH0(t, eager.New()) }
