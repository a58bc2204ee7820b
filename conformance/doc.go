// Package conformance is the conformance matrix of the scan kernels,
// written once against scans.Backend and run by every backend: Cases lists
// the checks (every operation, direction, element type and block size of
// the envelope, lengths that straddle the kernels' chunk boundaries, shapes
// outside the envelope that a GPU backend must decline with
// *scans.ScanFallback, and long-memory rows), Parity runs them against a
// reference (eager for a GPU backend, the float64 package reference for
// eager) and Compare holds every output element to the contract's gates,
// |got - want| <= atol + rtol*|want|, NaN never passing.
//
// Package conformancetest runs the matrix as subtests; a backend's test is
// three lines:
//
//	func TestConformance(t *testing.T) {
//		conformancetest.TestBackend(t, vk.New(), testing.Short())
//	}
package conformance
