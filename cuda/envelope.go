package cuda

import (
	"fmt"

	"github.com/mingru/scans"
)

const backendName = "cuda"

// envelope returns nil when the kernels serve op at d for element type dt
// (the contract's envelope, scans.CheckEnvelope, within the grid's limit of
// one block per lane), and a *scans.ScanFallback otherwise.
func envelope(op scans.Op, d scans.Dims, dt scans.DType) error {
	if err := scans.CheckEnvelope(backendName, op, d, dt); err != nil {
		return err
	}
	if lanes := int64(d.B) * int64(d.N); lanes > 1<<31-1 {
		return &scans.ScanFallback{Backend: backendName, Op: op, Reason: fmt.Sprintf("B*N=%d lanes exceed the grid limit", lanes)}
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
