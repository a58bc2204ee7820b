package cuda

import (
	"fmt"

	"github.com/mingru/scans"
)

const backendName = "cuda"

// envelope returns nil when the kernels serve op at d for element type dt,
// and a *scans.ScanFallback otherwise.
func envelope(op scans.Op, d scans.Dims, dt scans.DType) error {
	fallback := func(format string, args ...any) error {
		return &scans.ScanFallback{Backend: backendName, Op: op, Reason: fmt.Sprintf(format, args...)}
	}
	if !dt.Valid() {
		return fallback("element type %v is not f32, f16 or bf16", dt)
	}
	if d.B < 1 || d.T < 1 || d.N < 1 {
		return fallback("dims %v: B, T and N must be >= 1", d)
	}
	switch op {
	case scans.OpLinearScan, scans.OpParallelScanLog:
		if d.K != 1 || d.V != 1 {
			return fallback("k=%d v=%d: the elementwise scan has k=v=1", d.K, d.V)
		}
	case scans.OpMatrixScan:
		if d.K != 2 || d.V != 1 {
			return fallback("k=%d v=%d: matrix_scan has k=2, v=1", d.K, d.V)
		}
	case scans.OpMatrixAffineScan:
		if !scans.InEnvelope(d.K) {
			return fallback("k=%d is not in {1,2,4,8,16}", d.K)
		}
		if !scans.InEnvelope(d.V) {
			return fallback("v=%d is not in {1,2,4,8,16}", d.V)
		}
	case scans.OpGivensScan:
		if d.K < 2 || !scans.InEnvelope(d.K) {
			return fallback("k=%d is not in {2,4,8,16}", d.K)
		}
		if d.V != 1 {
			return fallback("v=%d: givens_scan has v=1", d.V)
		}
	default:
		return fallback("unknown operation")
	}
	// Grid sizes: one block per lane, at most 2^31-1 blocks.
	if int64(d.B)*int64(d.N) > 1<<31-1 {
		return fallback("B*N=%d lanes exceed the grid limit", int64(d.B)*int64(d.N))
	}
	return nil
}

// kernelName is the exported name of the kernel that runs op in direction
// dir at d for element type dt, e.g. "matrix_affine_scan_fwd_f32_k8_v8".
// It assumes envelope(op, d, dt) is nil.
func kernelName(op scans.Op, dir scans.Direction, d scans.Dims, dt scans.DType) string {
	name := string(op) + "_fwd_"
	if dir == scans.Backward {
		name = string(op) + "_bwd_"
	}
	name += dt.String()
	switch op {
	case scans.OpMatrixAffineScan:
		name += fmt.Sprintf("_k%d_v%d", d.K, d.V)
	case scans.OpGivensScan:
		name += fmt.Sprintf("_k%d", d.K)
	}
	return name
}
