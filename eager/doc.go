// Package eager is the pure Go reference backend of the minGRU scans: the
// definition every GPU result is held to, and the backend that runs
// everywhere. It needs no driver and no cgo, serves every T >= 1, every
// block size k and v (Givens blocks of any even or odd k >= 2) and every
// element type, and never reports a ScanFallback.
//
//	be := eager.New()
//	a, _ := scans.FromFloat32(aData, B, T, D)
//	b, _ := scans.FromFloat32(bData, B, T, D)
//	h, err := be.LinearScan(a, b, nil) // h_t = a_t*h_{t-1} + b_t, h_{-1} = 0
//
// Most programs reach it through package dispatch (MINGRU_SCAN=eager forces
// it; auto falls back to it). The generic kernels (LinearForward,
// AffineForward, LogForward, GivensForward, MingruForward and their
// backwards) work on slices of float32 or float64: the Backend runs them
// in float32, tests run them in float64 as a reference.
//
// Numerics. Every operation accumulates in float32; 16-bit inputs are
// widened exactly and outputs rounded to the input's type at the store
// (nearest, ties to even; NaN stays NaN). Each lane is scanned
// sequentially in T. ParallelScanLog carries log h,
// log h_t = logaddexp(log_coeffs_t + log h_{t-1}, log_values_{t+1}), so
// that it stays finite where the linear form would overflow or underflow.
// The Givens backward never divides by sigma: it reads h_{t-1} from the
// forward output and recomputes each step's rotations. NaN and Inf
// propagate as IEEE arithmetic says, only within their lane; an absent
// initial state enters the arithmetic as zeros.
//
// Errors. Bad arguments come back as a *scans.ArgError naming the argument,
// as on the GPU backends. No panic escapes a Backend method.
//
// Parallelism. Lanes are split into chunks of contiguous channels of one
// batch row, run on runtime.GOMAXPROCS(0) goroutines; results do not
// depend on their number.
package eager
