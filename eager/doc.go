// Package eager is the pure Go reference backend of the minGRU scans: the
// definition every GPU result is held to, and the backend that runs
// everywhere, on any shape. It needs no driver and no cgo, serves every T >=
// 1, every block size k and v (Givens blocks of any k >= 2, odd included)
// and every element type, and never reports a ScanFallback.
//
// # Use
//
// Backend implements scans.Backend on *scans.Host tensors:
//
//	be := eager.New()
//	a, _ := scans.FromFloat32(aData, B, T, D)
//	b, _ := scans.FromFloat32(bData, B, T, D)
//	h, err := be.LinearScan(a, b, nil) // h_t = a_t*h_{t-1} + b_t, h_{-1} = 0
//
// Most programs reach it through package dispatch (MINGRU_SCAN=eager forces
// it; MINGRU_SCAN=auto falls back to it). The generic kernels
// (LinearForward, AffineForward, LogForward, GivensForward and their
// backwards) work on plain slices of float32 or float64: the Backend runs
// them in float32, tests and benchmarks run them in float64 as a reference.
//
// # Numerics
//
// Every operation accumulates in float32, whatever the element type: f16
// and bf16 inputs are widened exactly, the scan runs in float32, and each
// output is rounded to the input's type at the store (nearest, ties to
// even; NaN stays NaN). The backward of a 16-bit call uses the forward
// output as stored, rounded. Each lane is scanned sequentially in T, so the
// forward error of a length-T recurrence is at most about T units of
// float32 rounding relative to the largest state.
//
// ParallelScanLog works in log space: it carries log h per lane,
//
//	log h_{-1} = log_values_0
//	log h_t    = logaddexp(log_coeffs_t + log h_{t-1}, log_values_{t+1})
//
// and stores h_t = exp(log h_t), so that it stays finite where the linear
// form (or exp of a cumulative sum) would overflow or underflow float32,
// e.g. log_coeffs near -50 over thousands of steps, or log values of
// several hundred. Its backward uses log h_{t-1} = log(h_{t-1}) of the
// stored output.
//
// The Givens backward never divides by sigma: it reads h_{t-1} from the
// forward output and recomputes each step's rotations, so it stays accurate
// under strong decay (sigma near 0) over long T. GivensMatrix and
// GivensMatrixBackward materialize the same transition for the generic
// path (AffineForward with v = 1) that checks it.
//
// NaN and Inf propagate as IEEE arithmetic says, and only within their
// lane. An absent initial state enters the arithmetic as zeros
// (h_0 = a_0 * 0 + b_0), so an infinite a_0 still gives NaN, as IEEE
// arithmetic on a zero state does.
//
// # Errors
//
// Bad arguments come back as a *scans.ArgError naming the argument
// (errors.As): a tensor that is not a *scans.Host first, then everything
// the scans.Check* functions reject (shapes, ranks, mixed element types,
// missing inputs), identically to the GPU backends. No panic escapes a
// Backend method; an internal failure is returned as an error.
//
// # Parallelism
//
// Lanes (a batch row times a block or a channel) are independent. Each call
// splits them into chunks of contiguous channels of one batch row and runs
// the chunks on runtime.GOMAXPROCS(0) goroutines; each chunk scans its lanes
// sequentially in T (for the elementwise ops, step by step across the
// chunk's channels, so memory is read contiguously). Small calls run on the
// calling goroutine. Results do not depend on the number of goroutines.
package eager
