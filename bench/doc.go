// Package bench times the scan kernels and measures their memory, as
// command scanbench reports them: the contract's benchmark shapes
// (Shapes), inputs drawn from its distributions (Inputs, InputsInit), the
// bytes an operation must move (Traffic), a timed measurement on any
// backend (Measure: device time where the backend has a clock, each run
// after a cache flush where it can flush, warm time and host wall time
// beside), the peak memory of the Givens backward's two paths
// (MemoryGivens), and the machine a result came from (ThisMachine).
//
// The conformance matrix that holds every backend to the contract lives in
// package conformance; the float64 definition it checks eager against in
// package reference.
package bench
