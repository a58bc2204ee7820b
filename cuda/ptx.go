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
// op at d for element type dt. matrix_affine_scan has one module per
// element type and k, so that a program JIT-compiles only what it uses.
func moduleOf(op scans.Op, d scans.Dims, dt scans.DType) string {
	if op == scans.OpMatrixAffineScan {
		return fmt.Sprintf("matrix_affine_scan_%v_k%d", dt, d.K)
	}
	return string(op)
}

// The module and name of the empty kernel whose launch DispatchLatency times.
const (
	utilModule  = "util"
	emptyKernel = "empty_kernel"
)

// readPTX returns the embedded PTX of a module.
func readPTX(module string) (string, error) {
	b, err := ptxFS.ReadFile("ptx/" + module + ".ptx")
	if err != nil {
		return "", fmt.Errorf("cuda: no embedded PTX module %q: %w", module, err)
	}
	return string(b), nil
}

// Chunking of the elementwise scans (linear_scan, parallel_scan_log).
const (
	tile      = 32 // channels per lane (kernels/elementwise.cuh TILE)
	maxChunks = 32 // tile*maxChunks = 1024 threads, the block limit
	minChunk  = 16 // steps per chunk below which splitting T does not pay
)

// chunkCount is the number of chunks C into which an elementwise scan cuts
// T, for lanes lanes (B * ceil(D/32) blocks) on a device that keeps
// resident threads in flight at once. C doubles, up to 32, while the grid
// would still fit the device at least twice over (lanes*32*2C <= resident)
// and each chunk keeps at least minChunk steps (T >= minChunk*2C): one
// chunk when T is short or lanes are plentiful, more when a few long
// sequences would leave the GPU idle. Each extra chunk costs one more read
// of its inputs (the aggregate pass) and a fold of at most 31 aggregates.
func chunkCount(T, lanes, resident int) int {
	c := 1
	for c < maxChunks && T >= minChunk*2*c && int64(lanes)*tile*2*int64(c) <= int64(resident) {
		c *= 2
	}
	return c
}
