// Package bench is the harness of the scan kernels, written once against
// scans.Backend and run by every backend: the conformance matrix
// (ConformanceCases, Parity, TestBackend), which holds each backend to the
// contract's gates, |got - want| <= atol + rtol*|want|, against eager or
// the float64 Reference, NaN never passing; and the benchmarks (Shapes,
// Measure, MemoryGivens) that scanbench reports. A GPU backend's test runs
// the whole matrix in three lines:
//
//	func TestConformance(t *testing.T) {
//		bench.TestBackend(t, vk.New(), testing.Short())
//	}
package bench
