// Package bench is the conformance and benchmark harness of the scan
// kernels: one matrix of checks, written once against scans.Backend, that
// every backend runs (the eager Go reference, Vulkan, CUDA), and the
// benchmarks that scanbench reports.
//
// # Conformance
//
// ConformanceCases lists the checks: every operation, forward and backward,
// every block size of the GPU envelope, lengths T that straddle the chunk
// boundaries (1, 2, 3, 63, 64, 65, 1000), every element type, inputs drawn as
// in the benchmark, rows outside the envelope that a GPU backend must decline
// with *scans.ScanFallback, and long-memory rows (decays near 1) where errors
// accumulate over T. Inputs generates the data of one check from a seed, as
// the project's contract prescribes (never zeros, the optional initial state
// present in most rows and absent in some).
//
// Parity runs the cases on a backend under test and on a reference and
// compares every output element with the contract's gates,
// |got - want| <= atol + rtol*|want|. NaN never passes. Long-memory rows are
// always held to Reference, an independent float64 implementation, with
// the forward-error bound of a length-T recurrence.
//
// A GPU backend's test runs the whole matrix in three lines:
//
//	func TestConformance(t *testing.T) {
//		bench.TestBackend(t, vk.New(), testing.Short())
//	}
//
// # Benchmarks
//
// Shapes holds the benchmark shapes of the contract (lab, long-T, large);
// Measure times one operation on one backend (device time from
// scans.Instrumented where the backend offers it, wall time otherwise) and
// reports the achieved bandwidth; MemoryGivens compares the peak memory of
// the angle-fused Givens backward with the generic path. Command scanbench
// turns them into JSON and Markdown tables.
package bench
