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

// Chunking of T inside a lane (one thread block).
const (
	tile      = 32 // channels per lane of the elementwise scans (kernels/elementwise.cuh TILE)
	maxChunks = 32 // chunks per lane
	minChunk  = 16 // steps per chunk below which splitting T does not pay
	maxShared = 48 << 10
)

// occupancy is what a device keeps in flight at once, over all its SMs:
// threads and thread blocks.
type occupancy struct{ threads, blocks int }

// h200 is an NVIDIA H200's occupancy: 132 SMs of 2048 threads and 32
// blocks each. Tests plan launches with it.
var h200 = occupancy{threads: 132 * 2048, blocks: 132 * 32}

// chunkCount is the number of chunks C into which a scan cuts T, for
// lanes lanes (thread blocks) of width threads per chunk on a device of
// occupancy occ; fits reports whether C chunks fit the kernel's other
// limits (shared memory). C doubles, up to 32, while
//
//   - each chunk keeps at least minChunk steps (T >= minChunk*2C),
//   - the block stays within 1024 threads (width*2C),
//   - the blocks the device runs at once, min(lanes, occ.blocks), still
//     have no more threads than it keeps in flight (x width*2C <=
//     occ.threads),
//
// so C is 1 when T is short or lanes are plentiful, and grows when a few
// long sequences would leave the GPU idle. Each extra chunk costs one more
// read of its inputs (the aggregate pass) and a fold of at most 31
// aggregates.
func chunkCount(T, lanes, width int, occ occupancy, fits func(c int) bool) int {
	live := int64(min(lanes, occ.blocks))
	c := 1
	for c < maxChunks && T >= minChunk*2*c && width*2*c <= 1024 &&
		live*int64(width)*2*int64(c) <= int64(occ.threads) && (fits == nil || fits(2*c)) {
		c *= 2
	}
	return c
}

// affineChunkable mirrors kernels/affine.cuh's AFFINE_CHUNKABLE: the
// forward of matrix_affine_scan chunks T only where carrying the chunk's
// transition product takes at most 64 registers.
func affineChunkable(k, v int) bool { return k*((k+v-1)/v) <= 64 }

// givensChunkable mirrors kernels/givens_scan.cu's GIVENS_CHUNKABLE: the
// Givens scan chunks T only where the chunk's transition product (k*k
// registers) fits.
func givensChunkable(k int) bool { return k*k <= 64 }

// givensShared is the dynamic shared memory in bytes of the Givens
// kernels with c chunks: c * (k*k + k) floats when c > 1.
func givensShared(k, c int) int {
	if c == 1 {
		return 0
	}
	return 4 * c * (k*k + k)
}

// affineShared is the dynamic shared memory in bytes of the affine
// kernels with c chunks: the chunks' aggregates, c * (k*k + k*v) floats
// when c > 1, and for the backward the per-step buffers of dA_t,
// c * 4 * k*v floats.
func affineShared(k, v, c int, bwd bool) int {
	n := 0
	if c > 1 {
		n = c * (k*k + k*v)
	}
	if bwd {
		n += c * 4 * k * v
	}
	return 4 * n
}
