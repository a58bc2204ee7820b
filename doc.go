// Package scans holds what every backend of the minGRU scans shares:
// element types, tensors, shape checks, errors and the Backend interface
// that eager (pure Go), vk (Vulkan) and cuda implement. The recurrence is
// h_t = A_t h_{t-1} + b_t, forward and backward (vector-Jacobian product):
//
//	LinearScan        a (B,T,D), b (B,T,D), h0 (B,D)            -> h (B,T,D)
//	MatrixScan        A (B,T,N,2,2), b (B,T,N,2), h0 (B,N,2)     -> h (B,T,N,2)
//	MatrixAffineScan  A (B,T,N,k,k), X (B,T,N,k,v), H0 (B,N,k,v) -> H (B,T,N,k,v)
//	ParallelScanLog   log_coeffs (B,T,D), log_values (B,T+1,D)    -> h (B,T,D)
//	GivensScan        theta (B,T,N,k-1), sigma (B,T,N,k), x (B,T,N,k), h0 (B,N,k) -> h (B,T,N,k)
//
// Tensors are dense, row-major, batch first, of f32, f16 or bf16; every
// backend accumulates in f32 and rounds 16-bit outputs to nearest even.
// Initial states are optional (nil means zeros). SPEC.md in the repository
// is the contract. Most programs call the scans through package dispatch:
//
//	a, _ := scans.FromFloat32(aData, B, T, D)
//	b, _ := scans.FromFloat32(bData, B, T, D)
//	h, err := dispatch.LinearScan(a, b, nil)
//
// The op table (Spec) describes each operation once: its arguments, which
// are optional, its results and its envelope. A call is a Call, checked
// once against its row; a Backend runs it through its one entry point,
// Run, and Typed turns Run into the typed methods above. Backends make
// themselves known with Register; dispatch runs on every registered one.
// Adding an operation takes an Op, a row in the table, a typed method, an
// eager kernel, the GPU kernels and their launch rules, and conformance
// cases.
package scans
