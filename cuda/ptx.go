package cuda

import (
	"embed"
	"fmt"

	"github.com/mingru/scans"
)

// The kernels' PTX, one module per file, generated from kernels/*.cu by
// nvcc 11.8 (see internal/ptxgen; the manifest records the sources' hashes
// and the compiler). go generate also rewrites kernels/ptxas-sm90.txt, the
// register and spill report for sm_90.
//
//go:generate go run ./internal/ptxgen -ptxas
//go:embed ptx/*.ptx ptx/manifest.txt
var ptxFS embed.FS

// moduleOf names the PTX module (ptx/<name>.ptx) that holds the kernel of
// op at d for element type dt. matrix_affine_scan and givens_scan have one
// module per element type and k, so that a program JIT-compiles only what
// it uses.
func moduleOf(op scans.Op, d scans.Dims, dt scans.DType) string {
	if op == scans.OpMatrixAffineScan || op == scans.OpGivensScan {
		return fmt.Sprintf("%s_%v_k%d", op, dt, d.K)
	}
	return string(op)
}

// The module of the utility kernels, the empty kernel whose launch
// DispatchLatency times and the busy kernel of queued timing.
const (
	utilModule  = "util"
	emptyKernel = "empty_kernel"
	busyKernel  = "busy_kernel"
)

// readPTX returns the embedded PTX of a module.
func readPTX(module string) (string, error) {
	b, err := ptxFS.ReadFile("ptx/" + module + ".ptx")
	if err != nil {
		return "", fmt.Errorf("cuda: no embedded PTX module %q: %w", module, err)
	}
	return string(b), nil
}
