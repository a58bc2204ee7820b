// Package conformancetest runs the conformance matrix and the special-value
// checks of package conformance as subtests of a backend's tests
// (TestBackend, TestSpecialValues, TestGivensAngles, TestHalfValues,
// TestLogRange), with a seed a failure can be replayed from (SeedEnv).
package conformancetest

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/conformance"
	"github.com/mingru/scans/eager"
)

// TestBackend runs the conformance matrix (Cases(quick)) on b
// as subtests, one per case, named by Case.Name, and logs
// "conformance: <device> rows=<n> run=<r> passed=<m>" at the end. It skips, with
// the backend's reason, when b is not available. A backend's test is
// three lines:
//
//	func TestConformance(t *testing.T) {
//		TestBackend(t, vk.New(), testing.Short())
//	}
//
// Each run draws fresh inputs from a time-based seed that it logs; a failing
// subtest logs its seed too (rerun one case with CheckCase, or the whole run
// with MINGRU_TEST_SEED set to it: see TestSeed).
func TestBackend(t *testing.T, b scans.Backend, quick bool) {
	t.Helper()
	TestCases(t, b, conformance.Cases(quick))
}

// TestCases is TestBackend on the given cases (conformance.FilterCases
// picks a part of the matrix).
func TestCases(t *testing.T, b scans.Backend, cases []conformance.Case) {
	t.Helper()
	st := b.Status()
	if !st.Available {
		t.Skipf("conformance: %s not available: %s", b.Name(), st.Reason)
	}
	ref := conformance.ReferenceFor(b)
	seed := TestSeed()
	t.Logf("conformance: %s vs %s, seed %d", st, ref.Name(), seed)
	// A row that -run leaves out is not called; it counts as not run.
	run, passed := 0, 0
	for _, c := range cases {
		called := false
		ok := t.Run(c.Name(), func(t *testing.T) {
			called = true
			r := conformance.CheckCase(b, ref, c, seed)
			if !r.Pass {
				t.Errorf("%s (seed %d)", r.Summary(), r.Seed)
			}
		})
		if called {
			run++
			if ok {
				passed++
			}
		}
	}
	device := st.Device
	if device == "" {
		device = st.Backend
	}
	t.Logf("conformance: %s rows=%d run=%d passed=%d", device, len(cases), run, passed)
}

// SeedEnv names the environment variable that fixes the seed of
// TestBackend and TestSpecialValues, to replay a logged failure.
const SeedEnv = "MINGRU_TEST_SEED"

// TestSeed is the seed a test run draws its inputs from: the unsigned
// integer in MINGRU_TEST_SEED when it holds one, else a fresh time-based
// seed. Tests log it, so any failure can be replayed.
func TestSeed() uint64 {
	if v, err := strconv.ParseUint(strings.TrimSpace(os.Getenv(SeedEnv)), 10, 64); err == nil {
		return v
	}
	return uint64(time.Now().UnixNano())
}

// checkStart begins a check of b against eager: it skips t where b is
// unavailable (with the backend's reason), draws the seed (TestSeed) and
// logs it, and returns eager and the seed.
func checkStart(t *testing.T, b scans.Backend) (scans.Backend, uint64) {
	t.Helper()
	if st := b.Status(); !st.Available {
		t.Skipf("%s not available: %s", b.Name(), st.Reason)
	}
	seed := TestSeed()
	t.Logf("seed %d", seed)
	return eager.New(), seed
}
