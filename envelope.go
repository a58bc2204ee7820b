package scans

import "fmt"

// Envelope lists the block sizes k and v that the GPU kernels serve.
var Envelope = []int{1, 2, 4, 8, 16}

// InEnvelope reports whether n is one of Envelope's sizes.
func InEnvelope(n int) bool {
	for _, e := range Envelope {
		if n == e {
			return true
		}
	}
	return false
}

// CheckEnvelope returns nil when the GPU kernels serve op at d for element
// type dt, and otherwise a *ScanFallback naming backend and the reason:
//
//	linear_scan, parallel_scan_log  k = v = 1, any D
//	mingru_scan                     k = v = 1, any D
//	matrix_scan                     k = 2, v = 1
//	matrix_affine_scan              k, v in {1, 2, 4, 8, 16}
//	givens_scan                     k in {2, 4, 8, 16}, v = 1
//
// Every T >= 1 is served. A GPU backend adds the limits of its device.
func CheckEnvelope(backend string, op Op, d Dims, dt DType) error {
	fb := func(format string, args ...any) error {
		return &ScanFallback{Backend: backend, Op: op, Reason: fmt.Sprintf(format, args...)}
	}
	if !dt.Valid() {
		return fb("element type %v is not f32, f16 or bf16", dt)
	}
	if d.B < 1 || d.T < 1 || d.N < 1 {
		return fb("dims %v: B, T and N must be >= 1", d)
	}
	switch op {
	case OpLinearScan, OpParallelScanLog, OpMingruScan:
		if d.K != 1 || d.V != 1 {
			return fb("k=%d v=%d: the elementwise scans have k=v=1", d.K, d.V)
		}
	case OpMatrixScan:
		if d.K != 2 || d.V != 1 {
			return fb("k=%d v=%d: matrix_scan has k=2, v=1", d.K, d.V)
		}
	case OpMatrixAffineScan:
		if !InEnvelope(d.K) {
			return fb("k=%d is not in {1,2,4,8,16}", d.K)
		}
		if !InEnvelope(d.V) {
			return fb("v=%d is not in {1,2,4,8,16}", d.V)
		}
	case OpGivensScan:
		if d.K < 2 || !InEnvelope(d.K) {
			return fb("k=%d is not in {2,4,8,16}", d.K)
		}
		if d.V != 1 {
			return fb("v=%d: givens_scan has v=1", d.V)
		}
	default:
		return fb("unknown operation %q", op)
	}
	return nil
}
