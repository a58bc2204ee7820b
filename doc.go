// Package scans holds the types shared by every backend of the minGRU scan
// kernels: element types, tensors, shape checks, errors and the Backend
// interface that the eager (pure Go), Vulkan and CUDA backends implement.
//
// A minGRU-family layer's recurrence is the first-order affine map
//
//	h_t = A_t h_{t-1} + b_t
//
// with a scalar per channel (MinGRU in log space, SignedMinGRU), a 2x2 block
// (RotationMinGRU) or a kxk block (GivensMinGRU). Five operations cover them,
// each with a forward and a backward (vector-Jacobian product):
//
//	LinearScan        a (B,T,D), b (B,T,D), h0 (B,D)            -> h (B,T,D)
//	MatrixScan        A (B,T,N,2,2), b (B,T,N,2), h0 (B,N,2)     -> h (B,T,N,2)
//	MatrixAffineScan  A (B,T,N,k,k), X (B,T,N,k,v), H0 (B,N,k,v) -> H (B,T,N,k,v)
//	ParallelScanLog   log_coeffs (B,T,D), log_values (B,T+1,D)    -> h (B,T,D)
//	GivensScan        theta (B,T,N,k-1), sigma (B,T,N,k), x (B,T,N,k), h0 (B,N,k) -> h (B,T,N,k)
//
// Tensors are dense and row-major, batch first. Elements are f32, f16 or
// bf16; every backend accumulates in f32 and rounds to nearest even only when
// it stores an f16 or bf16 output. The initial states (h0, H0) are optional:
// pass nil for zeros.
//
// Most programs import this package for its types and call the scans through
// package dispatch, which picks the fastest correct backend on the machine
// (see MINGRU_SCAN in dispatch's documentation):
//
//	a, _ := scans.FromFloat32(aData, B, T, D)
//	b, _ := scans.FromFloat32(bData, B, T, D)
//	h, err := dispatch.LinearScan(a, b, nil)
package scans
